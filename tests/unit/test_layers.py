"""The layers of docs/architecture.md hold: no import cycle anywhere, the import-linter contracts
pass, and every package says what it may import."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import grimp
import pytest

import basedb

PACKAGE_DIR = Path(basedb.__file__).resolve().parent
ROOT = PACKAGE_DIR.parent


def strongly_connected(graph: grimp.ImportGraph) -> list[set[str]]:
    """The import cycles of `graph`: its strongly connected components of more than one
    module (Tarjan's algorithm, iterative so deep graphs cannot overflow the stack)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[set[str]] = []
    counter = 0
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(
                        graph.find_modules_directly_imported_by(child)))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(component)
    return found


def test_the_cycle_finder_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for name in ("pkg", "pkg.a", "pkg.b", "pkg.c", "pkg.d"):
        graph.add_module(name)
    graph.add_import(importer="pkg.a", imported="pkg.b")
    graph.add_import(importer="pkg.b", imported="pkg.c")
    graph.add_import(importer="pkg.c", imported="pkg.a")
    graph.add_import(importer="pkg.d", imported="pkg.a")
    assert strongly_connected(graph) == [{"pkg.a", "pkg.b", "pkg.c"}]


def test_no_module_of_basedb_imports_itself_through_others() -> None:
    # Every import counts, those inside functions and under TYPE_CHECKING included: a
    # lazy import is for start-up speed, never for hiding a cycle.
    graph = grimp.build_graph("basedb", include_external_packages=False)
    cycles = strongly_connected(graph)
    assert cycles == [], "import cycles: " + "; ".join(
        " -> ".join(sorted(cycle)) for cycle in cycles)


@pytest.mark.skipif(shutil.which("lint-imports") is None and not (
    Path(sys.executable).parent / "lint-imports").exists(),
    reason="import-linter is not installed (pip install -e '.[test]')")
def test_the_layer_contracts_are_kept() -> None:
    executable = shutil.which("lint-imports") or str(Path(sys.executable).parent /
                                                     "lint-imports")
    done = subprocess.run([executable, "--no-cache"], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_every_package_says_what_it_may_import() -> None:
    layers = ["core", "workspace", "sql", "sql/sqlite", "check", "contracts", "client",
              "deploy", "agent_tools", "platform", "platform/storage", "platform/domain",
              "platform/web", "cli"]
    for layer in layers:
        doc = (PACKAGE_DIR / layer / "__init__.py").read_text(encoding="utf-8")
        docstring = doc.split('"""')[1]
        assert "import" in docstring.lower(), f"basedb/{layer}/__init__.py says nothing " \
            "about what it may import"


def test_every_module_of_the_sql_front_end_is_held_to_opening_no_database() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"]
                    if c["name"] == "The SQL engine's front end opens no database")
    front_end = {f"basedb.sql.{path.stem}" for path in (PACKAGE_DIR / "sql").glob("*.py")
                 if path.stem != "__init__"}
    assert set(contract["source_modules"]) == front_end


def test_docs_architecture_names_every_contract() -> None:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    doc = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    missing = [c["name"] for c in config["tool"]["importlinter"]["contracts"]
               if f"| {c['name']} |" not in doc]
    assert missing == [], "docs/architecture.md does not describe these contracts"
