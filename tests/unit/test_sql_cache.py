"""The SQL analysis cache: the same findings and hints as a fresh analysis, always."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from basedb.check.run import check_workspace
from basedb.check.sql.cache import CACHE_DIR, CACHE_FILE
from basedb.contracts import stale_findings
from basedb.workspace import load_workspace
from tests.unit.test_cases import ALL_CASES


def report(root: Path, *, cache: bool) -> dict[str, object]:
    doc = check_workspace(load_workspace(root), contracts=stale_findings,
                          cache=cache).to_dict()
    doc.pop("summary")
    return doc


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_cold_and_warm_runs_equal_a_fresh_analysis(case: Path, tmp_path: Path) -> None:
    root = tmp_path / case.name
    shutil.copytree(case, root)
    fresh = report(root, cache=False)
    assert report(root, cache=True) == fresh  # cold: fills the cache
    assert report(root, cache=True) == fresh  # warm: served from it


def test_a_catalog_change_invalidates_cached_results(tmp_path: Path) -> None:
    root = tmp_path / "site"
    shutil.copytree(next(c for c in ALL_CASES if c.name == "optional_filters"), root)
    before = report(root, cache=True)
    catalog_path = root / "catalog.json"
    catalog = json.loads(catalog_path.read_text(encoding="utf-8"))
    for table in catalog["tables"]:
        for field in table["fields"]:
            field["name"] += "_renamed"
    catalog_path.write_text(json.dumps(catalog, ensure_ascii=False), encoding="utf-8")
    after = report(root, cache=True)
    assert after == report(root, cache=False)
    assert after != before and any(e["code"] == "SQL_UNKNOWN_FIELD" for e in after["errors"])


def test_a_corrupt_cache_is_ignored_and_rewritten(tmp_path: Path) -> None:
    root = tmp_path / "site"
    shutil.copytree(ALL_CASES[0], root)
    fresh = report(root, cache=False)
    path = root / CACHE_DIR / CACHE_FILE
    for junk in ("{not json", '{"format": 1, "entries": {"x": 1}}', "[]", "\x00\x01"):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(junk, encoding="utf-8")
        assert report(root, cache=True) == fresh
        assert json.loads(path.read_text(encoding="utf-8"))["format"] == 1


def test_entries_that_no_longer_resolve_are_analysed_again(tmp_path: Path) -> None:
    root = tmp_path / "site"
    shutil.copytree(ALL_CASES[0], root)
    fresh = report(root, cache=True)
    path = root / CACHE_DIR / CACHE_FILE
    doc = json.loads(path.read_text(encoding="utf-8"))
    for entry in doc["entries"].values():
        entry["bindings"] = [[0, "tblGone", "fldGone", True]]
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert report(root, cache=True) == fresh


def test_a_warm_check_does_not_import_sqlglot(tmp_path: Path) -> None:
    root = tmp_path / "site"
    shutil.copytree(ALL_CASES[0], root)
    report(root, cache=True)
    code = ("import sys; from basedb.workspace import load_workspace; "
            "from basedb.check.run import check_workspace; "
            f"check_workspace(load_workspace({str(root)!r}), cache=True); "
            "print('sqlglot' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"
