"""Typed model of a site workspace.

Objects are built leniently from user files: values that a validator must judge (a
param's name, kind, description, enum) are kept as they were written, so that `check`
can report every problem at once instead of stopping at the first. Each object remembers
the workspace-relative file it came from and its JSON Pointer within that file.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from basedb.core.frozen import frozen_dataclass

if TYPE_CHECKING:
    from basedb.workspace.files import Contents

# Every name pattern ends in \Z, not $: Python's $ also matches before a final newline,
# so "listAll\n" would pass. JSON Schema's $ ends the input, which is the form the
# OpenAPI document states (FUNCTION_ID_PATTERN).
_FUNCTION_ID = r"[A-Za-z][A-Za-z0-9_]{0,63}"
FUNCTION_ID_RE = re.compile(rf"^{_FUNCTION_ID}\Z")
FUNCTION_ID_PATTERN = f"^{_FUNCTION_ID}$"
PARAM_NAME_RE = FUNCTION_ID_RE
PARAM_NAME_PATTERN = FUNCTION_ID_PATTERN

FIELD_TYPES: tuple[str, ...] = (
    "text", "number", "select", "datetime", "checkbox", "user", "link", "formula",
    "lookup", "auto_number", "attachment", "location", "created_at", "updated_at",
    "created_by", "updated_by",
)
READ_ONLY_FIELD_TYPES = frozenset(
    {"formula", "lookup", "auto_number", "created_at", "updated_at", "created_by", "updated_by"}
)

SCALAR_KINDS: tuple[str, ...] = ("TEXT", "INT", "NUMBER", "BOOL", "DATE", "DATETIME")
ARRAY_KINDS: tuple[str, ...] = ("TEXT[]", "INT[]", "NUMBER[]")
SQL_PARAM_KINDS: tuple[str, ...] = SCALAR_KINDS + ARRAY_KINDS
MUTATION_PARAM_KINDS: tuple[str, ...] = (*SQL_PARAM_KINDS, "RECORD_ID", "USER_ID")

FunctionKind = Literal["database_function", "mutation", "faas", "ai_function"]
FUNCTION_KINDS: tuple[FunctionKind, ...] = ("database_function", "mutation", "faas", "ai_function")

# Directory of each kind inside the workspace.
KIND_DIRS: dict[FunctionKind, str] = {
    "database_function": "database-functions",
    "mutation": "mutations",
    "faas": "faas",
    "ai_function": "ai",
}

RECORD_ID = "record_id"

# Directories that are never part of a workspace's sources: not functions to check, not
# files to deploy (tooling, dependencies, caches and basedb's own local state).
IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", "node_modules", "__pycache__", ".base-database-cli"}
)


# --------------------------------------------------------------------------- catalog


@frozen_dataclass
class Field:
    """One field of a table in catalog.json; `pointer` is where it is declared."""

    field_id: str
    name: str
    type: str
    multiple: bool = False
    options: tuple[str, ...] = ()
    link_table: str | None = None
    description: str = ""
    pointer: str = ""

    @property
    def is_read_only(self) -> bool:
        return self.type in READ_ONLY_FIELD_TYPES

    @property
    def is_option(self) -> bool:
        return self.type == "select"

    @property
    def is_multi_valued(self) -> bool:
        """Whether SQL `=` / `IN` on this field matches any of several values."""
        return self.type == "link" or (self.type in ("select", "user") and self.multiple)

    @property
    def is_reference(self) -> bool:
        """Whether values are ids from elsewhere (records or users), not display text."""
        return self.type in ("link", "user", "created_by", "updated_by")


RECORD_ID_FIELD = Field(field_id=RECORD_ID, name=RECORD_ID, type="record_id")


@frozen_dataclass
class Table:
    """One table of catalog.json, its fields found by name or id (`field`)."""

    table_id: str
    name: str
    fields: tuple[Field, ...]
    pointer: str = ""
    _by_name: Mapping[str, Field] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, Field] = {}
        for f in self.fields:
            index.setdefault(f.field_id, f)
        for f in self.fields:
            index[f.name] = f  # names win over ids when both collide
        object.__setattr__(self, "_by_name", index)

    def field(self, name_or_id: str) -> Field | None:
        """A field by name or id; `record_id` is the pseudo-column every table has."""
        found = self._by_name.get(name_or_id)
        if found is None and name_or_id == RECORD_ID:
            return RECORD_ID_FIELD
        return found


@frozen_dataclass
class Catalog:
    """catalog.json: the bound Base's tables, found by name or id (`table`)."""

    base_token: str
    tables: tuple[Table, ...]
    _by_name: Mapping[str, Table] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, Table] = {}
        for t in self.tables:
            index.setdefault(t.table_id, t)
        for t in self.tables:
            index[t.name] = t
        object.__setattr__(self, "_by_name", index)

    def table(self, name_or_id: str) -> Table | None:
        return self._by_name.get(name_or_id)

    @property
    def table_names(self) -> list[str]:
        return [t.name for t in self.tables]


EMPTY_CATALOG = Catalog(base_token="", tables=())


# ------------------------------------------------------------------------- config


@frozen_dataclass
class Binding:
    """base-database.jsonc `binding`: the Base and which of its tables the site uses."""

    base_token: str
    table_ids: tuple[str, ...]


@frozen_dataclass
class WorkspaceConfig:
    """base-database.jsonc: the site's app token, title, binding, profile and time zone."""

    app_token: str
    title: str
    binding: Binding
    profile: str | None = None
    timezone: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)


# ------------------------------------------------------------------- declarations


@frozen_dataclass
class Param:
    """One declared parameter, values kept as written (validators judge them)."""

    index: int
    pointer: str
    name: Any
    kind: Any
    description: Any
    enum: Any = None
    required: Any = True
    list: Any = False
    has_enum: bool = False
    # Keys and values the declaration has that no parameter reads (e.g. "type" written
    # for "kind"), kept so that a finding about a missing key can name what was written.
    unknown: tuple[tuple[str, Any], ...] = ()

    @property
    def name_str(self) -> str:
        return self.name if isinstance(self.name, str) else f"#{self.index + 1}"

    @property
    def is_array(self) -> bool:
        return (isinstance(self.kind, str) and self.kind.endswith("[]")) or self.list is True

    @property
    def element_kind(self) -> str:
        kind = self.kind if isinstance(self.kind, str) else "TEXT"
        return kind[:-2] if kind.endswith("[]") else kind

    @property
    def is_required(self) -> bool:
        return self.required is not False

    @property
    def enum_values(self) -> tuple[Any, ...] | None:
        if self.has_enum and isinstance(self.enum, list):
            return tuple(self.enum)
        return None

    @property
    def description_str(self) -> str:
        return self.description.strip() if isinstance(self.description, str) else ""


@frozen_dataclass
class Declaration:
    """What every function kind shares."""

    function_id: str
    kind: FunctionKind
    file: str  # workspace-relative path of function.json
    name: str
    description: Any
    raw: Mapping[str, Any] = field(repr=False, compare=False)

    @property
    def description_str(self) -> str:
        return self.description.strip() if isinstance(self.description, str) else ""

    @property
    def params(self) -> tuple[Param, ...]:
        return ()


@frozen_dataclass
class DatabaseFunction(Declaration):
    """A Database Function: read-only SQL (main.sql) with its declared params."""

    sql: str | None = None
    sql_file: str = ""
    declared_params: tuple[Param, ...] = ()

    @property
    def params(self) -> tuple[Param, ...]:
        return self.declared_params


@frozen_dataclass
class MutationSpec:
    """A Mutation's spec: which table, what action, its params and the fields it sets."""

    table: Any
    action: Any
    params: tuple[Param, ...]
    set: Mapping[str, Any]
    record_id: Any = None
    precondition: Mapping[str, Any] = field(default_factory=dict)
    clear: Mapping[str, Any] = field(default_factory=dict)


@frozen_dataclass
class Mutation(Declaration):
    """A Mutation: a declared create, update or delete of one table's records."""

    spec: MutationSpec | None = None  # None when the spec's structure is invalid
    # What could be read of the spec even when its structure is invalid (a wrong action,
    # a recordId the action forbids), so that check still judges its names and values in
    # the same run: one run reports every independent error.
    spec_as_written: MutationSpec | None = None

    @property
    def params(self) -> tuple[Param, ...]:
        spec = self.spec or self.spec_as_written
        return spec.params if spec else ()


@frozen_dataclass
class FaaS(Declaration):
    """A FaaS function: a handler (index.mjs) with its inputSchema, timeout and access."""

    input_schema: Any = None
    has_input_schema: bool = False
    timeout_ms: int | None = None
    handler_file: str = ""
    has_handler: bool = False
    # What it may reach (basedb.workspace.faas_access): host rules and secret names, as
    # declared; `basedb check` judges each.
    network_allow: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()


@frozen_dataclass
class AIFunction(Declaration):
    """An AI Function: a capability and prompt with its inputSchema."""

    capability: Any = None
    prompt: Any = None
    input_schema: Any = None


AnyDeclaration = DatabaseFunction | Mutation | FaaS | AIFunction


@frozen_dataclass
class AgentToolsConfig:
    """agent-tools.json; `present` is False when the file does not exist."""

    present: bool
    exclude: tuple[str, ...] = ()
    file: str = "agent-tools.json"
    raw: Any = None


# ---------------------------------------------------------------------- workspace


@dataclass(slots=True)
class Workspace:
    """A loaded site workspace: config, catalog, declarations and agent-tools.json."""

    root: Path
    config: WorkspaceConfig | None
    catalog: Catalog
    declarations: dict[str, AnyDeclaration]
    # Every functionId found on disk by kind, including ones whose declaration is broken;
    # agent-tools ids are judged against this set.
    ids: dict[str, list[FunctionKind]]
    agent_tools: AgentToolsConfig
    load_findings: list[Any]  # list[Finding]; Any keeps this module free of check imports
    catalog_loaded: bool = True
    # The files it was loaded from when they had been read already (`basedb deploy`
    # reads its input files once): their bytes, text and parsed documents.
    contents: Contents | None = field(default=None, repr=False, compare=False)

    def of_kind(self, kind: FunctionKind) -> list[AnyDeclaration]:
        return [d for d in self.declarations.values() if d.kind == kind]

    @property
    def function_ids(self) -> list[str]:
        return sorted(self.ids)
