"""Mutation specs against the catalog and their own params.

A Mutation declares a fixed write: `set` (field → "$param" | literal | "@current_user"),
`recordId` ("$param"; a list param makes a batch), `precondition` (field → value that must
hold before writing) and `clear` (field → "$boolParam"; true clears the field). This module
checks that every name refers to something real and writable, then hands the provable
param → field bindings to the shared binding rules (enum domains, option and reference
hints).

Bindings come from `set` and `recordId`, and also from `precondition`: a param compared
with a field before the write is bound to that field exactly as a SQL `field = $n` is.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from basedb.check.bindings import binding_rules
from basedb.check.context import CheckContext
from basedb.check.messages import bounded_list, close_matches, did_you_mean, show_json
from basedb.check.mutation_values import literal_misfit, param_misfit, suggested_kinds
from basedb.protocol.findings import Finding, Hint, pointer
from basedb.sql.model import ParamBinding
from basedb.workspace.declarations import json_type
from basedb.workspace.model import (
    MUTATION_PARAM_KINDS,
    PARAM_NAME_RE,
    RECORD_ID_FIELD,
    Field,
    Mutation,
    MutationSpec,
    Param,
    Table,
    Workspace,
)

CURRENT_USER = "@current_user"
# Field types whose values are user ids, so "@current_user" means something there.
_USER_FIELD_TYPES = frozenset({"user", "created_by", "updated_by"})
# "$name" references a param; other strings (even "$5") are literals.
_REFERENCE_RE = re.compile(r"^\$([A-Za-z][A-Za-z0-9_]{0,63})\Z")
_RECORD_ID_PARAM_KINDS = ("RECORD_ID", "TEXT")


def check_mutations(ctx: CheckContext) -> None:
    """Add findings and hints for every Mutation with a spec object, valid or not: a spec
    whose action is wrong still has names to check (see `Mutation.spec_as_written`)."""
    ws = ctx.workspace
    for function_id in sorted(ws.declarations):
        decl = ws.declarations[function_id]
        spec = decl.spec or decl.spec_as_written if isinstance(decl, Mutation) else None
        if isinstance(decl, Mutation) and spec is not None:
            ctx.extend(list(_check_mutation(decl, spec, ws)))


def _check_mutation(decl: Mutation, spec: MutationSpec, ws: Workspace,
                    ) -> Iterator[Finding | Hint]:
    params = _params_by_name(spec.params)
    # spec.table is None when it is not a name (DECLARATION_INVALID says so already).
    known = ws.catalog_loaded and spec.table is not None
    table = ws.catalog.table(spec.table) if known else None
    if known and table is None:
        yield _unknown_table(decl, spec, ws)
    used: set[str] = set()
    bindings: list[ParamBinding] = []
    for section in ("set", "precondition", "clear"):
        mapping: Mapping[str, Any] = getattr(spec, section)
        for field_name, value in mapping.items():
            at = pointer("spec", section, field_name)
            field = table.field(field_name) if table is not None else None
            if table is not None and field is None:
                yield _unknown_field(decl, table, section, field_name, at)
            elif table is not None and field is not None and section != "precondition" and (
                    field.is_read_only or field.type == "record_id"):
                yield _read_only_field(decl, table, field, section, at)
                field = None  # nothing can be written there; judge no values against it
            if section == "clear":
                yield from _clear_value(decl, params, value, at, used)
                continue
            ref = _reference(value)
            if ref is not None:
                param = _resolve(decl, params, ref, at)
                if isinstance(param, Finding):
                    yield param
                    continue
                used.add(ref)
                if table is not None and field is not None:
                    bindings.append(ParamBinding(param.index, table, field, True))
                    if section == "set":
                        yield from _param_misfit(decl, table, field, param, at)
            elif value == CURRENT_USER:
                if field is not None and field.type not in _USER_FIELD_TYPES:
                    yield _current_user_misplaced(decl, table, field, at)
            elif table is not None and field is not None and field.is_option:
                yield from _literal_options(decl, table, field, value, at)
            elif table is not None and field is not None and section == "set":
                yield from _literal_misfit(decl, table, field, value, at)
    yield from _record_id(decl, spec, params, table, used, bindings)
    if table is not None:
        yield from binding_rules(decl, bindings, ws)
    for name, param in params.items():
        if name not in used:
            yield Hint("param_unused", decl.function_id,
                       f"Parameter {name!r} is declared but referenced nowhere in the spec "
                       "(set, recordId, precondition or clear), so its value is ignored.",
                       decl.file, param.pointer, name)


def _params_by_name(params: tuple[Param, ...]) -> dict[str, Param]:
    # The first declaration of a name wins; repeats are PARAM_NAME_DUPLICATE elsewhere.
    out: dict[str, Param] = {}
    for p in params:
        if isinstance(p.name, str) and PARAM_NAME_RE.match(p.name):
            out.setdefault(p.name, p)
    return out


def _reference(value: Any) -> str | None:
    """The param name of a "$name" reference, or None for any other value."""
    if not isinstance(value, str):
        return None
    m = _REFERENCE_RE.match(value)
    return m.group(1) if m else None


def _resolve(decl: Mutation, params: dict[str, Param], ref: str, at: str,
             ) -> Param | Finding:
    """The param `$ref` names, or a MUTATION_PARAM_UNDECLARED finding."""
    param = params.get(ref)
    if param is not None:
        return param
    declared = list(params)
    return Finding(
        "MUTATION_PARAM_UNDECLARED",
        f"{at} refers to parameter ${ref}, which is not declared in /spec/params "
        f"(declared: {bounded_list(declared)}).{did_you_mean(ref, declared)}",
        decl.file, at, decl.function_id,
        f"Declare {ref!r} in spec.params with a kind and description, or reference one "
        "of the declared parameters.")


def _unknown_table(decl: Mutation, spec: MutationSpec, ws: Workspace) -> Finding:
    names = ws.catalog.table_names
    near = close_matches(str(spec.table), names)
    hint = f" Close matches: {', '.join(map(repr, near))}." if near else ""
    return Finding(
        "MUTATION_TABLE_UNKNOWN",
        f"Table {spec.table!r} is not in catalog.json (tables: {bounded_list(names)}).{hint}",
        decl.file, "/spec/table", decl.function_id,
        "Set spec.table to the name of a bound table; if the table is new, bind it and run "
        "`basedb catalog pull`.")


def _unknown_field(decl: Mutation, table: Table, section: str, name: str, at: str,
                   ) -> Finding:
    names = [f.name for f in table.fields]
    near = close_matches(name, names)
    hint = f" Close matches: {', '.join(map(repr, near))}." if near else ""
    return Finding(
        "MUTATION_FIELD_UNKNOWN",
        f"Field {name!r} in spec.{section} is not a field of table {table.name!r}.{hint}",
        decl.file, at, decl.function_id,
        f"Use a field name of {table.name} from catalog.json (fields: "
        f"{bounded_list(names)}); run `basedb catalog pull` if the field was just added.")


def _read_only_field(decl: Mutation, table: Table, field: Field, section: str, at: str,
                     ) -> Finding:
    what = ("record_id is the record's identity" if field.type == "record_id"
            else f"its type {field.type} is computed by Base")
    verb = "set" if section == "set" else "cleared"
    return Finding(
        "MUTATION_FIELD_READONLY",
        f"Field {table.name}.{field.name} cannot be {verb}: {what} and is read-only.",
        decl.file, at, decl.function_id,
        f"Remove {field.name!r} from spec.{section}; to pick the record to update, use "
        "spec.recordId." if field.type == "record_id" else
        f"Remove {field.name!r} from spec.{section}, or write the source field it is "
        "computed from.")


def _current_user_misplaced(decl: Mutation, table: Table | None, field: Field, at: str,
                            ) -> Finding:
    where = f"{table.name}.{field.name}" if table is not None else field.name
    return Finding(
        "DECLARATION_INVALID",
        f"{at} is \"{CURRENT_USER}\", but {where} is a {field.type} field; "
        f"\"{CURRENT_USER}\" (the caller's user id) only fits user fields.",
        decl.file, at, decl.function_id,
        f"Use \"{CURRENT_USER}\" only on a user field (e.g. an owner or submitter field); "
        "for this field write a literal or a \"$param\".")


def _param_misfit(decl: Mutation, table: Table, field: Field, param: Param, at: str,
                  ) -> Iterator[Finding]:
    why = param_misfit(param, field)
    if why is None:
        return
    yield Finding(
        "DECLARATION_INVALID",
        f"{at} writes ${param.name_str} into {table.name}.{field.name}, but {why}: every "
        "call would fail.", decl.file, at, decl.function_id,
        f"Give {param.name_str!r} a kind that fits this field ({suggested_kinds(field)}), "
        "or write it to another field.")


def _literal_misfit(decl: Mutation, table: Table, field: Field, value: Any, at: str,
                    ) -> Iterator[Finding]:
    expected = literal_misfit(value, field)
    if expected is None:
        return
    yield Finding(
        "DECLARATION_INVALID",
        f"{at} is {json_type(value)}, but {table.name}.{field.name} is a {field.type} field "
        f"that stores {expected}: every call would fail.", decl.file, at, decl.function_id,
        f"Write {expected} there, or a \"$param\" reference.")


def _literal_options(decl: Mutation, table: Table, field: Field, value: Any, at: str,
                     ) -> Iterator[Finding]:
    if value is None:
        return
    items = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
    for i, item in items:
        if isinstance(item, str) and item in field.options:
            continue
        near = close_matches(item, field.options) if isinstance(item, str) else []
        shown = repr(item) if isinstance(item, str) else f"{item!r} ({json_type(item)})"
        yield Finding(
            "ENUM_OUT_OF_DOMAIN",
            f"Literal value {shown} is not an option of field {table.name}.{field.name} "
            f"(options: {bounded_list(field.options, limit=20, keep_order=True)}).",
            decl.file, at if i is None else f"{at}/{i}", decl.function_id,
            "Write an existing option name"
            + (f", e.g. {', '.join(map(repr, near))}" if near else "")
            + "; run `basedb catalog pull` if the options changed.")


def _clear_value(decl: Mutation, params: dict[str, Param], value: Any, at: str,
                 used: set[str]) -> Iterator[Finding]:
    fix = ("Map the field to a BOOL parameter, e.g. \"clear\": {\"remark\": \"$clearRemark\"} "
           "with {\"name\": \"clearRemark\", \"kind\": \"BOOL\", …}; true clears the field.")
    ref = _reference(value)
    if ref is None:
        yield Finding("DECLARATION_INVALID",
                      f"{at} is {show_json(value)}; clear values must be a \"$param\" reference "
                      "to a BOOL parameter.", decl.file, at, decl.function_id, fix)
        return
    param = _resolve(decl, params, ref, at)
    if isinstance(param, Finding):
        yield param
        return
    used.add(ref)
    if param.kind != "BOOL" or param.is_array:
        yield Finding("DECLARATION_INVALID",
                      f"{at} refers to ${ref}, whose kind is {show_json(param.kind)}"
                      f"{' (a list)' if param.list is True else ''}; clear needs a single "
                      "BOOL parameter that says whether to clear the field.",
                      decl.file, at, decl.function_id, fix)


def _record_id(decl: Mutation, spec: MutationSpec, params: dict[str, Param],
               table: Table | None, used: set[str], bindings: list[ParamBinding],
               ) -> Iterator[Finding]:
    if spec.record_id is None:
        return
    at = "/spec/recordId"
    ref = _reference(spec.record_id)
    if spec.action == "create":
        # A create takes no recordId (DECLARATION_INVALID already says so); its value is
        # not judged, and the param it names is not also reported as unused.
        if ref is not None and ref in params:
            used.add(ref)
        return
    if ref is None:
        yield Finding(
            "DECLARATION_INVALID",
            f"/spec/recordId is {show_json(spec.record_id)}, which is not a \"$param\" reference "
            "(a $ followed by a parameter name).", decl.file, at, decl.function_id,
            "Set spec.recordId to \"$recordId\" and declare that param with kind RECORD_ID.")
        return
    param = _resolve(decl, params, ref, at)
    if isinstance(param, Finding):
        yield param
        return
    used.add(ref)
    if table is not None:
        bindings.append(ParamBinding(param.index, table, RECORD_ID_FIELD, True))
    kind = param.kind
    verb = spec.action if spec.action in ("update", "delete") else "write"
    if kind in MUTATION_PARAM_KINDS and param.element_kind not in _RECORD_ID_PARAM_KINDS:
        yield Finding(
            "DECLARATION_INVALID",
            f"/spec/recordId refers to ${ref}, whose kind is {kind}; the record to "
            f"{verb} is picked by a RECORD_ID (or TEXT) parameter.",
            decl.file, at, decl.function_id,
            f"Declare {ref!r} with \"kind\": \"RECORD_ID\" (add \"list\": true to "
            f"{verb} several records in one batch).")

