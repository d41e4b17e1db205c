"""Every environment variable the code reads is in the registry, and docs/cli.md lists it.

The code is scanned, not trusted: `os.environ.get(X)`, `os.environ[X]`, `os.getenv(X)`,
`X in os.environ`, click's `envvar=X`, and calls of a module's own helper that passes its
parameter to one of those (`_from_env(environment.DATA_DIR)`). X may be a string, a
module constant or a constant of basedb.core.environment; anything else fails, because
then nobody could tell which variable is read.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from basedb.core import environment
from basedb.core.environment import BY_NAME, VARIABLES

ROOT = Path(__file__).resolve().parents[2]


def _is_environ(node: ast.AST) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "environ") or (
        isinstance(node, ast.Name) and node.id == "environ")


def _read_argument(node: ast.AST) -> ast.AST | None:
    """The variable-name argument, when `node` reads the environment."""
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and _is_environ(func.value) \
                and node.args:
            return node.args[0]
        if ((isinstance(func, ast.Attribute) and func.attr == "getenv")
                or (isinstance(func, ast.Name) and func.id == "getenv")) and node.args:
            return node.args[0]
        for keyword in node.keywords:
            if keyword.arg == "envvar":
                return keyword.value
    if isinstance(node, ast.Subscript) and _is_environ(node.value) \
            and isinstance(node.ctx, ast.Load):
        return node.slice
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn))
                                             for op in node.ops) \
            and any(_is_environ(c) for c in node.comparators):
        return node.left
    return None


def env_reads(path: Path) -> Iterator[tuple[int, str | None]]:
    """(line, variable name or None when it cannot be told) of each read in a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    constants: dict[str, ast.AST] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 \
                and isinstance(node.targets[0], ast.Name):
            constants[node.targets[0].id] = node.value

    def resolve(arg: ast.AST) -> str | None:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            return arg.value
        if isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name) \
                and arg.value.id == "environment":
            value = getattr(environment, arg.attr, None)
            return value if isinstance(value, str) else None
        if isinstance(arg, ast.Name) and arg.id in constants:
            return resolve(constants[arg.id])
        return None

    # Helpers that read the variable their parameter names: their calls are reads.
    helpers: dict[str, int] = {}
    for function in ast.walk(tree):
        if not isinstance(function, ast.FunctionDef):
            continue
        params = [a.arg for a in function.args.args]
        for node in ast.walk(function):
            arg = _read_argument(node)
            if isinstance(arg, ast.Name) and arg.id in params:
                helpers[function.name] = params.index(arg.id)
    for node in ast.walk(tree):
        arg = _read_argument(node)
        if arg is not None:
            if isinstance(arg, ast.Name) and any(
                    arg.id in [a.arg for a in f.args.args] for f in ast.walk(tree)
                    if isinstance(f, ast.FunctionDef) and f.name in helpers):
                continue  # inside a helper: its callers are checked instead
            yield node.lineno, resolve(arg)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in helpers and len(node.args) > helpers[node.func.id]:
            yield node.lineno, resolve(node.args[helpers[node.func.id]])


def all_reads() -> list[tuple[str, int, str | None]]:
    return [(str(path.relative_to(ROOT)), line, name)
            for path in sorted((ROOT / "basedb").rglob("*.py"))
            for line, name in env_reads(path)]


def test_every_variable_the_code_reads_is_registered() -> None:
    reads = all_reads()
    names = {name for _, _, name in reads}
    # the scan sees the reads it must see
    assert {"BASEDB_DATA_DIR", "BASEDB_PROFILE", "BASEDB_NODE", "BASEDB_AI_BASE_URL",
            "BASEDB_PUBLIC_URL", "BASEDB_DEBUG", "BASEDB_ACCESS_LOG", "NO_COLOR"} <= names
    unknown = [f"{file}:{line}: {name or 'a variable whose name cannot be told'}"
               for file, line, name in reads if name not in BY_NAME]
    assert unknown == []


def test_the_scan_finds_an_unregistered_read(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("import os\nX = 'BASEDB_SECRET'\n"
                      "def f(v):\n    return os.environ.get(v)\n"
                      "a = os.getenv(X)\nb = f('BASEDB_OTHER')\nc = 'HOME' in os.environ\n",
                      encoding="utf-8")
    assert sorted(name for _, name in env_reads(module) if name) == [
        "BASEDB_OTHER", "BASEDB_SECRET", "HOME"]


def test_the_cli_reference_lists_every_variable() -> None:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text[text.index("## Environment variables"):]
    for var in VARIABLES:
        assert f"| `{var.name}` |" in section
    assert "## Shell completion" in text


@pytest.mark.slow
@pytest.mark.parametrize(("shell", "marker"), [("bash", "complete -o nosort -F"),
                                               ("zsh", "#compdef basedb"),
                                               ("fish", "complete --no-files --command basedb")])
def test_the_documented_completion_scripts_work(shell: str, marker: str) -> None:
    env = {**os.environ, "_BASEDB_COMPLETE": f"{shell}_source"}
    script = subprocess.run([sys.executable, "-m", "basedb"], env=env, capture_output=True,
                            text=True, timeout=60)
    assert script.returncode == 0 and marker in script.stdout, script.stdout[:500]
    assert f"_BASEDB_COMPLETE={shell}_source basedb" in (
        ROOT / "docs" / "cli.md").read_text(encoding="utf-8")


@pytest.mark.slow
def test_completion_offers_lazily_loaded_subcommands_and_options() -> None:
    env = {**os.environ, "_BASEDB_COMPLETE": "bash_complete", "COMP_WORDS": "basedb dep",
           "COMP_CWORD": "1"}
    words = subprocess.run([sys.executable, "-m", "basedb"], env=env, capture_output=True,
                           text=True, timeout=60).stdout.split()
    assert words == ["plain,deploy", "plain,deployments"]
    env.update(COMP_WORDS="basedb deploy --pro", COMP_CWORD="2")
    words = subprocess.run([sys.executable, "-m", "basedb"], env=env, capture_output=True,
                           text=True, timeout=60).stdout.split()
    assert words == ["plain,--production", "plain,--profile"]
