"""Find and load a workspace: the one loader every command uses."""

from __future__ import annotations

import os
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

from basedb.core.errors import WorkspaceNotFound
from basedb.protocol.findings import Finding
from basedb.workspace import files
from basedb.workspace.catalog import CATALOG_FILE, build_catalog
from basedb.workspace.config import CONFIG_FILE, build_config
from basedb.workspace.declarations import (
    build_declaration,
    declaration_file,
    duplicate_id_findings,
)
from basedb.workspace.model import (
    EMPTY_CATALOG,
    FUNCTION_ID_RE,
    FUNCTION_KINDS,
    IGNORED_DIRS,
    KIND_DIRS,
    AgentToolsConfig,
    AnyDeclaration,
    FunctionKind,
    Workspace,
)

AGENT_TOOLS_FILE = "agent-tools.json"


def find_root(start: Path | str | None = None) -> Path:
    """The nearest directory at or above `start` holding base-database.jsonc."""
    here = Path(start if start is not None else os.getcwd()).resolve()
    for candidate in (here, *here.parents):
        if (candidate / CONFIG_FILE).exists():
            return candidate
    raise WorkspaceNotFound(str(here))


DeclarationLoader = Callable[[Path, FunctionKind, str],
                             tuple[AnyDeclaration | None, list[Finding]]]
"""Reads one function's declaration: (root, kind, functionId) -> (declaration, findings)."""


def load_workspace(root: Path | str, *, skip_ai: bool = False,
                   load_declaration: DeclarationLoader | None = None,
                   known: files.Contents | None = None) -> Workspace:
    """Load everything under `root`. Problems become findings; nothing here raises.
    `load_declaration` reads each function (default: from its files; `WorkspaceLoader`
    passes one that re-reads only what changed). `known` holds the files already read
    (`basedb deploy` reads its input files once): those are not read, decoded or parsed
    again, and the workspace carries them for the request bodies built from them."""
    root = Path(root)
    reader = files.FileReader(root, known)
    read_declaration = load_declaration or _declaration_reader(reader)
    findings: list[Finding] = []

    config = None
    try:
        text = reader.text(CONFIG_FILE, limit=files.LIMIT_CONFIG)
        config, found = build_config(files.parse_jsonc(text, label=CONFIG_FILE))
        findings += found
    except files.FileProblem as p:
        findings.append(_file_finding("WORKSPACE_CONFIG_INVALID", CONFIG_FILE, p))

    catalog, catalog_loaded = EMPTY_CATALOG, False
    try:
        doc = reader.json(CATALOG_FILE, limit=files.LIMIT_CATALOG)
        catalog, found = build_catalog(doc)
        catalog_loaded = not any(f.pointer in ("", "/tables") for f in found)
        findings += found
    except files.FileProblem as p:
        findings.append(_file_finding("CATALOG_INVALID", CATALOG_FILE, p,
                                      fix="Run `basedb catalog pull` to fetch catalog.json."))

    ids: dict[str, list[FunctionKind]] = {}
    declarations: dict[str, AnyDeclaration] = {}
    for kind in FUNCTION_KINDS:
        for function_id in _function_dirs(root, kind, findings):
            ids.setdefault(function_id, []).append(kind)
            if kind == "ai_function" and skip_ai:
                continue  # skipping AI sync means not parsing AI drafts at all
            decl, found = read_declaration(root, kind, function_id)
            findings += found
            if decl is not None and function_id not in declarations:
                declarations[function_id] = decl

    dirs = {function_id: [f"{KIND_DIRS[k]}/{function_id}" for k in kinds]
            for function_id, kinds in ids.items()}
    findings += duplicate_id_findings(ids, dirs, "Rename one of the directories.")

    return Workspace(root=root, config=config, catalog=catalog, declarations=declarations,
                     ids=ids, agent_tools=_load_agent_tools(reader, findings),
                     load_findings=findings, catalog_loaded=catalog_loaded,
                     contents=known)


def _function_dirs(root: Path, kind: FunctionKind, findings: list[Finding]) -> list[str]:
    base = root / KIND_DIRS[kind]
    try:
        entries = sorted(os.scandir(base), key=lambda e: e.name)
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        findings.append(Finding("DECLARATION_INVALID", f"{KIND_DIRS[kind]}/ cannot be read: "
                                f"{exc.strerror}.", KIND_DIRS[kind] + "/",
                                fix=f"Make {KIND_DIRS[kind]}/ a readable directory."))
        return []
    out = []
    for entry in entries:
        if entry.name.startswith(".") or entry.name in IGNORED_DIRS:
            continue
        try:
            is_dir = entry.is_dir()
        except OSError:
            is_dir = False
        if not is_dir:
            continue
        if not FUNCTION_ID_RE.match(entry.name):
            findings.append(Finding(
                "FUNCTION_ID_INVALID",
                f"Directory name {entry.name!r} is not a valid functionId: it must start with "
                "a letter and contain only letters, digits and _ (at most 64 characters).",
                f"{KIND_DIRS[kind]}/{entry.name}/", "", entry.name,
                "Rename the directory, e.g. listTeamLeave or create_period."))
            continue
        out.append(entry.name)
    return out


def _load_declaration(root: Path, kind: FunctionKind, function_id: str,
                      ) -> tuple[AnyDeclaration | None, list[Finding]]:
    return _read_declaration(files.FileReader(root), kind, function_id)


def _declaration_reader(reader: files.FileReader) -> DeclarationLoader:
    def load(root: Path, kind: FunctionKind, function_id: str,
             ) -> tuple[AnyDeclaration | None, list[Finding]]:
        return _read_declaration(reader, kind, function_id)

    return load


def _read_declaration(reader: files.FileReader, kind: FunctionKind, function_id: str,
                      ) -> tuple[AnyDeclaration | None, list[Finding]]:
    rel = declaration_file(kind, function_id)
    folder = f"{KIND_DIRS[kind]}/{function_id}"
    try:
        doc = reader.json(rel, limit=files.LIMIT_DECLARATION)
    except files.FileProblem as p:
        return None, [_file_finding("DECLARATION_INVALID", rel, p, function_id=function_id)]
    extra: list[Finding] = []
    sql: str | None = None
    has_handler = True
    if kind == "database_function":
        sql_rel = f"{folder}/main.sql"
        try:
            sql = reader.text(sql_rel, limit=files.LIMIT_SQL)
        except files.FileProblem as p:
            extra.append(_file_finding("DECLARATION_INVALID", sql_rel, p,
                                       function_id=function_id))
    elif kind == "faas":
        has_handler = reader.is_file(f"{folder}/index.mjs")
    decl, found = build_declaration(kind, function_id, doc, sql=sql, has_handler=has_handler)
    return decl, extra + found


def _load_agent_tools(reader: files.FileReader, findings: list[Finding]) -> AgentToolsConfig:
    if not reader.present(AGENT_TOOLS_FILE):
        return AgentToolsConfig(present=False)
    try:
        doc = reader.json(AGENT_TOOLS_FILE, limit=files.LIMIT_CONFIG)
    except files.FileProblem as p:
        findings.append(_file_finding("AGENT_TOOLS_INVALID", AGENT_TOOLS_FILE, p))
        return AgentToolsConfig(present=True, raw=None)
    exclude = doc.get("exclude") if isinstance(doc, dict) else None
    ids = tuple(x for x in exclude if isinstance(x, str)) if isinstance(exclude, list) else ()
    return AgentToolsConfig(present=True, exclude=ids, raw=doc)


def _file_finding(code: str, file: str, problem: files.FileProblem, *,
                  function_id: str | None = None, fix: str | None = None) -> Finding:
    return Finding(code, problem.message, file, "", function_id, fix or problem.fix,
                   line=problem.line, column=problem.column)


def read_declaration_document(root: Path, kind: FunctionKind, function_id: str) -> Any:
    rel = declaration_file(kind, function_id)
    return files.read_json(root / rel, label=rel, limit=files.LIMIT_DECLARATION)


class WorkspaceLoader:
    """Loads one workspace again and again (`basedb dev`): the small workspace files
    every time, a function's files only when it is new or named as changed.

        loader = WorkspaceLoader(root)
        ws = loader.load()                      # everything
        ws = loader.load(changed={"listTasks"})  # re-reads listTasks only
    """

    def __init__(self, root: Path, *, skip_ai: bool = False) -> None:
        self.root = root
        self.skip_ai = skip_ai
        self._read: dict[tuple[FunctionKind, str],
                         tuple[AnyDeclaration | None, list[Finding]]] = {}
        self.reread: list[str] = []  # the functions the last load read from disk

    def load(self, changed: Collection[str] | None = None) -> Workspace:
        """The workspace now; `changed` None re-reads every function."""
        if changed is None:
            self._read.clear()
        else:
            for key in [key for key in self._read if key[1] in changed]:
                del self._read[key]
        self.reread = []
        seen: set[tuple[FunctionKind, str]] = set()

        def read(root: Path, kind: FunctionKind, function_id: str,
                 ) -> tuple[AnyDeclaration | None, list[Finding]]:
            key = (kind, function_id)
            seen.add(key)
            found = self._read.get(key)
            if found is None:
                found = self._read[key] = _load_declaration(root, kind, function_id)
                self.reread.append(function_id)
            return found

        ws = load_workspace(self.root, skip_ai=self.skip_ai, load_declaration=read)
        for key in [key for key in self._read if key not in seen]:
            del self._read[key]  # the directory is gone
        return ws
