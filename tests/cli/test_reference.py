"""The command reference covers every command, each with help, and is up to date."""

from __future__ import annotations

import click

from basedb.cli import cli
from basedb.cli.reference import expected_files, iter_commands


def test_every_command_has_help_and_appears_in_the_reference() -> None:
    reference = expected_files()
    cli_md = next(text for path, text in reference.items() if path.name == "cli.md")
    commands = list(iter_commands(cli, click.Context(cli, info_name="basedb",
                                                     **cli.context_settings)))
    assert len(commands) >= 20
    for path, command, _ in commands:
        assert (command.help or "").strip(), f"{path} has no help text"
        assert f"## {path}\n" in cli_md


def test_committed_docs_are_up_to_date() -> None:
    for path, content in expected_files().items():
        assert path.read_text(encoding="utf-8") == content, (
            f"{path} is stale: run python -m basedb.cli.reference --write")
