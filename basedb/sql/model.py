"""What SQL analysis produces: problems, output columns, and how names resolved.

The resolution maps parse-tree nodes (by `id()`) to the catalog tables and fields they
name, so that the compiler can rewrite exactly what the analysis understood instead of
resolving names a second time. The tree is shared (analyses are cached): readers must
never mutate it; the compiler works on a copy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from basedb.core.frozen import frozen_dataclass
from basedb.sql.problems import SqlProblem
from basedb.workspace.model import Field, Table

if TYPE_CHECKING:
    from sqlglot import exp


@frozen_dataclass
class ParamBinding:
    """A `$n` compared with a catalog field in main.sql (`field = $n`, `field IN ($n)`);
    `provable` when the comparison sits on a purely conjunctive path of its query."""

    param_index: int  # declaration order; $1 is 0
    table: Table
    field: Field
    provable: bool


@frozen_dataclass
class OutputColumn:
    """A result column: the name a PostgreSQL user sees, its type, and the field it comes
    from when the projection is a direct field reference (so multi-valued cells can be
    decoded)."""

    name: str
    table: Table | None = None
    field: Field | None = None
    type: str = ""  # its PostgreSQL type (basedb.sql.pgtypes); "" before typing


@frozen_dataclass
class ColumnRef:
    """What one column reference in the SQL means.

    kind "field": a catalog field (or `record_id`) of the FROM item `qualifier`;
    "derived": column `name` of a CTE or subquery `qualifier` (table/field give its
    origin when that column is a direct field reference); "output": an output column
    name used in ORDER BY / GROUP BY / HAVING.
    """

    kind: Literal["field", "derived", "output"]
    qualifier: str | None
    name: str
    table: Table | None = None
    field: Field | None = None


@frozen_dataclass
class SourceRef:
    """A table reference in FROM / JOIN: a catalog table or a CTE, under `alias`."""

    alias: str
    table: Table | None = None
    cte_name: str | None = None


@frozen_dataclass
class StarColumn:
    """One column a `*` or `t.*` expands to."""

    qualifier: str | None
    column: OutputColumn
    physical: bool  # True: a catalog field of `qualifier`; False: a named column


@dataclass(slots=True)
class Resolution:
    columns: dict[int, ColumnRef] = field(default_factory=dict)
    sources: dict[int, SourceRef] = field(default_factory=dict)
    stars: dict[int, tuple[StarColumn, ...]] = field(default_factory=dict)
    # Output name of each (non-star) projection.
    names: dict[int, str] = field(default_factory=dict)
    # JOIN … USING: per join node, the (left, right) column pair of each name.
    usings: dict[int, tuple[tuple[ColumnRef, ColumnRef], ...]] = field(default_factory=dict)


@frozen_dataclass
class Typing:
    """What typing (`basedb.sql.typing`) learned: PostgreSQL types and
    conversions, by parse-tree node id."""

    types: Mapping[int, str]
    coercions: Mapping[int, str]  # node id -> the type its value is converted to
    params: Mapping[int, str]  # $n -> its type
    bounds: Mapping[int, str]  # node id of a LIMIT / OFFSET value -> "limit" / "offset"
    bound_params: frozenset[int]  # the $n written as a LIMIT or OFFSET (never negative)
    columns: tuple[str, ...]  # the type of each result column


@frozen_dataclass
class SqlAnalysis:
    """Everything `analyze_sql` learned about one main.sql."""

    sql: str
    param_count: int
    problems: tuple[SqlProblem, ...]
    tree: exp.Expression | None
    tables: tuple[Table, ...] = ()
    params: frozenset[int] = frozenset()
    bindings: tuple[ParamBinding, ...] = ()
    columns: tuple[OutputColumn, ...] = ()
    uses_current_user: bool = False
    resolved: bool = False
    resolution: Resolution | None = None
    typing: Typing | None = None

    @property
    def ok(self) -> bool:
        return not self.problems


def line_column(sql: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    offset = max(0, min(offset, len(sql)))
    line = sql.count("\n", 0, offset) + 1
    return line, offset - (sql.rfind("\n", 0, offset) + 1) + 1


def node_offset(node: Any) -> int | None:
    """Character offset where a parsed node starts: its leftmost positioned token."""
    # Only nodes built from tokens carry positions; `_meta` is read directly because the
    # public `meta` property would allocate a dict on every node.
    metas = (getattr(sub, "_meta", None) for sub in node.walk())
    starts = [meta["start"] for meta in metas if meta and "start" in meta]
    return min(starts) if starts else None
