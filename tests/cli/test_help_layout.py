"""What `--help` and a bare group show: aligned example tables, help instead of an error."""

from __future__ import annotations

import re

import click
import pytest
from click.testing import CliRunner

from basedb.cli import cli
from basedb.cli.reference import iter_commands

ROOT = click.Context(cli, info_name="basedb", **cli.context_settings)
COMMANDS = list(iter_commands(cli, ROOT))
GROUPS = ["", *(path.removeprefix("basedb ") for path, command, _ in COMMANDS
                if isinstance(command, click.Group))]
# An example row: the command, two or more spaces, then what it does.
_ROW = re.compile(r"^(?P<indent>\s*)(?P<example>\S.*?\S)(?P<gap>\s{2,})(?P<what>\S.*)$")


def example_tables(help_text: str) -> list[list[str]]:
    """The blocks of `basedb …  what it does` rows in a help text."""
    tables: list[list[str]] = []
    current: list[str] = []
    for line in help_text.splitlines():
        if line.strip().startswith("basedb ") and _ROW.match(line):
            current.append(line)
            continue
        if current:
            tables.append(current)
        current = []
    if current:
        tables.append(current)
    return [table for table in tables if len(table) > 1]


@pytest.mark.parametrize("path", [path for path, _, _ in COMMANDS])
def test_example_tables_in_help_are_aligned(path: str) -> None:
    command = next(c for p, c, _ in COMMANDS if p == path)
    ctx = next(x for p, _, x in COMMANDS if p == path)
    for table in example_tables(command.get_help(ctx)):
        starts = set()
        for row in table:
            match = _ROW.match(row)
            assert match is not None
            starts.add(match.start("what"))
        assert len(starts) == 1, f"{path} --help: the descriptions start at columns " \
                                 f"{sorted(starts)}:\n" + "\n".join(table)


def test_the_deploy_help_table_is_found() -> None:
    """The check above is not vacuous: deploy's help has a three-row table."""
    command = next(c for p, c, _ in COMMANDS if p == "basedb deploy")
    ctx = next(x for p, _, x in COMMANDS if p == "basedb deploy")
    (table,) = example_tables(command.get_help(ctx))
    assert len(table) == 3


@pytest.mark.parametrize("group", GROUPS)
def test_a_group_without_a_subcommand_shows_its_help(group: str) -> None:
    result = CliRunner().invoke(cli, group.split(), prog_name="basedb")
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"Usage: basedb {group}".rstrip() + " [OPTIONS]")
    assert "Commands:" in result.output
