"""Render the command reference (docs/cli.md), the check reference (docs/checks.md) and
the SQL subset of Database Functions (docs/sql.md).

    python -m basedb.cli.reference --write   # regenerate the files
    python -m basedb.cli.reference --check   # exit 1 when one is out of date

They are generated from the code (click commands, the check rule table, the SQL
function and construct tables), and a test keeps the committed files in step, so the
documentation cannot drift from the CLI.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path

import click

DOCS = Path(__file__).resolve().parents[2] / "docs"


def iter_commands(group: click.Group, ctx: click.Context,
                  prefix: str = "basedb") -> Iterator[tuple[str, click.Command, click.Context]]:
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is None or command.hidden:
            continue
        path = f"{prefix} {name}"
        sub_ctx = click.Context(command, info_name=name, parent=ctx)
        yield path, command, sub_ctx
        if isinstance(command, click.Group):
            yield from iter_commands(command, sub_ctx, path)


def render_cli_reference() -> str:
    from basedb.cli import cli

    # A fixed width keeps the file identical whatever terminal regenerates it.
    # The CLI's own context settings (-h/--help) so the text matches `basedb … --help`.
    root = click.Context(cli, info_name="basedb", terminal_width=100, max_content_width=100,
                         **cli.context_settings)
    lines = ["# basedb command reference", "",
             "Generated from the commands themselves (`python -m basedb.cli.reference "
             "--write`); `basedb COMMAND --help` prints the same text.", ""]
    commands = list(iter_commands(cli, root))
    lines += ["| command | what it does |", "| --- | --- |"]
    for path, command, _ in commands:
        anchor = path.replace(" ", "-")
        lines.append(f"| [`{path}`](#{anchor}) | {command.get_short_help_str(limit=120)} |")
    lines.append("")
    for path, command, ctx in commands:
        lines += [f"## {path}", "", "```text", command.get_help(ctx).rstrip(), "```", ""]
    lines += _environment_section() + _completion_section()
    return "\n".join(lines).rstrip() + "\n"


def _environment_section() -> list[str]:
    from basedb.core.environment import VARIABLES

    lines = ["## Environment variables", "",
             "Every variable basedb reads (the registry is basedb/core/environment.py; a "
             "test fails when the code reads one that is not listed).", "",
             "| variable | what it does | when unset |", "| --- | --- | --- |"]
    lines += [f"| `{v.name}` | {_cell(v.what)} | {_cell(v.default)} |" for v in VARIABLES]
    return [*lines, ""]


def _completion_section() -> list[str]:
    return ["## Shell completion", "",
            "basedb completes commands, subcommands and options in bash (4.4 or later), zsh "
            "and fish, through click's completion. Add one line to your shell's start-up "
            "file:", "",
            "```bash",
            "# ~/.bashrc",
            'eval "$(_BASEDB_COMPLETE=bash_source basedb)"',
            "# ~/.zshrc",
            'eval "$(_BASEDB_COMPLETE=zsh_source basedb)"',
            "# ~/.config/fish/completions/basedb.fish",
            "_BASEDB_COMPLETE=fish_source basedb | source",
            "```", "",
            "Evaluating the script runs basedb once per shell start; to avoid it, write the "
            "script to a file once (`_BASEDB_COMPLETE=bash_source basedb > "
            "~/.basedb-complete.bash`) and source that file instead.", ""]


def render_check_reference() -> str:
    from basedb.check.reporters.rules import RULES
    from basedb.protocol.findings import ERROR_CODES, HINT_CODES

    lines = ["# basedb check: error and hint codes", "",
             "Errors block `basedb check` (exit 1) and `basedb deploy`; hints "
             "(`functionHints`) never do. Codes are stable: CI and tests may depend on them.",
             "Generated from the rule table in basedb/check/reporters/rules.py "
             "(`python -m basedb.cli.reference --write`); the SARIF report "
             "(`basedb check --format sarif`) carries the same text for each rule.", ""]
    for title, codes in (("Errors", ERROR_CODES), ("Hints", HINT_CODES)):
        lines += [f"## {title}", "", "| code | reported when |", "| --- | --- |"]
        lines += [f"| [`{c}`](#{c.lower()}) | {_cell(RULES[c].short)} |" for c in codes]
        lines.append("")
    for title, codes in (("Errors", ERROR_CODES), ("Hints", HINT_CODES)):
        lines += [f"## {title} in detail", ""]
        for code in codes:
            rule = RULES[code]
            lines += [f"### {code}", "", f"*{rule.short}*", "", rule.help_markdown("####"), ""]
    return "\n".join(lines).rstrip() + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def expected_files() -> dict[Path, str]:
    from basedb.sql.reference import render_sql_reference

    return {DOCS / "cli.md": render_cli_reference(),
            DOCS / "checks.md": render_check_reference(),
            DOCS / "sql.md": render_sql_reference()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m basedb.cli.reference")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--write", action="store_true")
    mode.add_argument("--check", action="store_true")
    args = parser.parse_args(argv)
    stale = []
    for path, content in expected_files().items():
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == content:
            continue
        if args.write:
            path.write_text(content, encoding="utf-8")
            print(f"wrote {path}")
        else:
            stale.append(path)
    for path in stale:
        print(f"{path} is out of date; run python -m basedb.cli.reference --write",
              file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
