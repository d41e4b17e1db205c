"""`pip install -e '.[test]' && pytest` works in a clean virtualenv: every third-party
module the suite imports comes with basedb's dependencies or its `test` extra."""

from __future__ import annotations

import ast
import importlib.metadata as metadata
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
tomllib = pytest.importorskip("tomllib")


def _requirement_names(requirements: list[str], extra: str | None = None) -> set[str]:
    """Distribution names of requirement strings that apply here (markers evaluated)."""
    from packaging.requirements import Requirement

    names = set()
    for text in requirements:
        requirement = Requirement(text)
        environment = {"extra": extra or ""}
        if requirement.marker is None or requirement.marker.evaluate(environment):
            names.add(_normalise(requirement.name))
    return names


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _installed_closure(roots: set[str]) -> set[str]:
    """roots and everything they require, as installed."""
    seen: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        pending.extend(_requirement_names(requires) - seen)
    return seen


def _imported_top_level_modules() -> set[str]:
    modules: set[str] = set()
    for path in (ROOT / "tests").rglob("*.py"):
        if "cases" in path.relative_to(ROOT / "tests").parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                modules.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules.add(node.module.split(".")[0])
    return {name for name in modules
            if name not in sys.stdlib_module_names and name not in ("basedb", "bench", "tests")}


def test_every_module_the_suite_imports_is_a_declared_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = (_requirement_names(project["dependencies"])
                | _requirement_names(project["optional-dependencies"]["test"], "test"))
    provided = _installed_closure(declared)
    by_module = metadata.packages_distributions()
    missing = {module: by_module.get(module) for module in _imported_top_level_modules()
               if not {_normalise(d) for d in by_module.get(module, [])} & provided}
    assert not missing, (f"tests import modules that neither basedb's dependencies nor its "
                         f"`test` extra provide (module: distributions): {missing}")


def test_the_distribution_is_basedb_cli_and_every_install_hint_says_so() -> None:
    """PyPI's `basedb` is an unrelated project: `pip install 'basedb[fast]'` would install
    it. The distribution is basedb-cli; the command and the import name stay `basedb`."""
    from basedb import DISTRIBUTION, __version__, install_command

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["name"] == DISTRIBUTION == "basedb-cli"
    # upstream's command name runs the same program (docs/upstream.md)
    assert project["scripts"] == {"basedb": "basedb.cli:main",
                                  "base-database-cli": "basedb.cli:main"}
    assert install_command("fast") == "pip install 'basedb-cli[fast]'"
    try:
        assert metadata.version(DISTRIBUTION) == __version__
    except metadata.PackageNotFoundError:
        pytest.skip("basedb is not installed as a distribution here")
    wrong = re.compile(r"pip install[^\n`&]*?(?<![\w-])basedb(?![\w-])")
    texts = [*ROOT.glob("*.md"), *(ROOT / "docs").rglob("*.md"), *(ROOT / "skills").rglob("*"),
             *(ROOT / "templates").rglob("*.md"), *(ROOT / "basedb").rglob("*.py")]
    found = [f"{path.relative_to(ROOT)}: {match.group(0)}" for path in texts if path.is_file()
             for match in wrong.finditer(path.read_text(encoding="utf-8", errors="replace"))]
    assert found == []
