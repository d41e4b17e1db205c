"""FaaS functions of the generated workspace: JSON Schema inputs and real handlers.

Schemas use what authors reach for: enums, nested objects, arrays of objects, formats and
bounds, and `oneOf` branches for conditionally required inputs; every top-level property
has a description. Handlers use the fixed record routes (`ctx.records`) and answer
`{code, msg, data}` with the platform's message template on refusals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.workload.catalog import GenTable
from bench.workload.common import Draft, Naming, a_noun, column_alias, plural_noun

Pattern = Callable[[Naming, GenTable], Draft]

DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"

_FAIL_HELPER = """
// A result for a call that was refused before anything was written.
function failure(code, reason, parameter, received, fix) {
  const shown = received === undefined || received === null
    ? "null" : JSON.stringify(String(received).slice(0, 64));
  const msg = `${reason}. Parameter: ${parameter} (received ${shown}). Fix: ${fix}. `
    + "Executed: no. Retry: retry after fixing.";
  return { code, msg: msg.slice(0, 500), data: { parameter } };
}
"""


def draft(ident: str, description: str, schema: dict[str, Any], handler: str,
          timeout_ms: int) -> Draft:
    declaration = {"name": ident, "description": description, "timeoutMs": timeout_ms,
                   "inputSchema": schema}
    helper = _FAIL_HELPER if "failure(" in handler else ""
    return Draft("faas", ident, declaration, handler.strip() + "\n" + helper)


def _js(value: Any) -> str:
    import json

    return json.dumps(value, ensure_ascii=False)


def manage(n: Naming, t: GenTable) -> Draft:
    title, due, status = t.role("title"), t.role("due"), t.role("status")
    schema = {
        "type": "object",
        "description": f"Open a new {t.spec.noun} or close an existing one",
        "properties": {
            "action": {"type": "string", "enum": ["open", "close"],
                       "description": f"open creates {a_noun(t)}; close ends one"},
            "title": {"type": "string", "minLength": 1, "maxLength": 200,
                      "description": f"For open: the {title.name.lower()} to show"},
            "due": {"type": "string", "pattern": DATE_PATTERN,
                    "description": f"For open: {due.name.lower()} as YYYY-MM-DD"},
            "recordId": {"type": "string", "description": n.record_id_hint(t, "For close: "
                         f"the {t.spec.noun} to close")},
            "reason": {"type": "string", "maxLength": 500,
                       "description": "Optional note kept with the change for auditing"},
        },
        "required": ["action"],
        "additionalProperties": False,
        "oneOf": [
            {"properties": {"action": {"const": "open"}}, "required": ["title", "due"]},
            {"properties": {"action": {"const": "close"}}, "required": ["recordId"]},
        ],
    }
    handler = f"""
// manage{t.spec.ident}: open {a_noun(t)} or close one, with the rules a schema cannot say.
const TABLE = {_js(t.name)};

export default async function (input, ctx) {{
  if (input.action === "open") {{
    const day = new Date(`${{input.due}}T00:00:00Z`);
    if (Number.isNaN(day.getTime())) {{
      return failure(40001, "The date does not exist", "/params/due", input.due,
        "pass a real calendar day as YYYY-MM-DD");
    }}
    const created = await ctx.records.create(TABLE, {{
      {_js(title.name)}: input.title.trim(),
      {_js(due.name)}: `${{input.due}} 00:00:00`,
      {_js(status.name)}: {_js(status.options[0])},
    }});
    return {{ code: 0, msg: "ok", data: {{ recordId: created.record_id }} }};
  }}
  const current = await ctx.records.get(TABLE, input.recordId);
  if (current.fields[{_js(status.name)}] === {_js(status.options[-1])}) {{
    return {{ code: 0, msg: "ok", data: {{ recordId: input.recordId, unchanged: true }} }};
  }}
  await ctx.records.update(TABLE, input.recordId, {{
    {_js(status.name)}: {_js(status.options[-1])},
  }});
  return {{ code: 0, msg: "ok", data: {{ recordId: input.recordId, closedBy: ctx.caller.id }} }};
}}
"""
    return draft(f"manage{t.spec.ident}",
                 f"Opens a new {t.spec.noun} or closes an existing one (write); the server "
                 f"checks the date and skips {plural_noun(t)} already closed. Use it for the "
                 f"{t.spec.noun} lifecycle; to edit fields use edit{t.spec.ident}.",
                 schema, handler, 10_000)


def import_rows(n: Naming, t: GenTable) -> Draft:
    title, amount, tags = t.role("title"), t.role("amount"), t.role("tags")
    schema = {
        "type": "object",
        "properties": {
            "items": {
                "type": "array", "minItems": 1, "maxItems": 200,
                "description": f"The {plural_noun(t)} to import, 1 to 200 per call",
                "items": {
                    "type": "object",
                    "required": ["title"],
                    "additionalProperties": False,
                    "properties": {
                        "title": {"type": "string", "minLength": 1,
                                  "description": f"{title.name} of the {t.spec.noun}"},
                        "amount": {"type": ["number", "null"], "minimum": 0,
                                   "description": f"{amount.name} of the {t.spec.noun}; "
                                                  "null leaves it empty"},
                        "tags": {"type": "array", "uniqueItems": True,
                                 "items": {"type": "string", "enum": list(tags.options)},
                                 "description": "Tags from the field's options"},
                    },
                },
            },
            "mode": {"type": "string", "enum": ["append", "skipExisting"],
                     "description": "append adds every item; skipExisting skips titles that "
                                    "already exist"},
            "dryRun": {"type": "boolean", "default": False,
                       "description": "true validates and counts without writing anything"},
        },
        "required": ["items", "mode"],
        "additionalProperties": False,
    }
    handler = f"""
// import{t.spec.plural}: bulk-create {plural_noun(t)} from a client-side file import.
const TABLE = {_js(t.name)};

export default async function (input, ctx) {{
  let items = input.items;
  if (input.mode === "skipExisting") {{
    const page = await ctx.records.list(TABLE, {{ limit: 200 }});
    const known = new Set(page.data.map((row) => row[0]));
    items = items.filter((item) => !known.has(item.title));
  }}
  if (input.dryRun) {{
    return {{ code: 0, msg: "ok", data: {{ wouldCreate: items.length, written: 0 }} }};
  }}
  if (items.length === 0) {{
    return {{ code: 0, msg: "ok", data: {{ wouldCreate: 0, written: 0 }} }};
  }}
  const rows = items.map((item) => ({{
    {_js(title.name)}: item.title,
    {_js(amount.name)}: item.amount ?? null,
    {_js(tags.name)}: item.tags ?? [],
  }}));
  const created = await ctx.records.batchCreate(TABLE, rows);
  return {{ code: 0, msg: "ok", data: {{ written: created.record_id_list.length }} }};
}}
"""
    return draft(f"import{t.spec.plural}",
                 f"Imports up to 200 {plural_noun(t)} at once, optionally skipping titles "
                 f"that exist (write; dryRun only counts). Use it for spreadsheet imports; "
                 f"for one record use create{t.spec.ident}.", schema, handler, 60_000)


def notify_owners(n: Naming, t: GenTable) -> Draft:
    status = t.role("status")
    schema = {
        "type": "object",
        "properties": {
            "filter": {
                "type": "object",
                "description": f"Which {plural_noun(t)} to notify about",
                "properties": {
                    "statuses": {"type": "array", "minItems": 1,
                                 "items": {"type": "string", "enum": list(status.options)}},
                    "dueBefore": {"type": "string", "pattern": DATE_PATTERN},
                },
                "required": ["statuses"],
                "additionalProperties": False,
            },
            "channel": {"type": "string", "enum": ["chat", "email"],
                        "description": "Where owners receive the reminder"},
            "message": {"type": "string", "minLength": 1, "maxLength": 1000,
                        "description": "The reminder text, without greetings or signature"},
        },
        "required": ["filter", "channel", "message"],
        "additionalProperties": False,
    }
    handler = f"""
// notify{t.spec.ident}Owners: count the owners a reminder would reach and queue it.
const TABLE = {_js(t.name)};
const STATUS = {_js(status.name)};

export default async function (input, ctx) {{
  const wanted = new Set(input.filter.statuses);
  const page = await ctx.records.list(TABLE, {{ limit: 200 }});
  const statusColumn = page.fields.indexOf(STATUS);
  const matching = page.data.filter((row) => wanted.has(row[statusColumn]));
  if (matching.length === 0) {{
    return failure(40401, "No record matches the filter", "/params/filter/statuses",
      input.filter.statuses.join(","), "widen the statuses or the date");
  }}
  return {{
    code: 0,
    msg: "ok",
    data: {{ channel: input.channel, records: matching.length, queuedBy: ctx.caller.id }},
  }};
}}
"""
    return draft(f"notify{t.spec.ident}Owners",
                 f"Sends a reminder to the owners of {plural_noun(t)} matching a status and "
                 f"date filter (write: queues messages). Use it for nudges; to list the "
                 f"{plural_noun(t)} first use {n.lister(t)}.", schema, handler, 20_000)


def recalculate(n: Naming, t: GenTable) -> Draft:
    amount = t.role("amount")
    schema = {
        "type": "object",
        "description": f"Recalculate {amount.name.lower()} for one record or a date range",
        "properties": {
            "recordId": {"type": "string", "description": n.record_id_hint(t)},
            "from": {"type": "string", "pattern": DATE_PATTERN,
                     "description": "First day of the range, YYYY-MM-DD"},
            "to": {"type": "string", "pattern": DATE_PATTERN,
                   "description": "Last day of the range (inclusive), YYYY-MM-DD"},
            "rounding": {"type": "string", "enum": ["none", "integer", "cents"],
                         "default": "cents",
                         "description": "How results are rounded before they are written"},
        },
        "oneOf": [{"required": ["recordId"]}, {"required": ["from", "to"]}],
        "additionalProperties": False,
    }
    handler = f"""
// recalculate{t.spec.ident}Totals: round the stored amounts of one record or a page of them.
const TABLE = {_js(t.name)};
const AMOUNT = {_js(amount.name)};
const ROUNDING = {{ none: (x) => x, integer: Math.round, cents: (x) => Math.round(x * 100) / 100 }};

export default async function (input, ctx) {{
  const round = ROUNDING[input.rounding ?? "cents"];
  if (input.recordId) {{
    const record = await ctx.records.get(TABLE, input.recordId);
    const value = record.fields[AMOUNT];
    if (typeof value !== "number") {{
      return {{ code: 0, msg: "ok", data: {{ updated: 0 }} }};
    }}
    await ctx.records.update(TABLE, input.recordId, {{ [AMOUNT]: round(value) }});
    return {{ code: 0, msg: "ok", data: {{ updated: 1 }} }};
  }}
  if (input.to < input.from) {{
    return failure(40001, "The range ends before it starts", "/params/to", input.to,
      `pass a day on or after ${{input.from}}`);
  }}
  const page = await ctx.records.list(TABLE, {{ limit: 200 }});
  const column = page.fields.indexOf(AMOUNT);
  let updated = 0;
  for (let i = 0; i < page.data.length; i += 1) {{
    const value = page.data[i][column];
    if (typeof value === "number" && round(value) !== value) {{
      await ctx.records.update(TABLE, page.record_id_list[i], {{ [AMOUNT]: round(value) }});
      updated += 1;
    }}
  }}
  return {{ code: 0, msg: "ok", data: {{ updated }} }};
}}
"""
    return draft(f"recalculate{t.spec.ident}Totals",
                 f"Recomputes and rounds the {amount.name.lower()} of one {t.spec.noun} or of "
                 f"those in a date range (write). Maintenance only; not for reading values, "
                 f"use {n.lister(t)} for that.", schema, handler, 120_000)


def export_rows(n: Naming, t: GenTable) -> Draft:
    roles = ["title", "status", "category", "owner", "amount", "due"]
    columns = [column_alias(t.role(r)) if r != "owner" else n.owner_column(t) for r in roles]
    schema = {
        "type": "object",
        "properties": {
            "format": {"type": "string", "enum": ["csv", "json"],
                       "description": "File format of the export"},
            "columns": {"type": "array", "minItems": 1, "uniqueItems": True,
                        "items": {"type": "string", "enum": columns},
                        "description": "Columns to include, in order"},
            "filter": {
                "type": "object",
                "description": "Optional filter; leave it out to export every record",
                "properties": {
                    "statuses": {"type": "array",
                                 "items": {"type": "string",
                                           "enum": list(t.role("status").options)}},
                    "ownerId": {"type": "string"},
                },
                "additionalProperties": False,
            },
        },
        "required": ["format", "columns"],
        "additionalProperties": False,
    }
    field_of = {column: t.role(role).name for column, role in zip(columns, roles, strict=True)}
    handler = f"""
// export{t.spec.plural}: one page of {plural_noun(t)} as CSV or JSON for download.
const TABLE = {_js(t.name)};
const FIELD_OF = {_js(field_of)};

export default async function (input, ctx) {{
  const page = await ctx.records.list(TABLE, {{ limit: 200 }});
  const index = input.columns.map((column) => page.fields.indexOf(FIELD_OF[column]));
  const rows = page.data.map((row) => index.map((i) => (i < 0 ? null : row[i])));
  if (input.format === "json") {{
    return {{ code: 0, msg: "ok", data: {{ columns: input.columns, rows }} }};
  }}
  const quote = (cell) => `"${{String(cell ?? "").replaceAll('"', '""')}}"`;
  const text = [input.columns, ...rows].map((row) => row.map(quote).join(",")).join("\\n");
  return {{ code: 0, msg: "ok", data: {{ csv: text, rows: rows.length }} }};
}}
"""
    return draft(f"export{t.spec.plural}",
                 f"Exports {plural_noun(t)} with chosen columns as CSV or JSON (read-only). "
                 f"Use it for downloads; for on-screen lists use {n.lister(t)}.", schema,
                 handler, 30_000)


PATTERNS: tuple[Pattern, ...] = (manage, export_rows, notify_owners, import_rows, recalculate)
# FaaS kept away from external agents (agent-tools.json): bulk and maintenance jobs.
INTERNAL_PREFIXES = ("import", "recalculate")


def generate_faas(n: Naming, count: int) -> list[Draft]:
    drafts = []
    for index in range(count):
        table = n.active[index % len(n.active)]
        pattern = PATTERNS[(index // len(n.active) + index) % len(PATTERNS)]
        drafts.append(pattern(n, table))
    return drafts
