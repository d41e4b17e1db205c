"""A deployed function judged against the live catalog: its schemaStatus, generated
inputSchema, compiled validator and, for Database Functions and Mutations, what it runs.

A deployment is immutable, but the tables under it are not: a field can be removed or
an option renamed after the deploy. So every function is re-validated, with the very
validators `basedb check` and the draft upload use, against the catalog it will run on.
The platform keeps each plan in a memo keyed by (deployment id, function id, catalog
revision), which makes listing, describing and invoking cheap until a table, field or
binding changes.

schemaStatus (upstream agent-tools.md):
    ready          callable; params are validated against `input_schema`
    missing        a FaaS (or AI Function) without inputSchema; input passes unvalidated
    needs_upgrade  a Database Function or Mutation whose params lack names or
                   descriptions (legacy positional declarations); not callable
    unavailable    it no longer validates against the live catalog; not callable
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from basedb.check.context import CheckContext
from basedb.check.declarations import check_declarations
from basedb.check.mutations import check_mutations
from basedb.check.sql.rules import check_database_functions
from basedb.core.json_schema import schema_patterns
from basedb.core.memo import Memo
from basedb.core.schema_regex import pattern_problem
from basedb.core.text_search import named_table
from basedb.platform.domain.bounded_schema import bounded_class
from basedb.platform.domain.fast_schema import FastValidator
from basedb.platform.domain.revision import LiveCatalog
from basedb.platform.domain.runtimes.mutation import MutationPlan, mutation_bindings, plan_mutation
from basedb.platform.domain.schemas import (
    MUTATION_OUTPUT_SCHEMA,
    ParamSpec,
    param_specs,
    query_output_schema,
    schema_from_specs,
)
from basedb.platform.domain.snapshots import Snapshot
from basedb.protocol import SchemaStatus, clip
from basedb.sql.sqlite.query import CompiledQuery, CompileError
from basedb.workspace.model import (
    AgentToolsConfig,
    AIFunction,
    AnyDeclaration,
    Catalog,
    DatabaseFunction,
    FaaS,
    FunctionKind,
    Mutation,
    Workspace,
)

# Findings that mean "params cannot be passed by name": the declaration predates names.
UPGRADE_CODES = frozenset({"PARAM_NAME_MISSING", "PARAM_NAME_INVALID", "PARAM_NAME_DUPLICATE",
                           "PARAM_DESCRIPTION_MISSING"})
# Findings that say the catalog changed under the function.
CATALOG_CODES = frozenset({"SQL_NO_BOUND_TABLE", "SQL_UNKNOWN_TABLE", "SQL_UNKNOWN_FIELD",
                           "MUTATION_TABLE_UNKNOWN", "MUTATION_FIELD_UNKNOWN",
                           "MUTATION_FIELD_READONLY", "ENUM_OUT_OF_DOMAIN"})
_REASON_CHARS = 240

MISSING_HINT = ("This function declares no inputSchema. Decide its input from the "
                "description; if the parameters cannot be determined, stop and say so. Its "
                "author can add inputSchema to function.json and redeploy.")
UPGRADE_HINT = ("This function still uses legacy positional parameters without names or "
                "descriptions. Do not guess values or call it: its author must upgrade the "
                "CLI, give every parameter a name and a description, and redeploy. Upgrading "
                "or retrying on the caller's side does not help.")
UNAVAILABLE_HINT = ("This function no longer validates against the site's tables ({reason}). "
                    "Tell the user its author must fix it and redeploy; do not retry.")


@dataclass(frozen=True, slots=True, eq=False)
class FunctionPlan:
    deployment_id: str
    function_id: str
    kind: FunctionKind
    name: str
    description: str
    status: SchemaStatus
    status_hint: str | None
    declaration: AnyDeclaration | None
    revision: int
    input_schema: dict[str, Any] | None = None  # None: nothing to validate against
    validator: Any = None  # a jsonschema validator of input_schema
    specs: tuple[ParamSpec, ...] = ()  # Database Functions and Mutations
    compiled: CompiledQuery | None = None
    mutation: MutationPlan | None = None
    output_schema: dict[str, Any] | None = None
    # The catalog tables it works on, the main one first: a query's tables in the order
    # it names them, a Mutation's table, the table a FaaS or AI Function's id (or else
    # its description) names. Search and the Skill's index group functions by them.
    tables: tuple[str, ...] = ()

    @property
    def ready(self) -> bool:
        return self.status == SchemaStatus.READY


PlanMemo = Memo[tuple[str, str, int], FunctionPlan]
"""Function plans by (deployment id, function id, catalog revision)."""


def function_plan(snapshot: Snapshot, function_id: str, live: LiveCatalog,
                  memo: PlanMemo) -> FunctionPlan:
    """The plan of one function of the snapshot (which must contain it) at `live`."""
    return memo.get_or_build((snapshot.deployment_id, function_id, live.revision),
                             lambda: _build(snapshot, function_id, live))


def _build(snapshot: Snapshot, function_id: str, live: LiveCatalog) -> FunctionPlan:
    item = snapshot.functions[function_id]
    decl = snapshot.declarations.get(function_id)
    base: dict[str, Any] = {"deployment_id": snapshot.deployment_id,
                            "function_id": function_id, "kind": item.kind,
                            "declaration": decl, "revision": live.revision}
    if decl is None:
        raw_name = item.declaration.get("name") if isinstance(item.declaration, dict) else None
        return FunctionPlan(**base, name=raw_name if isinstance(raw_name, str) else function_id,
                            description="", status=SchemaStatus.UNAVAILABLE,
                            status_hint=UNAVAILABLE_HINT.format(
                                reason="its deployed declaration cannot be read"))
    base.update(name=decl.name, description=decl.description_str,
                tables=_tables_of(decl, live.catalog))
    if isinstance(decl, (FaaS, AIFunction)):
        return _declared_schema_plan(base, decl)
    if isinstance(decl, DatabaseFunction):
        return _database_function_plan(base, decl, live.catalog, snapshot.timezone)
    if isinstance(decl, Mutation):
        return _mutation_plan(base, decl, live.catalog)
    return _unavailable(base, f"unknown function kind {item.kind}")


def _tables_of(decl: AnyDeclaration, catalog: Catalog) -> tuple[str, ...]:
    """The tables a Mutation declares or a FaaS or AI Function names; a Database
    Function's come from its analysis (`_database_function_plan`)."""
    names = catalog.table_names
    if isinstance(decl, Mutation):
        spec = decl.spec or decl.spec_as_written
        table = catalog.table(spec.table) if spec and isinstance(spec.table, str) else None
        return (table.name,) if table is not None else ()
    if isinstance(decl, (FaaS, AIFunction)):
        found = named_table(decl.function_id, names) or named_table(decl.description_str,
                                                                     names)
        return (found,) if found else ()
    return ()


def _unavailable(base: dict[str, Any], reason: str) -> FunctionPlan:
    return FunctionPlan(**base, status=SchemaStatus.UNAVAILABLE,
                        status_hint=UNAVAILABLE_HINT.format(reason=clip(reason.rstrip(". "),
                                                                        _REASON_CHARS)))


def _declared_schema_plan(base: dict[str, Any], decl: FaaS | AIFunction) -> FunctionPlan:
    schema = decl.input_schema
    if schema is None:
        return FunctionPlan(**base, status=SchemaStatus.MISSING, status_hint=MISSING_HINT)
    if not isinstance(schema, dict):
        return _unavailable(base, "its inputSchema is not a JSON Schema object")
    try:
        validator = schema_validator(schema, check=True)
    except Exception as exc:  # jsonschema raises several kinds for a broken schema
        return _unavailable(base, f"its inputSchema is not a valid JSON Schema "
                            f"({type(exc).__name__})")
    for tokens, pattern in schema_patterns(schema):
        problem = pattern_problem(pattern)
        if problem is not None:
            # `basedb check` refuses it too (FAAS_PATTERN_UNSUPPORTED); a deployment made
            # without it is judged here, before any call could run it.
            where = "/".join(str(token) for token in tokens)
            return _unavailable(base, f"its inputSchema pattern at /{where} uses {problem}; "
                                "the platform runs patterns on RE2, a linear-time engine")
    return FunctionPlan(**base, status=SchemaStatus.READY, status_hint=None, input_schema=schema,
                        validator=validator)


def schema_validator(schema: dict[str, Any], *, check: bool = False) -> Any:
    """A jsonschema validator for `schema` (its `$schema` dialect, 2020-12 by default,
    with the bounded keywords of `bounded_schema`), with `is_valid` compiled where it can
    be (`fast_schema`). Remote `$ref`s are never fetched: the registry has no
    retriever."""
    cls = bounded_class(schema)
    if check:
        cls.check_schema(schema)
    return FastValidator(cls(schema))


def _revalidate(decl: DatabaseFunction | Mutation, catalog: Catalog) -> tuple[list[Any], Any]:
    """The errors `basedb check` finds in one declaration against `catalog`, and (for a
    Database Function) its SQL analysis."""
    ws = Workspace(root=Path("."), config=None, catalog=catalog,
                   declarations={decl.function_id: decl}, ids={decl.function_id: [decl.kind]},
                   agent_tools=AgentToolsConfig(present=False), load_findings=[])
    ctx = CheckContext(workspace=ws)
    check_declarations(ctx)
    if isinstance(decl, DatabaseFunction):
        check_database_functions(ctx)
    else:
        check_mutations(ctx)
    return ctx.errors, ctx.analyses.get(decl.function_id)


def _judge(base: dict[str, Any], errors: list[Any]) -> FunctionPlan | None:
    """A not-ready plan when the re-validation found errors, else None."""
    if any(error.code in UPGRADE_CODES for error in errors):
        return FunctionPlan(**base, status=SchemaStatus.NEEDS_UPGRADE, status_hint=UPGRADE_HINT)
    if not errors:
        return None
    # Findings about the catalog name what changed (a field, an option); others describe
    # the author's SQL, which a caller gets no use from: name just the rule.
    about_catalog = [e for e in errors if e.code in CATALOG_CODES]
    if about_catalog:
        return _unavailable(base, about_catalog[0].message)
    return _unavailable(base, f"its declaration no longer passes the platform's checks "
                        f"({errors[0].code})")


def _database_function_plan(base: dict[str, Any], decl: DatabaseFunction,
                            catalog: Catalog, timezone: str) -> FunctionPlan:
    # Lazy: sqlglot loads with the first plan, not with the app.
    from basedb.platform.storage.sql_compile import compile_for_sqlite  # noqa: PLC0415

    errors, analysis = _revalidate(decl, catalog)
    judged = _judge(base, errors)
    if judged is not None:
        return judged
    if analysis is None:
        return _unavailable(base, "it has no SQL")
    try:
        compiled = compile_for_sqlite(analysis, catalog, timezone=timezone)
    except CompileError:
        return _unavailable(base, "its query uses SQL the local platform cannot run")
    base["tables"] = tuple(dict.fromkeys(table.name for table in analysis.tables))
    bounded = analysis.typing.bound_params if analysis.typing is not None else frozenset()
    specs = param_specs(decl, catalog, analysis.bindings, bounded)
    schema = schema_from_specs(decl, specs)
    return FunctionPlan(**base, status=SchemaStatus.READY, status_hint=None, input_schema=schema,
                        validator=schema_validator(schema), specs=specs, compiled=compiled,
                        output_schema=query_output_schema(compiled.columns))


def _mutation_plan(base: dict[str, Any], decl: Mutation, catalog: Catalog) -> FunctionPlan:
    errors, _ = _revalidate(decl, catalog)
    judged = _judge(base, errors)
    if judged is not None:
        return judged
    try:
        mutation = plan_mutation(decl, catalog)
    except ValueError as exc:
        return _unavailable(base, str(exc))
    specs = param_specs(decl, catalog, mutation_bindings(decl, catalog))
    schema = schema_from_specs(decl, specs)
    return FunctionPlan(**base, status=SchemaStatus.READY, status_hint=None, input_schema=schema,
                        validator=schema_validator(schema), specs=specs, mutation=mutation,
                        output_schema=MUTATION_OUTPUT_SCHEMA)
