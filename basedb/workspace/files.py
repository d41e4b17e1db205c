"""Reading workspace files defensively.

Every file a user controls can be missing, a directory, a dangling symlink or a loop,
binary, not UTF-8, enormous, or not JSON. Each of those becomes one `FileProblem` whose
message says what is wrong with which file; callers turn it into a finding or an error.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from basedb.workspace.jsonc import plain_json, scan

KIB = 1024
MIB = 1024 * KIB

# Generous limits: a declaration is a few KB; the biggest real catalog is a few MB.
LIMIT_DECLARATION = 1 * MIB
LIMIT_SQL = 256 * KIB
LIMIT_CONFIG = 1 * MIB
LIMIT_CATALOG = 64 * MIB


class FileProblem(Exception):
    """A file that cannot be used, with a sentence on how to fix it."""

    def __init__(self, message: str, fix: str, *, line: int | None = None,
                 column: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.fix = fix
        self.line = line
        self.column = column


def human_size(size: int) -> str:
    if size >= MIB:
        return f"{size / MIB:.1f} MB"
    if size >= KIB:
        return f"{size / KIB:.1f} KB"
    return f"{size} bytes"


def read_text(path: Path, *, label: str, limit: int) -> str:
    """Read a UTF-8 text file, refusing anything that is not a reasonable text file."""
    try:
        # One open + fstat instead of stat + is_file + read: check reads thousands of files.
        with open(path, "rb") as handle:
            st = os.fstat(handle.fileno())
            if not stat.S_ISREG(st.st_mode):
                raise FileProblem(
                    f"{label} is a directory or special file, not a regular file.",
                    f"Replace {label} with a regular file.",
                )
            if st.st_size > limit:
                raise FileProblem(
                    f"{label} is {human_size(st.st_size)}; at most {human_size(limit)} is "
                    "accepted.",
                    f"Reduce {label} to under {human_size(limit)}.",
                )
            # The size found plus one byte shows growth; asking for the limit instead
            # would allocate a limit-sized buffer for every small file.
            data = handle.read(min(st.st_size, limit) + 1)
            if st.st_size < len(data) <= limit:  # it grew since fstat: read the rest
                data += handle.read(limit + 1 - len(data))
    except FileNotFoundError:
        if path.is_symlink():
            raise FileProblem(f"{label} is a symlink to a file that does not exist.",
                              f"Point {label} at an existing file or replace it.") from None
        raise FileProblem(f"{label} does not exist.", f"Create {label}.") from None
    except OSError as exc:
        raise os_problem(exc, label) from None
    if len(data) > limit:  # the file grew between fstat and read
        raise FileProblem(
            f"{label} is larger than {human_size(limit)}.",
            f"Reduce {label} to under {human_size(limit)}.",
        )
    return decode_text(data, label=label)


class Contents:
    """The files of a workspace as read once, by workspace-relative POSIX path: the bytes
    `basedb deploy` fingerprints and ships, and the text and parsed document of each,
    made on first use and kept. The loader builds the workspace from them and the
    deploy's request bodies and content hashes take them from here, so no file is
    decoded or parsed twice. Documents are shared: whoever takes one must not change it."""

    def __init__(self, data: Mapping[str, bytes]) -> None:
        self.data: Mapping[str, bytes] = data
        self._texts: dict[str, str] = {}
        self._documents: dict[str, Any] = {}

    def __contains__(self, rel: object) -> bool:
        return rel in self.data

    def text(self, rel: str) -> str:
        """The file's text (see `decode_text`); KeyError for a path not among them."""
        found = self._texts.get(rel)
        if found is None:
            found = self._texts[rel] = decode_text(self.data[rel], label=rel)
        return found

    def document(self, rel: str) -> Any:
        """The file parsed as strict JSON (see `parse_json`)."""
        if rel in self._documents:
            return self._documents[rel]
        found = self._documents[rel] = parse_json(self.text(rel), label=rel)
        return found


class FileReader:
    """Reads a workspace's files by workspace-relative POSIX path, each labelled by that
    path: from disk, or from `known`, the contents already read of some of them (`basedb
    deploy` reads every input file once, to fingerprint and ship it, and loads the
    workspace from the same bytes). A known file is judged as `read_text` judges it on
    disk (size limit, NUL bytes, UTF-8); any other path is read from disk."""

    def __init__(self, root: Path, known: Contents | None = None) -> None:
        self.root = root
        self.known = known if known is not None else Contents({})

    def text(self, rel: str, *, limit: int) -> str:
        data = self.known.data.get(rel)
        if data is None:
            return read_text(self.root / rel, label=rel, limit=limit)
        self._within(rel, data, limit)
        return self.known.text(rel)

    def json(self, rel: str, *, limit: int) -> Any:
        data = self.known.data.get(rel)
        if data is None:
            return parse_json(read_text(self.root / rel, label=rel, limit=limit), label=rel)
        self._within(rel, data, limit)
        return self.known.document(rel)

    @staticmethod
    def _within(rel: str, data: bytes, limit: int) -> None:
        if len(data) > limit:
            raise FileProblem(
                f"{rel} is {human_size(len(data))}; at most {human_size(limit)} is accepted.",
                f"Reduce {rel} to under {human_size(limit)}.",
            )

    def is_file(self, rel: str) -> bool:
        return rel in self.known or (self.root / rel).is_file()

    def present(self, rel: str) -> bool:
        """Whether anything (even a dangling symlink) is at `rel`."""
        if rel in self.known:
            return True
        path = self.root / rel
        return path.exists() or path.is_symlink()


def decode_text(data: bytes, *, label: str) -> str:
    if b"\x00" in data:
        raise FileProblem(
            f"{label} is binary (it contains NUL bytes), not text.",
            f"Replace {label} with a UTF-8 text file.",
        )
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FileProblem(
            f"{label} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}, "
            f"line {line}).",
            f"Save {label} as UTF-8.",
            line=line,
        ) from None
    return text[1:] if text.startswith("\ufeff") else text


def os_problem(exc: OSError, label: str) -> FileProblem:
    if exc.errno == errno.ELOOP:
        return FileProblem(f"{label} is a symlink loop.",
                           f"Replace {label} with a regular file.")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return FileProblem(f"{label} cannot be read: permission denied.",
                           f"Make {label} readable by the current user.")
    if exc.errno == errno.EISDIR:
        return FileProblem(f"{label} is a directory, not a regular file.",
                           f"Replace {label} with a regular file.")
    return FileProblem(f"{label} cannot be read: {os.strerror(exc.errno or 0) or exc}.",
                       f"Check that {label} is a readable regular file.")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON value")


# `json.loads(text, parse_constant=…)` would build a decoder for every call (a workspace
# has a declaration per function); `_loads` is that call, with one decoder made once.
_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def _loads(text: str) -> Any:
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise json.JSONDecodeError("Unexpected UTF-8 BOM (decode using utf-8-sig)", text, 0)
    return _DECODER.decode(text)


def parse_json(text: str, *, label: str) -> Any:
    """Strict JSON (no NaN/Infinity), with the line and column of a syntax error."""
    try:
        return _loads(text)
    except json.JSONDecodeError as exc:
        raise FileProblem(
            f"{label} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.",
            f"Fix the JSON syntax in {label} (comments and trailing commas are not allowed).",
            line=exc.lineno,
            column=exc.colno,
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = "it nests too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise FileProblem(f"{label} is not valid JSON: {reason}.",
                          f"Fix the JSON in {label}.") from None


def parse_jsonc(text: str, *, label: str) -> Any:
    """JSON with comments and trailing commas (the format of base-database.jsonc)."""
    try:
        # Plain JSON once comments and trailing commas are gone: the common case, and
        # much faster than json5, which stays the parser (and error reporter) otherwise.
        plain = plain_json(text, scan(text, jsonc=True))
        if plain is not None:
            return _loads(plain)
    except (ValueError, RecursionError):
        pass
    # Lazy: json5 loads only for JSONC that plain JSON cannot read.
    import json5  # noqa: PLC0415

    try:
        return json5.loads(text)
    except ValueError as exc:
        reason, line, column = _json5_error(exc)
        raise FileProblem(
            f"{label} is not valid JSONC: {reason}.",
            f"Fix the syntax of {label}; comments and trailing commas are allowed.",
            line=line, column=column,
        ) from None
    except RecursionError:
        raise FileProblem(f"{label} is not valid JSONC: it nests too deeply.",
                          f"Fix the syntax of {label}.") from None


_JSON5_ERROR_RE = re.compile(r"^<string>:(\d+) (.+) at column (\d+)\Z", re.DOTALL)


def _json5_error(exc: ValueError) -> tuple[str, int | None, int | None]:
    """json5 says `<string>:LINE Reason at column COL`; say it the way parse_json does."""
    match = _JSON5_ERROR_RE.match(str(exc))
    if match is None:
        return str(exc), None, None
    line, reason, column = int(match.group(1)), match.group(2), int(match.group(3))
    return f"{reason[:1].lower()}{reason[1:]} at line {line} column {column}", line, column


def read_json(path: Path, *, label: str, limit: int) -> Any:
    return parse_json(read_text(path, label=label, limit=limit), label=label)
