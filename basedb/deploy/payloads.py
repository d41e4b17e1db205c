"""The draft request bodies of a deployment, built from the files it ships.

The bodies are made from the same bytes that go into site.zip (the `InputFile`s), so
the drafts the platform validates and the archive it stores describe one workspace; they
take each file's text and parsed document from `basedb.workspace.files.Contents`, where
the workspace was loaded from, so that no file is decoded or parsed twice.
Comparisons for read-backs live here too: after a write whose outcome is unknown, the
pipeline reads the draft back and asks whether it is what was sent.

A function the platform already holds (its content hash is among those GET draft/hashes
answered) is sent as `{functionId, contentHash}` instead (`by_reference`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from basedb.core.content_hash import RESEND_KEY, function_content_hash
from basedb.core.errors import ApiError, InputError
from basedb.core.site_zip import InputFile
from basedb.protocol import Code
from basedb.workspace import files
from basedb.workspace.declarations import declaration_file, handler_file, sql_file
from basedb.workspace.model import FunctionKind

CODE_LISTS: dict[str, FunctionKind] = {
    "databaseFunctions": "database_function",
    "mutations": "mutation",
    "faas": "faas",
}
AI_LIST = "aiFunctions"
TIMEZONE = "timezone"


def ids_of_kind(ids: Mapping[str, list[FunctionKind]], kind: FunctionKind) -> list[str]:
    """The functionIds whose directory is of `kind`, sorted."""
    return sorted(function_id for function_id, kinds in ids.items() if kind in kinds)


def _text(contents: files.Contents, path: str) -> str:
    try:
        return contents.text(path)
    except KeyError:
        raise _missing(path) from None
    except files.FileProblem as problem:
        raise InputError(problem.message, code="INPUT_INVALID", hint=problem.fix) from None


def _document(contents: files.Contents, path: str) -> Any:
    try:
        return contents.document(path)
    except KeyError:
        raise _missing(path) from None
    except files.FileProblem as problem:
        raise InputError(problem.message, code="INPUT_INVALID", hint=problem.fix) from None


def _missing(path: str) -> InputError:
    return InputError(f"{path} is missing from the deployment's input files.",
                      code="INPUT_MISSING",
                      hint=f"Restore {path}, or remove its function directory, then run "
                           "`basedb check`.")


def functions_body(contents: files.Contents, ids: Mapping[str, list[FunctionKind]],
                   timezone: str = "UTC", *,
                   referenced_hash: Callable[[str, str], str | None] | None = None,
                   ) -> dict[str, Any]:
    """The PUT draft/functions body: every Database Function, Mutation and FaaS, and the
    time zone they run in. A function for which `referenced_hash(list key, functionId)`
    gives a content hash is sent as `{functionId, contentHash}`, without reading its
    files. The others' files come from `contents`, the deployment's input files as the
    workspace was loaded from them (decoded and parsed once)."""
    body: dict[str, Any] = {key: [] for key in CODE_LISTS}
    for key, kind in CODE_LISTS.items():
        for function_id in ids_of_kind(ids, kind):
            named = referenced_hash(key, function_id) if referenced_hash is not None else None
            if named is not None:
                body[key].append({"functionId": function_id, "contentHash": named})
                continue
            item: dict[str, Any] = {
                "functionId": function_id,
                "declaration": _document(contents, declaration_file(kind, function_id)),
            }
            if kind == "database_function":
                item["sql"] = _text(contents, sql_file(function_id))
            elif kind == "faas":
                item["handler"] = _text(contents, handler_file(function_id))
            body[key].append(item)
    body[TIMEZONE] = timezone
    return body


def content_hashes(inputs: list[InputFile], contents: files.Contents,
                   ids: Mapping[str, list[FunctionKind]],
                   remembered: Mapping[str, str] | None = None,
                   ) -> tuple[dict[str, dict[str, str]], dict[str, str]]:
    """The content hash (`basedb.core.content_hash`) of every Database Function, Mutation
    and FaaS that can be sent, by body list and functionId; and the memo of them to
    remember for the next deploy.

    A memo key is what a hash is computed from: the kind, the functionId and the SHA-256
    of each of the function's files (function.json, and main.sql or index.mjs). Files
    with those digests give that hash, so a function `remembered` under its key is not
    parsed at all; the others' files come from `contents`, as `functions_body`'s do."""
    known = remembered or {}
    memo: dict[str, str] = {}
    by_path = {item.path: item for item in inputs}
    hashes: dict[str, dict[str, str]] = {key: {} for key in CODE_LISTS}
    for key, kind in CODE_LISTS.items():
        for function_id in ids_of_kind(ids, kind):
            declaration = by_path.get(declaration_file(kind, function_id))
            code_path = (sql_file(function_id) if kind == "database_function"
                         else handler_file(function_id) if kind == "faas" else None)
            code = by_path.get(code_path) if code_path is not None else None
            if declaration is None or (code_path is not None and code is None):
                continue  # not sendable: functions_body names the missing file
            digests = f"{declaration.sha256}/{code.sha256 if code is not None else ''}"
            memo_key = f"{kind}/{function_id}/{digests}"
            found = known.get(memo_key)
            if found is None:
                text = _text(contents, code.path) if code is not None else None
                found = function_content_hash(
                    kind, function_id, _document(contents, declaration.path),
                    text if kind == "database_function" else None,
                    text if kind == "faas" else None)
            hashes[key][function_id] = memo[memo_key] = found
    return hashes, memo


def by_reference(body: Mapping[str, Any], held: Mapping[str, Any]) -> dict[str, Any]:
    """`body` with every function whose content hash the platform holds for that
    functionId (`held`: a GET draft/hashes answer) sent as `{functionId, contentHash}`."""
    out: dict[str, Any] = dict(body)
    for key, kind in CODE_LISTS.items():
        hashes = held.get(key)
        if not isinstance(hashes, dict) or not hashes:
            continue
        items = []
        for item in body.get(key, []):
            content_hash = function_content_hash(kind, item["functionId"], item["declaration"],
                                                 item.get("sql"), item.get("handler"))
            items.append({"functionId": item["functionId"], "contentHash": content_hash}
                         if hashes.get(item["functionId"]) == content_hash else item)
        out[key] = items
    return out


def held_alike(held: Mapping[str, Any], local: Mapping[str, Mapping[str, str]],
               ) -> Callable[[str, str], str | None]:
    """For `functions_body(referenced_hash=...)`: the content hash to name a function by,
    when the platform holds it (`held`, a GET draft/hashes answer) with the hash the
    local files have (`local`, from `content_hashes`)."""
    def referenced_hash(key: str, function_id: str) -> str | None:
        hashes = held.get(key)
        mine = local.get(key, {}).get(function_id)
        if mine is not None and isinstance(hashes, dict) and hashes.get(function_id) == mine:
            return mine
        return None

    return referenced_hash


def referenced(body: Mapping[str, Any]) -> int:
    """How many functions of a PUT draft/functions body are sent by content hash."""
    return sum(1 for key in CODE_LISTS for item in body.get(key, [])
               if "contentHash" in item)


def resend_asked(error: ApiError) -> bool:
    """Whether the platform refused content named by hash that it does not hold (9499
    with data.resend): sending it in full is the fix."""
    return (error.code == Code.BAD_REQUEST and isinstance(error.data, dict)
            and isinstance(error.data.get(RESEND_KEY), list))


def ai_body(contents: files.Contents, keys: list[str]) -> dict[str, list[dict[str, Any]]]:
    """The PUT draft/ai-functions body: every local AI Function."""
    return {AI_LIST: [{"key": key,
                       "declaration": _document(contents, declaration_file("ai_function", key))}
                      for key in sorted(keys)]}


def function_counts(body: Mapping[str, Any]) -> dict[str, int]:
    return {kind: len(body.get(key, [])) for key, kind in CODE_LISTS.items()}


def _by_id(items: Any, id_key: str) -> dict[str, Any] | None:
    if not isinstance(items, list):
        return None
    found: dict[str, Any] = {}
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get(id_key), str):
            return None
        found[item[id_key]] = item
    return found


def same_lists(sent: Mapping[str, Any], stored: Mapping[str, Any], keys: list[str],
               id_key: str) -> bool:
    """Whether a draft read back holds exactly the items sent, in any order."""
    for key in keys:
        mine, theirs = _by_id(sent.get(key, []), id_key), _by_id(stored.get(key, []), id_key)
        if mine is None or theirs is None or mine != theirs:
            return False
    return True


def same_functions(sent: Mapping[str, Any], stored: Mapping[str, Any]) -> bool:
    return same_lists(sent, stored, list(CODE_LISTS), "functionId") and sent.get(
        TIMEZONE, "UTC") == stored.get(TIMEZONE, "UTC")


def same_ai_functions(sent: Mapping[str, Any], stored: Mapping[str, Any]) -> bool:
    return same_lists(sent, stored, [AI_LIST], "key")


def remote_ai_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of a GET draft/ai-functions answer, sorted."""
    items = data.get(AI_LIST)
    if not isinstance(items, list):
        return []
    return sorted({item["key"] for item in items
                   if isinstance(item, dict) and isinstance(item.get("key"), str)})
