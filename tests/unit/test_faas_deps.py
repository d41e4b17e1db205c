"""The FaaS dependency policy (basedb.check.faas_deps): registry versions by default, a
restricted source only when a regex of allowedValues matches all of it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from basedb.check.faas_deps import is_registry_version
from basedb.check.run import check_workspace
from basedb.core.environment import FAAS_ALLOWED_DEPENDENCIES as POLICY_ENV
from basedb.workspace import load_workspace

CASE = Path(__file__).resolve().parents[1] / "cases" / "negative" / "faas_dependency_not_allowed"


@pytest.mark.parametrize("spec", ["1.2.3", "^1.11.10", "~2.0", ">=1.0.0 <2", "1.x", "*", "",
                                  "latest", "next", "1.0.0 - 2.0.0", "^1 || ^2",
                                  "1.0.0-beta.1+build", "npm:dayjs@^1.11.0", "npm:@s/p@2"])
def test_registry_versions_are_allowed_by_default(spec: str) -> None:
    assert is_registry_version(spec)


@pytest.mark.parametrize("spec", ["github:someone/dayjs", "someone/dayjs", "file:../utils",
                                  "link:../utils", "../utils", "workspace:*",
                                  "git+https://git.example.com/v.git#v1",
                                  "https://example.com/pkg.tgz", "npm:x@github:a/b"])
def test_other_sources_are_restricted(spec: str) -> None:
    assert not is_registry_version(spec)


def _codes(tmp_path: Path) -> list[str]:
    site = tmp_path / "site"
    if not site.exists():
        shutil.copytree(CASE, site)
    return sorted(f.code for f in check_workspace(load_workspace(site)).errors)


def test_an_allowed_value_must_match_the_whole_source(tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    assert _codes(tmp_path) == ["FAAS_DEPENDENCY_NOT_ALLOWED"] * 3
    # A regex that matches only part of a value allows nothing.
    monkeypatch.setenv(POLICY_ENV, json.dumps(["github:someone"]))
    assert _codes(tmp_path) == ["FAAS_DEPENDENCY_NOT_ALLOWED"] * 3
    # Matching the whole value allows it; it is then judged as a dependency to bundle.
    monkeypatch.setenv(POLICY_ENV, json.dumps([r"github:someone/[a-z]+", r"file:\.\./.*"]))
    assert _codes(tmp_path) == ["FAAS_DEPENDENCY_NOT_ALLOWED", "FAAS_DEPENDENCY_NOT_BUNDLED",
                                "FAAS_DEPENDENCY_NOT_BUNDLED"]


def test_a_broken_policy_setting_is_named_in_the_finding(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(POLICY_ENV, '["(unclosed"]')
    result = check_workspace(load_workspace(shutil.copytree(CASE, tmp_path / "site")))
    messages = [f.message for f in result.errors]
    assert len(messages) == 3 and all(POLICY_ENV in m and "not a regular expression" in m
                                      for m in messages)
    assert all(f.fix and "registry version" in f.fix for f in result.errors)
