"""What each error and hint code means: the rule table of the SARIF report.

Code scanning shows a rule's short description as the alert title and its help text in
the alert's details, so each help text says what to change, not only what is wrong.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Rule:
    code: str
    short: str  # one line: what the rule reports
    help: str  # how to fix it

    @property
    def name(self) -> str:
        """The code in PascalCase (SARIF `name`): PARAM_NAME_MISSING -> ParamNameMissing."""
        return "".join(part.capitalize() for part in self.code.lower().split("_"))


_RULES: tuple[Rule, ...] = (
    # ----------------------------------------------------------------- errors
    Rule("WORKSPACE_NOT_FOUND", "No base-database.jsonc at or above the directory.",
         "Run basedb inside a site workspace, pass --workspace DIR, or create one with "
         "`basedb init`."),
    Rule("WORKSPACE_CONFIG_INVALID", "base-database.jsonc is unreadable or wrongly shaped.",
         "Give base-database.jsonc a non-empty appToken, an optional title, profile and IANA "
         "timezone, and a binding {baseToken, tableIds[]}. Comments and trailing commas are "
         "allowed."),
    Rule("CATALOG_INVALID", "catalog.json is unreadable or wrongly shaped.",
         "Run `basedb catalog pull` to rewrite catalog.json from the site's bound tables."),
    Rule("DECLARATION_INVALID", "A function declaration is missing, not JSON, or wrongly shaped.",
         "Write function.json as strict JSON in the shape of its kind: Database Function "
         "{name, description, meta:{params}}, Mutation {name, description, spec}, FaaS "
         "{name, description, inputSchema}, AI Function {name, description, capability, "
         "prompt}."),
    Rule("FUNCTION_ID_INVALID", "A function directory name is not a valid functionId.",
         "Rename the directory to match ^[A-Za-z][A-Za-z0-9_]{0,63}$, e.g. listTasks."),
    Rule("FUNCTION_ID_DUPLICATE", "Two functions of different kinds share a functionId.",
         "Rename one directory: functionIds are unique across Database Functions, "
         "Mutations, FaaS and AI Functions."),
    Rule("PARAM_NAME_MISSING", "A parameter has no name.",
         "Give every parameter a stable name; callers pass parameters by name."),
    Rule("PARAM_NAME_INVALID", "A parameter name is not a valid identifier.",
         "Use a name matching ^[A-Za-z][A-Za-z0-9_]{0,63}$, e.g. periodId."),
    Rule("PARAM_NAME_DUPLICATE", "Two parameters of one function share a name.",
         "Rename one of them; names identify parameters in the call body."),
    Rule("PARAM_DESCRIPTION_MISSING", "A parameter's description is missing or blank.",
         "Describe the parameter's business meaning, unit, where its value comes from and "
         "what null means."),
    Rule("PARAM_KIND_INVALID", "A parameter kind is not one basedb knows.",
         "Use TEXT, INT, NUMBER, BOOL, DATE, DATETIME or an array kind TEXT[], INT[], "
         "NUMBER[]; Mutations also accept RECORD_ID and USER_ID."),
    Rule("ENUM_EMPTY", "An enum is empty.",
         "List the allowed values, or remove enum when the values are not fixed."),
    Rule("ENUM_DUPLICATE", "An enum lists a value more than once.",
         "Remove the repeated value."),
    Rule("ENUM_NULL", "An enum contains null.",
         "Remove null from enum; make the parameter optional (required: false) instead."),
    Rule("ENUM_TYPE_MISMATCH", "An enum value does not match the parameter kind.",
         "Write enum values of the parameter's type: strings for TEXT, integers for INT, "
         "numbers for NUMBER."),
    Rule("ENUM_OUT_OF_DOMAIN", "An enum value is not an option of the bound select field.",
         "Use only option names of the bound field as they appear in catalog.json; run "
         "`basedb catalog pull` if the options changed."),
    Rule("FAAS_SCHEMA_NOT_OBJECT", "A FaaS inputSchema is not an object schema at the top level.",
         "Make the top level {\"type\": \"object\", \"properties\": {…}}; wrap lists or "
         "scalars in a named property."),
    Rule("FAAS_PROPERTY_DESCRIPTION_MISSING",
         "A top-level FaaS input property has no description.",
         "Give every top-level property of inputSchema a description of its meaning and "
         "where its value comes from."),
    Rule("FAAS_SCHEMA_INVALID", "A FaaS inputSchema is not a valid JSON Schema.",
         "Fix the schema so that it validates against the JSON Schema meta-schema; use "
         "oneOf branches for conditional requirements."),
    Rule("SQL_PARSE_ERROR", "main.sql cannot be parsed.",
         "Write one PostgreSQL-flavoured SELECT; quote Base names with double quotes and use "
         "$1..$n for parameters."),
    Rule("SQL_NOT_READ_ONLY", "main.sql is not a single read-only SELECT.",
         "Keep Database Functions to one SELECT (WITH allowed); write data through a "
         "Mutation or a FaaS."),
    Rule("SQL_NO_BOUND_TABLE", "main.sql reads no table of the catalog.",
         "Query at least one bound table; compute constants in the Page or a FaaS."),
    Rule("SQL_UNKNOWN_TABLE", "main.sql names a table the catalog lacks.",
         "Use a table name from catalog.json, or bind the table and run "
         "`basedb catalog pull`."),
    Rule("SQL_UNKNOWN_FIELD", "main.sql names a field the table lacks.",
         "Use a field name from catalog.json (quoted), or record_id for the record id."),
    Rule("SQL_PARAM_UNDECLARED", "main.sql uses $n beyond the declared parameters.",
         "Declare one entry in meta.params for each $n, in order, or renumber the "
         "placeholders."),
    Rule("SQL_UNSUPPORTED", "main.sql uses SQL outside the supported subset.",
         "Rewrite it with the constructs and functions docs/sql.md lists; the finding says "
         "what to write instead. Everything in the subset runs with PostgreSQL's semantics "
         "on the local platform and in the cloud."),
    Rule("SQL_INVALID", "PostgreSQL would refuse main.sql (types, grouping, literals).",
         "Fix the query as the message says: compare values of one type, group or "
         "aggregate every selected column, write valid literals."),
    Rule("MUTATION_TABLE_UNKNOWN", "A Mutation writes to a table the catalog lacks.",
         "Set spec.table to a table name from catalog.json."),
    Rule("MUTATION_FIELD_UNKNOWN", "A Mutation names a field the table lacks.",
         "Use field names from catalog.json in set, precondition and clear."),
    Rule("MUTATION_FIELD_READONLY", "A Mutation writes a field that cannot be written.",
         "Remove formula, lookup, auto number and created/updated fields from set and "
         "clear; the platform fills them."),
    Rule("MUTATION_PARAM_UNDECLARED", "A Mutation refers to a $param it does not declare.",
         "Declare the parameter in spec.params or fix the reference's spelling."),
    Rule("AGENT_TOOLS_INVALID", "agent-tools.json is invalid.",
         "Write {\"exclude\": [functionId, …]} with ids of this workspace, each once; "
         "`include` is not supported."),
    Rule("CONTRACTS_STALE", "A generated contracts file differs from the declarations.",
         "Run `basedb contracts generate` and commit the result."),
    # ------------------------------------------------------------------ hints
    Rule("function_description_short", "A function description is missing or short.",
         "Say what the function does, when to use it, when not to and which neighbouring "
         "function to use instead."),
    Rule("param_description_short", "A parameter description is short.",
         "Add the business meaning, unit, source of the value and the effect of null; do not "
         "pad with repeated words."),
    Rule("option_field_unconstrained",
         "A parameter bound to a select field declares no enum.",
         "If the options are fixed, copy the allowed ones into enum; if they change, say in "
         "the description how to get a valid value."),
    Rule("reference_value_hint",
         "A record or user id parameter does not say where its value comes from.",
         "Name the open function to call first and the returned field to pass, e.g. "
         "\"call listPeriods and pass rows[].period_id\"."),
    Rule("enum_unchecked", "An enum could not be checked against the bound field's options.",
         "Verify the values against the field's real options; keep conditional filters such "
         "as `$1 IS NULL OR field = $1` as they are."),
    Rule("param_unused", "A declared parameter is never used.",
         "Use the parameter in the query or spec, or remove it from the declaration."),
)

RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
