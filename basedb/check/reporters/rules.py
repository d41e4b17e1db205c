"""What each error and hint code means: the one source of the rule documentation.

Every code is documented the way a linter documents its rules: what it finds, why it
matters, an example that triggers it, and the fix. The SARIF report carries it
(`shortDescription`, `fullDescription`, `help`), and docs/checks.md is rendered from it
(`python -m basedb.cli.reference --write`), so the two cannot disagree.
"""

from __future__ import annotations

from basedb.core.frozen import frozen_dataclass
from basedb.protocol.codes import ErrorCode, HintCode


@frozen_dataclass
class Rule:
    code: str
    short: str  # one line: what the rule reports (the alert title)
    what: str  # what it finds, precisely
    why: str  # why it matters
    example: str  # a file that triggers it
    fix: str  # how to fix it
    example_file: str = "function.json"  # the example's file name (its language follows)

    @property
    def name(self) -> str:
        """The code in PascalCase (SARIF `name`): PARAM_NAME_MISSING -> ParamNameMissing."""
        return "".join(part.capitalize() for part in self.code.lower().split("_"))

    @property
    def example_language(self) -> str:
        suffix = self.example_file.rsplit(".", 1)[-1] if "." in self.example_file else ""
        return {"json": "json", "jsonc": "jsonc", "sql": "sql", "mjs": "js"}.get(suffix, "text")

    @property
    def example_label(self) -> str:
        """`function.json` for a file; Shell or Layout for a command line or a tree."""
        if "." in self.example_file:
            return f"`{self.example_file}`"
        return self.example_file.capitalize()

    @property
    def full_description(self) -> str:
        """What it finds and why it matters (SARIF `fullDescription`)."""
        return f"{self.what} {self.why}"

    def help_text(self) -> str:
        """The whole rule in plain text (SARIF `help.text`)."""
        return (f"{self.what}\n\nWhy it matters: {self.why}\n\nExample "
                f"({self.example_label.strip('`')}):\n{_indent(self.example)}\n\n"
                f"Fix: {self.fix}")

    def help_markdown(self, heading: str = "###") -> str:
        """The whole rule in Markdown (SARIF `help.markdown`, and docs/checks.md)."""
        return (f"{heading} What it finds\n\n{self.what}\n\n"
                f"{heading} Why it matters\n\n{self.why}\n\n"
                f"{heading} Example\n\n{self.example_label}:\n\n"
                f"```{self.example_language}\n{self.example}\n```\n\n"
                f"{heading} Fix\n\n{self.fix}")


def _indent(text: str) -> str:
    return "\n".join("    " + line if line else "" for line in text.splitlines())


_RULES: tuple[Rule, ...] = (
    # ----------------------------------------------------------------- errors
    Rule(ErrorCode.WORKSPACE_NOT_FOUND, "No base-database.jsonc at or above the directory.",
         "No base-database.jsonc was found in the directory basedb ran in or any parent, so "
         "there is no workspace to check.",
         "Every other check needs the workspace's config: without it nothing can be checked "
         "and the run fails (exit 2).",
         "$ cd /tmp && basedb check\nError: No base-database.jsonc found in /tmp or any "
         "parent directory.", "Run basedb inside a site workspace, point `basedb check -C DIR` "
         "at one, or create one with `basedb init`.", example_file="shell"),
    Rule(ErrorCode.WORKSPACE_CONFIG_INVALID, "base-database.jsonc is unreadable or wrongly shaped.",
         "base-database.jsonc cannot be read as JSONC, or a key has the wrong type or value: "
         "appToken, title, profile, timezone (an IANA zone) or binding {baseToken, "
         "tableIds[]}.",
         "The config names the site every command talks to and the tables its SQL may read; "
         "a wrong value sends deploys to the wrong place or makes every query fail.",
         '{\n  "appToken": "",\n  "timezone": "Beijing",\n  "binding": {"baseToken": '
         '"bascn1", "tableIds": "tbl1"}\n}',
         "Give base-database.jsonc a non-empty appToken, an optional title, profile and IANA "
         "timezone (e.g. \"Asia/Shanghai\"), and a binding {baseToken, tableIds[]}. "
         "Comments and trailing commas are allowed.", example_file="base-database.jsonc"),
    Rule(ErrorCode.CATALOG_INVALID, "catalog.json is unreadable or wrongly shaped.",
         "catalog.json, the snapshot of the bound tables and their fields, is missing, not "
         "JSON, or not in the shape `basedb catalog pull` writes.",
         "SQL, Mutations and enums are checked against the catalog; without a valid one "
         "those checks cannot tell a real field from a typo.",
         '{"tables": [{"name": "Tasks", "fields": "Title, Status"}]}',
         "Run `basedb catalog pull` to rewrite catalog.json from the site's bound tables; do "
         "not edit it by hand.", example_file="catalog.json"),
    Rule(ErrorCode.DECLARATION_INVALID,
         "A function declaration is missing, not JSON, or wrongly shaped.",
         "A function.json (or a file it needs, such as main.sql or index.mjs) is missing, is "
         "not strict JSON, or a key has the wrong shape for the function's kind; also a "
         "Mutation value that can never be written to its field.",
         "The platform refuses a draft with an invalid declaration, so the deploy would fail; "
         "a declaration that parses but means nothing would fail on every call.",
         '{\n  "name": "closeTask",\n  "spec": {"table": "Tasks", "action": "upsert"}\n}',
         "Write function.json as strict JSON in the shape of its kind: Database Function "
         "{name, description, meta:{params}}, Mutation {name, description, spec:{table, "
         "action: create|update|delete, params, set, recordId, precondition, clear}}, FaaS "
         "{name, description, inputSchema} with index.mjs, AI Function {name, description, "
         "capability, prompt}."),
    Rule(ErrorCode.FUNCTION_ID_INVALID, "A function directory name is not a valid functionId.",
         "The name of a function's directory, which is its functionId, does not match "
         "`^[A-Za-z][A-Za-z0-9_]{0,63}$`.",
         "Callers, contracts and agent tools address a function by its id; the platform "
         "refuses ids with dashes, dots or a leading digit.",
         "database-functions/Bad-Id/function.json",
         "Rename the directory to a valid id, e.g. database-functions/badId/.",
         example_file="layout"),
    Rule(ErrorCode.FUNCTION_ID_DUPLICATE, "Two functions of different kinds share a functionId.",
         "The same directory name appears under two kinds, e.g. database-functions/listTasks/ "
         "and faas/listTasks/.",
         "functionIds are unique across Database Functions, Mutations, FaaS and AI "
         "Functions: a call by id would be ambiguous, and the platform refuses the draft.",
         "database-functions/listTasks/function.json\nfaas/listTasks/function.json",
         "Rename one of the directories so that every id is used once.",
         example_file="layout"),
    Rule(ErrorCode.PARAM_NAME_MISSING, "A parameter has no name.",
         "An entry of meta.params or spec.params has no `name`.",
         "Callers pass parameters by name; a nameless parameter can never be given a value.",
         '{"meta": {"params": [{"kind": "TEXT", "description": "Status to filter by"}]}}',
         "Give every parameter a stable name, e.g. \"status\"."),
    Rule(ErrorCode.PARAM_NAME_INVALID, "A parameter name is not a valid identifier.",
         "A parameter's name does not match `^[A-Za-z][A-Za-z0-9_]{0,63}$`.",
         "Names become keys of the call body, fields of generated contracts and properties "
         "of agent tool schemas; other characters break some of them.",
         '{"meta": {"params": [{"name": "period-id", "kind": "TEXT", "description": "…"}]}}',
         "Use a name matching `^[A-Za-z][A-Za-z0-9_]{0,63}$`, e.g. periodId."),
    Rule(ErrorCode.PARAM_NAME_DUPLICATE, "Two parameters of one function share a name.",
         "Two entries of one function's params have the same name.",
         "A call body has one value per name, so one of the two parameters could never be "
         "set on its own.",
         '{"meta": {"params": [{"name": "status", …}, {"name": "status", …}]}}',
         "Rename one of them; names identify parameters in the call body."),
    Rule(ErrorCode.PARAM_DESCRIPTION_MISSING, "A parameter's description is missing or blank.",
         "A parameter has no `description`, or only whitespace.",
         "Agents and developers choose a value from the description alone; without it they "
         "guess.",
         '{"meta": {"params": [{"name": "status", "kind": "TEXT"}]}}',
         "Describe the parameter's business meaning, unit, where its value comes from and "
         "what null means."),
    Rule(ErrorCode.PARAM_KIND_INVALID, "A parameter kind is not one basedb knows.",
         "A parameter's `kind` is not TEXT, INT, NUMBER, BOOL, DATE, DATETIME or an array "
         "kind (TEXT[], INT[], NUMBER[]); RECORD_ID and USER_ID are Mutation-only.",
         "The kind decides how a value is validated and bound; the platform refuses an "
         "unknown one.",
         '{"meta": {"params": [{"name": "due", "kind": "TIMESTAMP", "description": "…"}]}}',
         "Use TEXT, INT, NUMBER, BOOL, DATE, DATETIME or an array kind TEXT[], INT[], "
         "NUMBER[]; Mutations also accept RECORD_ID and USER_ID."),
    Rule(ErrorCode.ENUM_EMPTY, "An enum is empty.",
         "A parameter declares `\"enum\": []`.",
         "No value satisfies an empty enum, so every call would be refused.",
         '{"name": "status", "kind": "TEXT", "description": "…", "enum": []}',
         "List the allowed values, or remove enum when the values are not fixed."),
    Rule(ErrorCode.ENUM_DUPLICATE, "An enum lists a value more than once.",
         "A value appears twice in a parameter's enum.",
         "A repeated value is almost always a typo of another one, and it clutters generated "
         "contracts and tool schemas.",
         '{"name": "status", "kind": "TEXT", "description": "…", "enum": ["Todo", "Todo"]}',
         "Remove the repeated value."),
    Rule(ErrorCode.ENUM_NULL, "An enum contains null.",
         "A parameter's enum lists null.",
         "Absence is expressed by an optional parameter, not by an enum value; null in an "
         "enum makes contracts and validation disagree.",
         '{"name": "status", "kind": "TEXT", "description": "…", "enum": ["Todo", null]}',
         "Remove null from enum; make the parameter optional (required: false) instead."),
    Rule(ErrorCode.ENUM_TYPE_MISMATCH, "An enum value does not match the parameter kind.",
         "An enum value has another JSON type than the parameter's kind, e.g. a string in "
         "the enum of an INT parameter.",
         "The platform validates values by kind first, so that enum value could never be "
         "passed.",
         '{"name": "priority", "kind": "INT", "description": "…", "enum": [1, "2"]}',
         "Write enum values of the parameter's type: strings for TEXT, integers for INT, "
         "numbers for NUMBER."),
    Rule(ErrorCode.ENUM_OUT_OF_DOMAIN, "An enum value is not an option of the bound select field.",
         "A parameter compared with (or written to) a single or multi select field lists a "
         "value that is not one of the field's options in catalog.json.",
         "The query would silently match nothing, or the write would fail, for that value.",
         '{"name": "status", "kind": "TEXT", "description": "…", '
         '"enum": ["Todo", "Archived"]}\n// main.sql: WHERE "Status" = $1, and Status has '
         "the options Todo, Doing, Done",
         "Use only option names of the bound field as they appear in catalog.json; run "
         "`basedb catalog pull` if the options changed."),
    Rule(ErrorCode.FAAS_SCHEMA_NOT_OBJECT,
         "A FaaS inputSchema is not an object schema at the top level.",
         "A FaaS's inputSchema has a top-level type other than object.",
         "A function is called with named parameters, so its input is always a JSON object.",
         '{"name": "importRows", "description": "…", "inputSchema": {"type": "array"}}',
         "Make the top level {\"type\": \"object\", \"properties\": {…}}; wrap lists or "
         "scalars in a named property."),
    Rule(ErrorCode.FAAS_PROPERTY_DESCRIPTION_MISSING,
         "A top-level FaaS input property has no description.",
         "A property of a FaaS inputSchema's top level has no `description`.",
         "Agents fill FaaS inputs from the schema alone; an undescribed property is guessed.",
         '{"inputSchema": {"type": "object", "properties": {"rows": {"type": "array"}}}}',
         "Give every top-level property of inputSchema a description of its meaning and "
         "where its value comes from."),
    Rule(ErrorCode.FAAS_SCHEMA_INVALID, "A FaaS inputSchema is not a valid JSON Schema.",
         "A FaaS's inputSchema does not validate against the JSON Schema meta-schema.",
         "The platform validates every call against this schema; an invalid schema rejects "
         "or accepts calls unpredictably.",
         '{"inputSchema": {"type": "object", "properties": {"n": {"type": "integr"}}}}',
         "Fix the schema so that it validates against the JSON Schema meta-schema; use "
         "oneOf branches for conditional requirements."),
    Rule(ErrorCode.FAAS_PATTERN_UNSUPPORTED, "A FaaS or AI inputSchema pattern needs a "
         "backtracking regex engine.",
         "A `pattern` (or a `patternProperties` name) of a FaaS's or AI Function's "
         "inputSchema uses what RE2, the platform's linear-time regex engine, cannot run: "
         "a backreference (\\1, \\k<name>), a lookahead or lookbehind ((?=…), (?!…), "
         "(?<=…), (?<!…)) or a repetition count above 1000.",
         "The platform checks every call's params against the schema on a server shared "
         "by every site. A backtracking engine can take seconds or hours on one crafted "
         "value (`^(a+)+$`), so patterns run on RE2, which matches in linear time; the "
         "platform marks such a function unavailable instead of running the pattern.",
         '{"inputSchema": {"type": "object", "properties": {"code": {"type": "string", '
         '"description": "…", "pattern": "^(\\\\w)\\\\1$"}}}}',
         "Rewrite the pattern without backreferences or lookaround (list the allowed "
         "forms, or check the rest in the handler), and keep repetition counts at 1000 "
         "or below; docs/security.md (Input schemas) says how patterns are read."),
    Rule(ErrorCode.FAAS_NETWORK_INVALID, "A FaaS network.allow entry is not a public host name.",
         "An entry of a FaaS's network.allow is an IP address, a URL, a name of a private or "
         "reserved domain (localhost, *.local, *.internal, …), a repeat, or the 33rd.",
         "A handler reaches only the hosts it declares, through the platform, which "
         "resolves each name itself and connects to public addresses only; an address or a "
         "private name could only ever be refused, and would hide which service is called.",
         '{"network": {"allow": ["api.example.com", "127.0.0.1", "https://x.example.com/v1"]}}',
         "List the host names the handler calls, such as \"api.example.com\", "
         "\"*.example.com\" or \"api.example.com:8443\" (port 443 when none is given); "
         "at most 32."),
    Rule(ErrorCode.FAAS_SECRET_INVALID, "A FaaS secrets entry is not a usable environment variable "
         "name.",
         "An entry of a FaaS's secrets is not an upper-case name (letters, digits, _), is "
         "one the platform sets or that changes how Node.js runs (PATH, HOME, TZ, NODE_*, "
         "BASEDB_*, …), a repeat, or the 33rd.",
         "Secrets reach the handler as environment variables; a reserved name would change "
         "the runtime itself, and a malformed one cannot be set.",
         '{"secrets": ["STRIPE_API_KEY", "stripe-key", "NODE_OPTIONS"]}',
         "Name each secret like STRIPE_API_KEY and set its value on the platform with "
         "`basedb secrets set NAME`, never in the workspace."),
    Rule(ErrorCode.FAAS_PACKAGE_INVALID, "A FaaS package.json cannot be read as dependencies.",
         "The package.json beside a FaaS's index.mjs is not a JSON object, its "
         "dependencies are not an object of npm package names and version strings, or it "
         "is larger than 1 MiB.",
         "The dependency policy is judged on the declared dependencies; ones that cannot be "
         "read cannot be judged.",
         '{"dependencies": ["dayjs"]}',
         'Write {"dependencies": {"name": "version range"}}, e.g. '
         '{"dependencies": {"dayjs": "^1.11.10"}}.', example_file="package.json"),
    Rule(ErrorCode.FAAS_DEPENDENCY_NOT_ALLOWED, "A FaaS dependency comes from a restricted source.",
         "A dependency in a FaaS's package.json is not a registry version (a version, range "
         "or dist-tag) but a git repository, GitHub shorthand, URL, file or link path or "
         "workspace protocol, and no regular expression of the dependency policy's "
         "allowedValues ($BASEDB_FAAS_ALLOWED_DEPENDENCIES) matches the whole value.",
         "Upstream's dependency policy allows ordinary registry versions by default and a "
         "restricted source only when the site's policy names it: code from elsewhere is "
         "neither reviewed nor reproducible.",
         '{"dependencies": {"utils": "github:someone/utils"}}',
         'Use a registry version such as "^1.2.3", or add a regular expression matching the '
         "whole value to the policy's allowedValues.", example_file="package.json"),
    Rule(ErrorCode.FAAS_DEPENDENCY_NOT_BUNDLED, "A FaaS dependency would not be found when the "
         "handler runs.",
         "A dependency in a FaaS's package.json is allowed by the dependency policy, but "
         "basedb runs index.mjs as the handler's only file and does not bundle "
         "dependencies into it yet.",
         "Nothing is fetched when a handler runs: an import of a package that is not in "
         "index.mjs fails on every call.",
         '{"dependencies": {"dayjs": "^1.11.10"}}',
         "Bundle the handler into one index.mjs (e.g. `npx esbuild handler.mjs --bundle "
         "--format=esm --platform=node --outfile=index.mjs`) and move the package to "
         "devDependencies, which are not deployed.", example_file="package.json"),
    Rule(ErrorCode.SQL_PARSE_ERROR, "main.sql cannot be parsed.",
         "main.sql is not valid PostgreSQL-flavoured SQL, e.g. a misspelt keyword, an "
         "unclosed quote or parenthesis.",
         "The platform cannot run a query it cannot parse; every call would fail.",
         'SELEC "Title" FROM "Tasks"',
         "Write one PostgreSQL-flavoured SELECT; quote Base names with double quotes and use "
         "$1..$n for parameters.", example_file="main.sql"),
    Rule(ErrorCode.SQL_NOT_READ_ONLY, "main.sql is not a single read-only SELECT.",
         "main.sql holds something other than exactly one SELECT (WITH allowed): an INSERT, "
         "UPDATE, DELETE, DDL, or several statements.",
         "Database Functions are read-only by contract: agents call them without asking, and "
         "the platform refuses writes there.",
         'UPDATE "Tasks" SET "Status" = \'Done\'',
         "Keep Database Functions to one SELECT (WITH allowed); write data through a "
         "Mutation or a FaaS.", example_file="main.sql"),
    Rule(ErrorCode.SQL_NO_BOUND_TABLE, "main.sql reads no table of the catalog.",
         "The query reads no table at all, e.g. `SELECT 1`.",
         "A Database Function exists to read the site's data; a constant belongs in the "
         "page or a FaaS.",
         "SELECT 1 AS one", "Query at least one bound table; compute constants in the Page "
         "or a FaaS.", example_file="main.sql"),
    Rule(ErrorCode.SQL_UNKNOWN_TABLE, "main.sql names a table the catalog lacks.",
         "A table named in FROM or JOIN is not a bound table in catalog.json.",
         "The platform only serves bound tables; the query would fail on every call.",
         'SELECT "Title" FROM "Taks"',
         "Use a table name from catalog.json, or bind the table and run "
         "`basedb catalog pull`.", example_file="main.sql"),
    Rule(ErrorCode.SQL_UNKNOWN_FIELD, "main.sql names a field the table lacks.",
         "A column reference does not name a field of the table it resolves to.",
         "The query would fail on every call, or read another column than meant.",
         'SELECT "Titel" FROM "Tasks"',
         "Use a field name from catalog.json (quoted), or record_id for the record id.",
         example_file="main.sql"),
    Rule(ErrorCode.SQL_PARAM_UNDECLARED, "main.sql uses $n beyond the declared parameters.",
         "A placeholder $n has no n-th entry in meta.params.",
         "Callers pass parameters by name, mapped to $1..$n in order; $n with no parameter "
         "can never be given a value.",
         'SELECT "Title" FROM "Tasks" WHERE "Status" = $2   -- one param declared',
         "Declare one entry in meta.params for each $n, in order, or renumber the "
         "placeholders.", example_file="main.sql"),
    Rule(ErrorCode.SQL_UNSUPPORTED, "main.sql uses SQL outside the supported subset.",
         "The query is valid PostgreSQL but uses a construct or function the supported "
         "subset leaves out, e.g. LATERAL, a regular expression, generate_series() or "
         "< ANY (…).",
         "The local platform runs Database Functions with PostgreSQL's semantics only within "
         "the subset; outside it a query could pass locally and behave differently in the "
         "cloud, or fail only when called.",
         'SELECT "Title" FROM "Tasks" WHERE "Title" ~ \'^Fix\'',
         "Rewrite it with the constructs and functions docs/sql.md lists; the finding says "
         "what to write instead (here: \"Title\" LIKE 'Fix%').", example_file="main.sql"),
    Rule(ErrorCode.SQL_INVALID, "PostgreSQL would refuse main.sql (types, grouping, literals).",
         "PostgreSQL would reject the query: operands of types that do not compare or "
         "combine, a selected column neither grouped nor aggregated, a malformed literal, "
         "a function called with arguments of the wrong types.",
         "The cloud runs the query on PostgreSQL: every call would fail there, even where "
         "SQLite's looser rules would let it run locally.",
         'SELECT "Status", "Title" FROM "Tasks" GROUP BY "Status"',
         "Fix the query as the message says: compare values of one type, group or "
         "aggregate every selected column, write valid literals.", example_file="main.sql"),
    Rule(ErrorCode.MUTATION_TABLE_UNKNOWN, "A Mutation writes to a table the catalog lacks.",
         "A Mutation's spec.table is not a bound table in catalog.json.",
         "The platform only writes bound tables; every call would fail.",
         '{"spec": {"table": "Taks", "action": "create", …}}',
         "Set spec.table to a table name from catalog.json."),
    Rule(ErrorCode.MUTATION_FIELD_UNKNOWN, "A Mutation names a field the table lacks.",
         "A key of spec.set, spec.precondition or spec.clear is not a field of spec.table.",
         "The write would fail on every call, or leave the intended field untouched.",
         '{"spec": {"table": "Tasks", "action": "update", "set": {"Stauts": "$status"}, …}}',
         "Use field names from catalog.json in set, precondition and clear."),
    Rule(ErrorCode.MUTATION_FIELD_READONLY, "A Mutation writes a field that cannot be written.",
         "spec.set or spec.clear names a formula, lookup, auto number, created/updated or "
         "record id field.",
         "Base computes those fields; the platform refuses writes to them.",
         '{"spec": {"table": "Tasks", "action": "update", "set": {"Created": "$when"}, …}}',
         "Remove formula, lookup, auto number and created/updated fields from set and "
         "clear; the platform fills them."),
    Rule(ErrorCode.MUTATION_PARAM_UNDECLARED, "A Mutation refers to a $param it does not declare.",
         "A \"$name\" in set, recordId, precondition or clear names no entry of spec.params.",
         "The value would never be supplied, so the write would fail or write nothing.",
         '{"spec": {"params": [{"name": "status", …}], "set": {"Status": "$state"}, …}}',
         "Declare the parameter in spec.params or fix the reference's spelling."),
    Rule(ErrorCode.AGENT_TOOLS_INVALID, "agent-tools.json is invalid.",
         "agent-tools.json is not JSON, or not {\"exclude\": [functionId, …]} with ids of "
         "this workspace, each once.",
         "It decides which functions external AI agents may call; a wrong entry could open "
         "or hide the wrong function.",
         '{"include": ["listTasks"], "exclude": ["listTasks", "listTasks"]}',
         "Write {\"exclude\": [functionId, …]} with ids of this workspace, each once; "
         "`include` is not supported.", example_file="agent-tools.json"),
    Rule(ErrorCode.CONTRACTS_STALE, "A generated contracts file differs from the declarations.",
         "A file under src/generated/ is not what `basedb contracts generate` would write "
         "now.",
         "The page's code is typed against stale contracts: a renamed or retyped parameter "
         "would only fail at run time.",
         "src/generated/functions.ts   # written before a parameter was renamed",
         "Run `basedb contracts generate` and commit the result.", example_file="layout"),
    Rule(ErrorCode.INPUT_INVALID, "A workspace file cannot be deployed as it is named or typed.",
         "A file a deploy would ship has a name that `basedb pull` could not restore on "
         "every system (a backslash, a colon, a control character, bytes that are not "
         "UTF-8, a name or path too long), two names differ only in letter case or Unicode "
         "form, a FIFO, socket or device sits among the files, or a top-level entry has the "
         "wrong type (a file named src).",
         "The deploy would refuse the workspace at its build stage; check says so first, "
         "with the same rule.",
         "src/caf\\xe9.txt  # a name in Latin-1, not UTF-8", "Rename or remove the file "
         "the message names.", example_file="layout"),
    Rule(ErrorCode.INPUT_SYMLINK, "A symlink leaves the workspace, dangles or loops.",
         "A symlink among the files a deploy ships is dangling, part of a loop, or points "
         "outside the workspace or into .git/ or .base-database-cli/.",
         "A deploy follows symlinks within the workspace only; anything else would ship "
         "files from elsewhere on the machine, or fail.",
         "src/data -> /home/me/private", "Replace the symlink with the files it points to, "
         "or remove it.", example_file="layout"),
    Rule(ErrorCode.INPUT_UNREADABLE, "A workspace file cannot be read.",
         "A file a deploy would ship cannot be read (permissions, an I/O error).",
         "The deploy could not read it either.", "src/secret.bin  # mode 000",
         "Make the file readable, or remove it.", example_file="layout"),
    Rule(ErrorCode.INPUT_TOO_MANY_FILES, "The workspace has more files than one deployment ships.",
         "The files a deploy would ship (the config, catalog.json, agent-tools.json, "
         "README.md, the function directories and src/) number more than one deployment "
         "may hold.",
         "The deploy would refuse the workspace; usually build output or downloaded "
         "dependencies were left in src/.",
         "src/vendor/…  # 30,000 files", "Remove what the site does not need, or move it "
         "out of the workspace.", example_file="layout"),
    Rule(ErrorCode.INPUT_TOO_LARGE, "The workspace's files are larger than one deployment ships.",
         "The files a deploy would ship total more bytes than one deployment may hold "
         "(the same limit the platform applies to the upload).",
         "The deploy would refuse the workspace, or the platform its upload.",
         "src/video.bin  # 200 MB", "Host large media elsewhere and link to it, or remove "
         "files the site does not need.", example_file="layout"),
    # ------------------------------------------------------------------ hints
    Rule(HintCode.FUNCTION_DESCRIPTION_SHORT, "A function description is missing or short.",
         "A function's description is missing or only a few words.",
         "Agents choose tools by their description; a vague one gets the wrong function "
         "called, or the right one skipped.",
         '{"name": "listTasks", "description": "List tasks"}',
         "Say what the function does, when to use it, when not to and which neighbouring "
         "function to use instead."),
    Rule(HintCode.PARAM_DESCRIPTION_SHORT, "A parameter description is short.",
         "A parameter's description is only a few words, or repeats its name.",
         "A value's meaning, unit and source are not in its name; a caller guesses them.",
         '{"name": "periodId", "kind": "TEXT", "description": "period id"}',
         "Add the business meaning, unit, source of the value and the effect of null; do not "
         "pad with repeated words."),
    Rule(HintCode.OPTION_FIELD_UNCONSTRAINED,
         "A parameter bound to a select field declares no enum.",
         "A parameter compared with or written to a select field has no enum, so any text "
         "is accepted.",
         "A value that is not an option matches nothing, or fails the write; an enum lets "
         "the platform and agents refuse it up front.",
         '{"name": "status", "kind": "TEXT", "description": "Status of the tasks to list"}',
         "If the options are fixed, copy the allowed ones into enum; if they change, say in "
         "the description how to get a valid value."),
    Rule(HintCode.REFERENCE_VALUE_HINT,
         "A record or user id parameter does not say where its value comes from.",
         "A parameter bound to a record id or user field does not say which function "
         "returns such ids.",
         "Ids cannot be guessed: an agent needs to know which call yields a valid one.",
         '{"name": "periodId", "kind": "RECORD_ID", "description": "The period"}',
         "Name the open function to call first and the returned field to pass, e.g. "
         "\"call listPeriods and pass rows[].period_id\"."),
    Rule(HintCode.ENUM_UNCHECKED, "An enum could not be checked against the bound field's options.",
         "A parameter has an enum, but the query does not bind it to a field in a way the "
         "check can prove (e.g. inside an expression), so its values were not compared with "
         "the field's options.",
         "An enum value that is not an option would match nothing, and nobody would notice.",
         '-- main.sql\nSELECT "Title" FROM "Tasks" WHERE lower("Status") = lower($1)',
         "Verify the values against the field's real options; keep conditional filters such "
         "as `$1 IS NULL OR field = $1` as they are.", example_file="main.sql"),
    Rule(HintCode.PARAM_UNUSED, "A declared parameter is never used.",
         "A declared parameter is referenced nowhere: no $n in main.sql, no \"$name\" in "
         "the Mutation spec.",
         "Callers pass a value that changes nothing, and believe it filters or writes.",
         '{"spec": {"params": [{"name": "note", …}], "set": {"Status": "$status"}, …}}',
         "Use the parameter in the query or spec, or remove it from the declaration."),
    Rule(HintCode.DESCRIPTION_NEAR_DUPLICATE,
         "Two functions of one table have nearly the same description.",
         "Two open functions working on the same table have descriptions that share at "
         "least 90% of their words and differ in no word that names a table (the same "
         "records, described alike).",
         "An agent choosing among many functions by description cannot tell the two apart, "
         "and calls either.",
         '// myAgendaIncidentsAndJobOpenings\n{"description": "The current user\'s incidents '
         'and job openings in one list, ordered by date."}\n'
         '// myAgendaJobOpeningsAndIncidents\n{"description": "The current user\'s job '
         'openings and incidents in one list, ordered by date."}',
         "Say in each what sets it apart (its filter, its order, its result) and when to use "
         "the other; or keep one of the two."),
    Rule(HintCode.DESCRIPTION_NAMES_CLOSED,
         "A description names a function agents cannot call.",
         "A description names, as a camelCase id starting with a verb, a function that "
         "agent-tools.json excludes or that the site does not have.",
         "Agents follow the pointer and fail, or conclude the site cannot do the task.",
         '{"description": "Archives closed tasks. To remove them for good use '
         'deleteTasks."}',
         "Name an open function that exists (check the id's spelling), or remove the "
         "function from exclude if agents should use it."),
    Rule(HintCode.DESCRIPTION_VAGUE_POINTER,
         "A description points to something that may not exist.",
         "A description hedges a pointer: \"when it exists\", \"if available\", \"如果存在\".",
         "An agent cannot check whether it exists, so it guesses, and calls a function "
         "that is not there.",
         '{"description": "Lists tasks. To filter by status use tasksByStatus when it '
         'exists."}',
         "Name the function plainly when it is open to agents; otherwise leave the pointer "
         "out."),
    Rule(HintCode.NAME_CONTRADICTS_DESCRIPTION,
         "A function's id says something other than what it does.",
         "The verb that starts the id disagrees with the function: a write verb (create, "
         "delete, update, archive…) on a Database Function, a read verb or the opposite "
         "write on a Mutation's action, or a read verb where the description starts with a "
         "write one (or the reverse).",
         "Agents read the id first: listTasks that deletes, or deleteTasks that creates, "
         "gets called for the wrong task.",
         '// listTasks/function.json\n{"description": "Deletes the tasks of one project."}',
         "Rename the function, or correct its description, so that both say the same."),
)

RULES: dict[str, Rule] = {rule.code: rule for rule in _RULES}
