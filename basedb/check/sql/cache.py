"""A content-keyed cache of SQL analysis results for `basedb check`.

Parsing and resolving 600 queries costs more than everything else `check` does, and
between two runs almost no main.sql changes. The cache stores, per query, exactly what
the check rules use — the problems, the `$n` used, the parameter bindings — under a key
made of everything the result depends on: the SQL text, the number of declared params,
whether names were resolved, the catalog, the sqlglot release and basedb's own analysis
code. A hit therefore yields the same findings and hints as a fresh analysis; a query
whose key changed is analysed again. With every query cached, `check` does not even
import sqlglot.

The cache lives in `<workspace>/.base-database-cli/cache/` (git-ignored local state).
Anything wrong with it — unreadable, corrupt, another version, a read-only workspace —
only costs speed: it is ignored or rebuilt, never reported.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from basedb.core.frozen import frozen_dataclass

try:
    # BLAKE2 from the interpreter's own module: importing hashlib initialises OpenSSL,
    # which costs a small check more than reading its cached results.
    from _blake2 import blake2b
except ImportError:  # an interpreter built without it
    from hashlib import blake2b

from basedb import __version__
from basedb.sql.model import ParamBinding
from basedb.sql.problems import SqlProblem
from basedb.workspace.catalog import catalog_to_dict
from basedb.workspace.model import Catalog

if TYPE_CHECKING:
    from basedb.sql.model import SqlAnalysis

FORMAT = 1
CACHE_DIR = Path(".base-database-cli") / "cache"
CACHE_FILE = "sql-analysis.json"
# The modules whose behaviour a cached result reflects.
_CODE_DIRS = ("check/sql", "check")
_CODE_FILES = ("protocol/findings.py", "protocol/codes.py", "workspace/model.py",
               "workspace/catalog.py")


@frozen_dataclass
class CachedAnalysis:
    """The part of a SqlAnalysis that the check rules read."""

    problems: tuple[SqlProblem, ...]
    params: frozenset[int]
    bindings: tuple[ParamBinding, ...]


class AnalysisCache:
    def __init__(self, path: Path, catalog: Catalog, salt: str,
                 entries: dict[str, Any]) -> None:
        self.path = path
        self.catalog = catalog
        self.salt = salt
        self._old = entries
        self._new: dict[str, Any] = {}

    @classmethod
    def open(cls, root: Path, catalog: Catalog) -> AnalysisCache:
        path = root / CACHE_DIR / CACHE_FILE
        salt = "\0".join((str(FORMAT), __version__, _sqlglot_stamp(), _code_stamp(),
                          _catalog_digest(catalog)))
        entries: dict[str, Any] = {}
        with contextlib.suppress(OSError, ValueError, AttributeError, TypeError):
            doc = json.loads(path.read_text(encoding="utf-8"))
            if doc.get("format") == FORMAT and isinstance(doc.get("entries"), dict):
                entries = doc["entries"]
        return cls(path, catalog, _digest(salt.encode()), entries)

    def start_run(self) -> None:
        """Begin another run over the same cache: what the last run used becomes what
        there is, so `save` keeps exactly the entries of the newest run."""
        if self._new:
            self._old, self._new = self._new, {}

    def key(self, sql: str, param_count: int, resolve: bool,
            kinds: list[str | None] | None = None) -> str:
        shown = ",".join(kind or "" for kind in kinds or ())
        text = f"{self.salt}\0{param_count}\0{shown}\0{int(resolve)}\0{sql}"
        return _digest(text.encode("utf-8", "surrogatepass"))

    def get(self, key: str) -> CachedAnalysis | None:
        entry = self._old.get(key) or self._new.get(key)
        if entry is None:
            return None
        try:
            cached = self._decode(entry)
        except (KeyError, TypeError, ValueError, AttributeError):
            return None
        self._new[key] = entry
        return cached

    def put(self, key: str, analysis: SqlAnalysis | CachedAnalysis) -> None:
        self._new[key] = {
            "problems": [[p.code, p.message, p.fix, p.line, p.column]
                         for p in analysis.problems],
            "params": sorted(analysis.params),
            "bindings": [[b.param_index, b.table.table_id, b.field.field_id, b.provable]
                         for b in analysis.bindings],
        }

    def save(self) -> None:
        """Write the entries used or made by this run (so stale ones drop out)."""
        if self._new == self._old:
            return

        # Lazy: tempfile loads only when the cache changed, not on a check that hits.
        from basedb.core.atomic import write_file_atomically  # noqa: PLC0415

        doc = {"format": FORMAT, "entries": self._new}
        with contextlib.suppress(OSError):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore = self.path.parent / ".gitignore"
            if not ignore.exists():
                ignore.write_text("*\n", encoding="utf-8")
            write_file_atomically(self.path, json.dumps(doc, ensure_ascii=False,
                                                        separators=(",", ":")))

    def _decode(self, entry: dict[str, Any]) -> CachedAnalysis:
        problems = tuple(SqlProblem(code, message, fix, line, column)
                         for code, message, fix, line, column in entry["problems"])
        bindings = []
        for index, table_id, field_id, provable in entry["bindings"]:
            table = self.catalog.table(table_id)
            field = table.field(field_id) if table is not None else None
            if table is None or field is None:
                raise ValueError("binding no longer resolves")
            bindings.append(ParamBinding(int(index), table, field, bool(provable)))
        return CachedAnalysis(problems, frozenset(int(n) for n in entry["params"]),
                              tuple(bindings))


def _catalog_digest(catalog: Catalog) -> str:
    canonical = json.dumps(catalog_to_dict(catalog), ensure_ascii=False, sort_keys=True)
    return _digest(canonical.encode("utf-8"))


def _digest(data: bytes) -> str:
    return blake2b(data, digest_size=32).hexdigest()


def _sqlglot_stamp() -> str:
    # The release, read from its version file: importing sqlglot (or importlib.metadata)
    # would cost more than the cache saves.
    spec = importlib.util.find_spec("sqlglot")
    if spec is None or spec.origin is None:
        return "none"
    try:
        return (Path(spec.origin).parent / "_version.py").read_text(encoding="utf-8")
    except OSError:
        return spec.origin


def _code_stamp() -> str:
    """Size and mtime of the analysis code, so an edited checkout never reuses results."""
    package = Path(__file__).resolve().parents[2]
    parts = []
    for directory in _CODE_DIRS:
        for path in sorted((package / directory).glob("*.py")):
            with contextlib.suppress(OSError):
                st = path.stat()
                parts.append(f"{path.name}:{st.st_size}:{st.st_mtime_ns}")
    for name in _CODE_FILES:
        with contextlib.suppress(OSError):
            st = (package / name).stat()
            parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return "|".join(parts)
