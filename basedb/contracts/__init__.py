"""Typed contracts generated from a workspace's declarations (`basedb contracts generate`).

    generate(ws, lang="ts")   -> GeneratedFile: the file's workspace-relative path and text
    write(ws, lang="ts")      -> FileStatus: written, or unchanged (the file is not touched)
    compare(ws, lang="ts")    -> FileStatus: unchanged, stale (with a diff) or missing
    stale_findings(ws)        -> CONTRACTS_STALE for each generated file that is out of date

Output is a pure function of the declarations: sorted, no timestamps, LF line endings, and
a header carrying the SHA-256 of the canonical input, so the same workspace always gives
the same bytes. A file that differs only by CRLF line endings (a Git checkout with
core.autocrlf) counts as up to date and is left as it is.

May import: basedb.check, basedb.workspace, basedb.core. (`check` sits below: callers
hand `stale_findings` to `check_workspace`.)
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Literal

from basedb.contracts.inputs import SkippedDeclaration, collect_inputs
from basedb.contracts.python import render_python
from basedb.contracts.typescript import render_typescript
from basedb.core.atomic import write_file_atomically
from basedb.core.errors import InputError, UsageError
from basedb.core.frozen import frozen_dataclass
from basedb.protocol.findings import Finding
from basedb.workspace.model import Workspace

LANGS: tuple[str, ...] = ("ts", "python")
OUTPUT_PATHS: dict[str, str] = {
    "ts": "src/generated/function-inputs.ts",
    "python": "src/generated/function_inputs.py",
}
FIX = "Run `basedb contracts generate` to regenerate it from the declarations."

Status = Literal["written", "unchanged", "stale", "missing"]


@frozen_dataclass
class GeneratedFile:
    path: str  # relative to the workspace root, with forward slashes
    content: str
    input_hash: str
    skipped: tuple[SkippedDeclaration, ...] = ()

    @property
    def data(self) -> bytes:
        return self.content.encode("utf-8")


@frozen_dataclass
class FileStatus:
    path: str
    status: Status
    diff: str = ""  # a unified diff from the file on disk to the generated text, when stale


def generate(ws: Workspace, *, lang: str = "ts") -> GeneratedFile:
    """The contracts file for `lang` ("ts" or "python"), generated from usable declarations."""
    if lang not in LANGS:
        raise UsageError(f"Unknown contracts language {lang!r}.",
                         hint=f"Use one of: {', '.join(LANGS)}.")
    inputs = collect_inputs(ws)
    content = render_typescript(inputs) if lang == "ts" else render_python(inputs)
    return GeneratedFile(path=OUTPUT_PATHS[lang], content=content,
                         input_hash=inputs.input_hash, skipped=inputs.skipped)


def existing_langs(ws: Workspace) -> list[str]:
    """Languages whose generated file exists in the workspace."""
    return [lang for lang in LANGS if _exists(ws.root / OUTPUT_PATHS[lang])]


def write(ws: Workspace, lang: str = "ts", *,
          generated: GeneratedFile | None = None) -> FileStatus:
    """Write the file atomically; leave it untouched (same mtime) when it is up to date."""
    generated = generated or generate(ws, lang=lang)
    target = ws.root / generated.path
    current = _read_existing(target, generated.path)
    if current is not None and _same_text(current, generated.data):
        return FileStatus(generated.path, "unchanged")
    _write_atomically(target, generated.data, generated.path)
    return FileStatus(generated.path, "written")


def compare(ws: Workspace, lang: str = "ts", *,
            generated: GeneratedFile | None = None) -> FileStatus:
    """Whether the file on disk equals what `generate` would write; nothing is written."""
    generated = generated or generate(ws, lang=lang)
    target = ws.root / generated.path
    current = _read_existing(target, generated.path)
    if current is None:
        return FileStatus(generated.path, "missing")
    if _same_text(current, generated.data):
        return FileStatus(generated.path, "unchanged")
    old = current.decode("utf-8", errors="replace").splitlines(keepends=True)
    new = generated.content.splitlines(keepends=True)
    diff = "".join(difflib.unified_diff(old, new, fromfile=f"a/{generated.path}",
                                        tofile=f"b/{generated.path}"))
    return FileStatus(generated.path, "stale", diff)


def stale_findings(ws: Workspace) -> list[Finding]:
    """CONTRACTS_STALE for every generated contracts file on disk that is out of date."""
    findings = []
    for lang in existing_langs(ws):
        path = OUTPUT_PATHS[lang]
        try:
            status = compare(ws, lang).status
        except InputError as error:
            findings.append(Finding("CONTRACTS_STALE", error.message, path, "", fix=FIX))
            continue
        if status == "stale":
            findings.append(Finding(
                "CONTRACTS_STALE",
                f"{path} does not match the current declarations (it was generated from "
                "other declarations, or edited by hand).", path, "", fix=FIX))
    return findings


def _same_text(current: bytes, generated: bytes) -> bool:
    """Whether the file on disk holds the generated text, in LF or CRLF line endings: a
    Git checkout with core.autocrlf (the Windows default) turns LF into CRLF, and such a
    file is not out of date."""
    return current == generated or current.replace(b"\r\n", b"\n") == generated


def _file_error(message: str, *, hint: str) -> InputError:
    return InputError(message, code="CONTRACTS_WRITE_FAILED", hint=hint)


def _exists(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def _read_existing(target: Path, label: str) -> bytes | None:
    if not _exists(target):
        return None
    try:
        return target.read_bytes()
    except IsADirectoryError:
        raise _file_error(f"{label} is a directory, not a file.",
                         hint=f"Remove or rename the directory {label}, then run "
                              "`basedb contracts generate`.") from None
    except FileNotFoundError:  # a dangling symlink: writing replaces the link
        return None
    except OSError as exc:
        raise _file_error(f"{label} cannot be read: {exc.strerror}.",
                         hint=f"Make {label} a readable regular file, or remove it.") from None


def _write_atomically(target: Path, data: bytes, label: str) -> None:
    folder = target.parent
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise _file_error(f"Cannot create {os.path.dirname(label)}/: a file is in the way.",
                         hint=f"Remove or rename the file blocking {os.path.dirname(label)}/.",
                         ) from None
    except OSError as exc:
        raise _file_error(f"Cannot create {os.path.dirname(label)}/: {exc.strerror}.",
                         hint="Check the permissions of the workspace directory.") from None
    if target.is_dir() and not target.is_symlink():
        raise _file_error(f"{label} is a directory, not a file.",
                         hint=f"Remove or rename the directory {label}.")
    try:
        mode = target.stat().st_mode & 0o777
    except OSError:
        mode = 0o644  # a new file: readable like any other source file
    try:
        write_file_atomically(target, data, mode=mode)
    except OSError as exc:
        raise _file_error(f"Cannot write {label}: {exc.strerror}.",
                         hint=f"Check that {os.path.dirname(label)}/ is writable.") from None
