"""base-database.jsonc: the workspace configuration."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from basedb.core.errors import InputError
from basedb.protocol.findings import Finding
from basedb.workspace import files
from basedb.workspace.declarations import json_type
from basedb.workspace.model import Binding, WorkspaceConfig

CONFIG_FILE = "base-database.jsonc"
APP_TOKEN_RE = re.compile(r"^[A-Za-z0-9_-]{1,128}\Z")
"""What an app token looks like (the platform's Prj…, Lark's alphanumeric tokens), whole:
use `fullmatch`."""


def build_config(doc: Any, *, file: str = CONFIG_FILE,
                 ) -> tuple[WorkspaceConfig | None, list[Finding]]:
    findings: list[Finding] = []

    def bad(where: str, message: str, fix: str) -> None:
        findings.append(Finding("WORKSPACE_CONFIG_INVALID", message, file, where, fix=fix))

    if not isinstance(doc, dict):
        bad("", f"{file} must contain an object, not {json_type(doc)}.",
            "Write {\"appToken\": …, \"title\": …, \"binding\": {…}}, or run `basedb init`.")
        return None, findings
    strings: dict[str, str] = {}
    for key, required in (("appToken", True), ("title", False), ("profile", False),
                          ("timezone", False)):
        value = doc.get(key)
        if value is None and not required:
            continue
        if not isinstance(value, str) or (required and not value.strip()):
            bad(f"/{key}", f"/{key} must be a {'non-empty ' if required else ''}string.",
                f"Set \"{key}\" in {file}.")
            continue
        strings[key] = value
    if "appToken" in strings and not APP_TOKEN_RE.fullmatch(strings["appToken"]):
        shown = strings.pop("appToken")
        bad("/appToken", f"/appToken {shown[:64]!r} is not an app token: it is letters, "
            "digits, '_' and '-' (at most 128), such as the Prj… token `basedb init` writes.",
            "Set \"appToken\" to the site's token (`basedb sites list` shows them), or run "
            "`basedb link --create` to make a site for this workspace.")
    if "timezone" in strings and not is_timezone(strings["timezone"]):
        bad("/timezone", f"/timezone {strings['timezone']!r} is not an IANA time zone.",
            "Use a zone such as \"Asia/Shanghai\" or \"UTC\".")
        del strings["timezone"]
    binding = doc.get("binding", {})
    base_token, table_ids = "", []
    if not isinstance(binding, dict):
        bad("/binding", f"/binding must be an object, not {json_type(binding)}.",
            "Write \"binding\": {\"baseToken\": …, \"tableIds\": [...]}.")
    else:
        base_token = binding.get("baseToken", "")
        if not isinstance(base_token, str):
            bad("/binding/baseToken", "/binding/baseToken must be a string.",
                "Set binding.baseToken to the bound Base's token.")
            base_token = ""
        table_ids = binding.get("tableIds", [])
        # `basedb catalog pull` only adds ids to a well-formed array: it cannot fix these.
        if not isinstance(table_ids, list):
            bad("/binding/tableIds", "/binding/tableIds must be an array of table id strings, "
                f"not {json_type(table_ids)}.",
                "Write \"tableIds\": [\"tbl…\", …] with the ids of the bound tables (catalog.json "
                "lists them); `basedb catalog pull` then adds the ones bound since.")
            table_ids = []
        for index, table_id in enumerate(table_ids):
            if not isinstance(table_id, str):
                bad(f"/binding/tableIds/{index}", f"/binding/tableIds/{index} is "
                    f"{json_type(table_id)}, not a table id string.",
                    "Write the table id as a string such as \"tblXXXX\" (catalog.json lists the "
                    "bound tables), or remove the entry.")
        table_ids = [t for t in table_ids if isinstance(t, str)]
    if "appToken" not in strings:
        return None, findings
    return WorkspaceConfig(
        app_token=strings["appToken"],
        title=strings.get("title", ""),
        binding=Binding(base_token=base_token, table_ids=tuple(table_ids)),
        profile=strings.get("profile"),
        timezone=strings.get("timezone"),
        raw=doc,
    ), findings


def is_timezone(name: str) -> bool:
    """Whether `name` is an IANA time zone this machine knows."""
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def workspace_app_token(root: Path) -> str:
    """The appToken of base-database.jsonc at `root` (InputError naming the file)."""
    return read_workspace_config(root).app_token


def read_workspace_config(root: Path) -> WorkspaceConfig:
    """base-database.jsonc at `root`, which must at least name the site (InputError
    naming the file otherwise)."""
    label = str(root / CONFIG_FILE)
    try:
        doc = files.parse_jsonc(files.read_text(root / CONFIG_FILE, label=label,
                                                limit=files.LIMIT_CONFIG), label=label)
    except files.FileProblem as problem:
        raise InputError(problem.message, code="WORKSPACE_CONFIG_INVALID",
                         hint=problem.fix) from None
    config, findings = build_config(doc, file=label)
    if config is None:
        first = findings[0] if findings else None
        raise InputError(first.message if first else f"{label} has no appToken.",
                         code="WORKSPACE_CONFIG_INVALID",
                         hint=(first.fix if first else None) or f"Set \"appToken\" in {label}.")
    return config
