"""Messages say what is true of the command they come from.

- Every `--option` that a message, hint or help text mentions exists: on the command a
  quoted `basedb …` line names, else on the commands of the module that says it.
- Counts agree with their nouns: no `table(s)`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from basedb.cli import cli
from basedb.cli.reference import iter_commands

ROOT = Path(__file__).resolve().parents[2]
SOURCES = sorted((ROOT / "basedb").rglob("*.py"))
CONTEXT = click.Context(cli, info_name="basedb", **cli.context_settings)
COMMANDS = {path: command for path, command, _ in iter_commands(cli, CONTEXT)}
# `basedb deploy --production --yes`: a command line inside a message.
_COMMAND_LINE = re.compile(r"basedb((?: [a-z][a-z-]*)+)((?: [^`'\"\n;,)]*)?)")
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")
_PLURAL_S = re.compile(r"[A-Za-z]\(s\)")
# Options of other programs that messages and docstrings quote: Node.js (the FaaS
# runtime), bubblewrap and prlimit (its sandbox), mypy and MCP Inspector, and the
# `python -m` generators of the docs.
OTHER_PROGRAMS = {"--max-old-space-size", "--permission", "--experimental-permission",
                  "--allow-fs-read", "--allow-fs-write", "--disable-warning", "--strict",
                  "--write", "--check", "--path",
                  # lark-cli's, which a lark-cli profile runs (basedb.client.lark.larkcli)
                  "--file", "--output", "--device-code", "--no-wait", "--new", "--name"}
BUBBLEWRAP = {"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent",
              "--as-pid-1", "--new-session", "--clearenv", "--setenv", "--ro-bind",
              "--ro-bind-try", "--symlink", "--proc", "--dev", "--size", "--perms", "--tmpfs",
              "--chdir", "--info-fd", "--block-fd"}
PRLIMIT = {"--core", "--fsize", "--nofile", "--cpu", "--nproc", "--as"}
# esbuild's, which the Fix for an unbundled FaaS dependency suggests (basedb.check.faas_deps)
ESBUILD = {"--bundle", "--format", "--platform", "--outfile"}
OTHER_PROGRAMS |= BUBBLEWRAP | PRLIMIT | ESBUILD


def strings_of(path: Path) -> Iterator[tuple[int, str]]:
    """(line, text) of every string literal in a module, f-string pieces included."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def messages_of(path: Path) -> Iterator[tuple[int, str]]:
    """Like `strings_of`, without docstrings (which talk to developers, not users)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                and id(node) not in docstrings:
            yield node.lineno, node.value


def options_of(command: click.Command) -> set[str]:
    names = {"--help"}
    for param in command.params:
        names.update(n for n in (*param.opts, *param.secondary_opts) if n.startswith("--"))
    return names


def resolve(words: list[str]) -> tuple[str, click.Command] | None:
    """The deepest command `basedb WORDS…` names."""
    path, found = "basedb", None
    for word in words:
        candidate = f"{path} {word}"
        if candidate not in COMMANDS:
            break
        path, found = candidate, COMMANDS[candidate]
    return (path, found) if found is not None else None


def module_commands(path: Path) -> list[click.Command]:
    module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
    return [c for c in COMMANDS.values() if c.callback is not None
            and getattr(c.callback, "__module__", "") == module]


def option_mentions() -> Iterator[tuple[str, int, str, str | None]]:
    """(file, line, option, the command path it must belong to, or None for any in the
    module's commands)."""
    for path in SOURCES:
        rel = str(path.relative_to(ROOT))
        for line, text in strings_of(path):
            covered: set[int] = set()
            for match in _COMMAND_LINE.finditer(text):
                resolved = resolve(match.group(1).split())
                if resolved is None:
                    continue
                for option in _OPTION.finditer(match.group(2)):
                    yield rel, line, option.group(1), resolved[0]
                covered.update(range(match.start(), match.end()))
            for option in _OPTION.finditer(text):
                if option.start() not in covered:
                    yield rel, line, option.group(1), None


def test_every_option_a_message_names_exists_where_it_is_named() -> None:
    all_options = set().union(options_of(cli), OTHER_PROGRAMS,
                              *(options_of(c) for c in COMMANDS.values()))
    wrong = []
    checked = 0
    for file, line, option, command_path in option_mentions():
        checked += 1
        if command_path is not None:
            if option not in options_of(COMMANDS[command_path]):
                wrong.append(f"{file}:{line}: `{command_path} {option}`: no such option")
            continue
        own = module_commands(ROOT / file)
        if own:
            if not any(option in options_of(c) for c in own):
                names = ", ".join(sorted(c.name or "" for c in own))
                wrong.append(f"{file}:{line}: {option} is not an option of {names}")
        elif option not in all_options:
            wrong.append(f"{file}:{line}: {option} is not an option of any command")
    assert checked > 50, "the scan finds the options messages mention"
    assert wrong == []


def test_the_scan_catches_a_hint_naming_a_missing_option() -> None:
    """`basedb pull` has no --workspace: a hint that said so would be caught."""
    assert "--workspace" not in options_of(COMMANDS["basedb pull"])
    assert resolve(["pull"]) == ("basedb pull", COMMANDS["basedb pull"])
    match = _COMMAND_LINE.search("Run `basedb pull --workspace DIR`.")
    assert match is not None and _OPTION.findall(match.group(2)) == ["--workspace"]


# Commands that look for a workspace, run where there is none.
NEEDS_WORKSPACE = [path for path, command in COMMANDS.items()
                   if not isinstance(command, click.Group)
                   and path not in ("basedb init", "basedb serve", "basedb demo",
                                    "basedb lark-cli", "basedb api", "basedb auth login",
                                    "basedb auth token", "basedb auth logout",
                                    "basedb auth status", "basedb auth list",
                                    "basedb skill install", "basedb skill list",
                                    "basedb doctor")]


@pytest.mark.parametrize("path", NEEDS_WORKSPACE)
def test_outside_a_workspace_the_hint_names_only_real_options(
        path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    runner = CliRunner()
    monkeypatch.chdir(empty)
    result = runner.invoke(cli, path.split()[1:], prog_name="basedb")
    text = result.stderr if result.stderr_bytes else result.output
    if "No base-database.jsonc" not in text:
        pytest.skip(f"{path} does not need a workspace here")
    assert result.exit_code == 2, text
    own = options_of(COMMANDS[path])
    for match in _COMMAND_LINE.finditer(text):
        resolved = resolve(match.group(1).split())
        assert resolved is not None, match.group(0)
        for option in _OPTION.findall(match.group(2)):
            assert option in options_of(resolved[1]), (path, match.group(0))
    named = {o for o in _OPTION.findall(text) if not any(
        o in m.group(0) for m in _COMMAND_LINE.finditer(text))}
    assert named <= own, f"{path}: the hint names {sorted(named - own)}:\n{text}"


def test_no_message_writes_a_plural_in_brackets() -> None:
    found = [f"{path.relative_to(ROOT)}:{line}: {text!r}" for path in SOURCES
             for line, text in messages_of(path)
             if _PLURAL_S.search(text.replace("http(s)", ""))]
    assert found == []
