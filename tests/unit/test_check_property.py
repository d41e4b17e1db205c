"""Property: `check` survives any declarations and reports only well-formed findings.

Hypothesis writes random workspaces: function.json documents that are random JSON or
nearly-right declarations (random param names, kinds, enums, descriptions), main.sql
built from a small grammar of real fragments mixed with junk, Mutation specs pointing at
real and unknown tables and fields, FaaS schemas, and random agent-tools documents.
Whatever it writes, check_workspace must not raise, every finding must carry a known
code, a file and a JSON Pointer string, and every reporter must render the result.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from basedb.check.reporters import FORMATS, render
from basedb.check.run import check_workspace
from basedb.contracts import stale_findings
from basedb.protocol.findings import ERROR_CODES, HINT_CODES
from basedb.workspace import load_workspace
from basedb.workspace.model import MUTATION_PARAM_KINDS

CASE = Path(__file__).resolve().parents[1] / "cases" / "positive" / "task_site"
CATALOG = json.loads((CASE / "catalog.json").read_text(encoding="utf-8"))
TABLES = [t["name"] for t in CATALOG["tables"]]
FIELDS = sorted({f["name"] for t in CATALOG["tables"] for f in t["fields"]} | {"record_id"})

json_scalars = (st.none() | st.booleans() | st.integers(-10**6, 10**6)
                | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12))
json_values = st.recursive(
    json_scalars,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=15,
)



def mostly(usual: st.SearchStrategy[Any], odd: st.SearchStrategy[Any],
           ) -> st.SearchStrategy[Any]:
    """`usual` nine times in ten, `odd` otherwise (one_of alone would split evenly)."""
    return st.integers(0, 9).flatmap(lambda n: odd if n == 0 else usual)


identifiers = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,10}", fullmatch=True)
function_ids = mostly(identifiers, st.sampled_from(["bad-id", "9lives", "x y", "日本"]))
param_names = mostly(identifiers, st.sampled_from(["", " ", "task-id", "1st", "名字"])
                     | st.none() | st.integers())
kinds = mostly(st.sampled_from(MUTATION_PARAM_KINDS),
               st.sampled_from(["STRING", "text", "INT[]", "ARRAY<TEXT>", ""]) | json_scalars)
descriptions = mostly(
    st.sampled_from(["The status the member chose", "Task record id: call listTasks and pass "
                     "rows[].task_id", "Project record id picked by the member"]),
    st.text(max_size=30) | st.none() | st.sampled_from(["   ", "short"]))
enums = mostly(st.lists(st.sampled_from(["Todo", "Doing", "Done", "P0", "P1", "bug", "Nope"]),
                        max_size=4),
               st.lists(json_scalars, max_size=4) | json_scalars)


@st.composite
def params(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    param: dict[str, Any] = {}
    for key, values in (("name", param_names), ("kind", kinds),
                        ("description", descriptions), ("enum", enums),
                        ("required", st.booleans() | json_scalars),
                        ("list", st.booleans() | json_scalars)):
        if key in ("name", "kind", "description") or draw(st.integers(0, 3)) == 0:
            param[key] = draw(values)
    return param


def quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


sql_tables = mostly(st.sampled_from(TABLES), st.sampled_from(["Sprints", "任务", ""]))
sql_fields = mostly(st.sampled_from(FIELDS), st.sampled_from(["Points", "名字", "x\"y"]))
placeholders = mostly(st.integers(1, 2), st.integers(0, 5)).map(lambda n: f"${n}")
conditions = st.one_of(
    st.tuples(sql_fields, placeholders).map(lambda t: f"{quoted(t[0])} = {t[1]}"),
    st.tuples(placeholders, sql_fields).map(
        lambda t: f"({t[0]} IS NULL OR {quoted(t[1])} = {t[0]})"),
    st.tuples(sql_fields, placeholders, placeholders).map(
        lambda t: f"{quoted(t[0])} IN ({t[1]}, {t[2]})"),
    st.tuples(sql_fields, placeholders).map(lambda t: f"{quoted(t[0])} LIKE '%' || {t[1]}"),
    sql_fields.map(lambda f: f"{quoted(f)} = CURRENT_USER_ID()"),
)
junk = mostly(st.just(""), st.sampled_from([
    ";", "DELETE FROM \"Tasks\"", "PRAGMA x", "(", "'", "--", "/*", "; SELECT 1",
    "ATTACH 'x' AS y", "UNION SELECT 1", "$", "$0", "WITH"]) | st.text(max_size=10))


@st.composite
def sql_texts(draw: st.DrawFn) -> str:
    columns = ", ".join(quoted(f) for f in draw(st.lists(sql_fields, min_size=1, max_size=3)))
    sql = f"SELECT {columns} FROM {quoted(draw(sql_tables))}"
    if draw(st.booleans()):
        other, field = quoted(draw(sql_tables)), quoted(draw(sql_fields))
        sql += f' AS t JOIN {other} AS u ON t."record_id" = u.{field}'
    where = draw(st.lists(conditions, max_size=3))
    if where:
        sql += " WHERE " + " AND ".join(where)
    if draw(st.booleans()):
        sql = f"WITH c AS ({sql}) SELECT * FROM c"
    if draw(st.booleans()):
        sql += " LIMIT " + draw(placeholders)
    return sql + " " + draw(junk)


@st.composite
def mutation_docs(draw: st.DrawFn) -> Any:
    if draw(st.integers(0, 9)) == 0:
        return draw(json_values)
    declared = draw(st.lists(params(), max_size=3))
    names = [p.get("name") for p in declared if isinstance(p, dict)]
    set_values = mostly(
        st.sampled_from([f"${n}" for n in names if isinstance(n, str)] or ["$x"]),
        st.sampled_from(["@current_user", "Todo", "$undeclared"]) | json_scalars)
    spec: dict[str, Any] = {
        "table": draw(mostly(st.sampled_from(TABLES), sql_tables | json_scalars)),
        "action": draw(mostly(st.sampled_from(["create", "update", "delete"]),
                              st.just("upsert") | json_scalars)),
        "params": declared,
        "set": draw(mostly(st.dictionaries(sql_fields, set_values, max_size=3), json_scalars)),
    }
    if draw(st.booleans()):
        spec["recordId"] = draw(set_values)
    if draw(st.booleans()):
        spec["precondition"] = draw(st.dictionaries(sql_fields, set_values, max_size=2))
    if draw(st.booleans()):
        spec["clear"] = draw(st.dictionaries(sql_fields, set_values, max_size=2))
    return {"name": draw(st.text(max_size=10)), "description": draw(descriptions), "spec": spec}


@st.composite
def faas_docs(draw: st.DrawFn) -> Any:
    properties = draw(st.dictionaries(
        st.text(max_size=8),
        st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "strnig"])},
                              optional={"description": descriptions}) | json_values,
        max_size=3))
    schema = draw(st.sampled_from([{"type": "object", "properties": properties},
                                   {"type": "object", "properties": properties,
                                    "required": [*list(properties)[:1], "ghost"],
                                    "oneOf": [{"required": list(properties)[:1]}]}])
                  | json_values)
    return {"name": "f", "description": draw(descriptions), "inputSchema": schema,
            **({"timeoutMs": draw(json_scalars)} if draw(st.booleans()) else {})}


@st.composite
def workspaces(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(0, 3))):
        fid = draw(function_ids)
        doc = draw(mostly(st.fixed_dictionaries({
            "name": st.text(max_size=10), "description": descriptions,
            "meta": mostly(st.fixed_dictionaries({"params": st.lists(params(), max_size=3)}),
                           json_values)}), json_values))
        files[f"database-functions/{fid}/function.json"] = json.dumps(doc)
        files[f"database-functions/{fid}/main.sql"] = draw(sql_texts())
    for _ in range(draw(st.integers(0, 2))):
        files[f"mutations/{draw(function_ids)}/function.json"] = json.dumps(draw(mutation_docs()))
    for _ in range(draw(st.integers(0, 1))):
        fid = draw(function_ids)
        files[f"faas/{fid}/function.json"] = json.dumps(draw(faas_docs()))
        files[f"faas/{fid}/index.mjs"] = "export default async () => ({ code: 0 });\n"
    for _ in range(draw(st.integers(0, 1))):
        ai_doc = mostly(st.fixed_dictionaries({
            "name": st.text(max_size=8), "description": descriptions,
            "capability": st.sampled_from(["text", ""]) | json_scalars,
            "prompt": st.text(max_size=20), "inputSchema": faas_docs().map(
                lambda d: d["inputSchema"])}), json_values)
        files[f"ai/{draw(function_ids)}/function.json"] = json.dumps(draw(ai_doc))
    if draw(st.booleans()):
        ids = [p.split("/")[1] for p in files]
        files["agent-tools.json"] = json.dumps(draw(
            st.fixed_dictionaries({"exclude": st.lists(st.sampled_from(ids or ["none"])
                                                       | st.text(max_size=6), max_size=3)})
            | st.dictionaries(st.sampled_from(["exclude", "include", "other"]), json_values,
                              max_size=2)
            | json_values))
    return files


@pytest.mark.slow
@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(files=workspaces(), skip_ai=st.booleans())
def test_check_never_raises_and_findings_are_well_formed(files: dict[str, str],
                                                         skip_ai: bool) -> None:
    root = Path(tempfile.mkdtemp(prefix="basedb-property-"))
    try:
        shutil.copy(CASE / "base-database.jsonc", root / "base-database.jsonc")
        shutil.copy(CASE / "catalog.json", root / "catalog.json")
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        result = check_workspace(load_workspace(root, skip_ai=skip_ai),
                                 contracts=stale_findings, skip_ai=skip_ai)
        for finding in result.errors:
            assert finding.code in ERROR_CODES
            assert isinstance(finding.file, str) and finding.file
            assert isinstance(finding.pointer, str)
            assert finding.pointer == "" or finding.pointer.startswith("/")
            assert finding.message.strip()
        for hint in result.hints:
            assert hint.code in HINT_CODES
            assert isinstance(hint.file, str) and hint.file
            assert isinstance(hint.pointer, str)
        json.dumps(result.to_dict())
        for fmt in FORMATS:
            assert render(result, fmt, root=root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
