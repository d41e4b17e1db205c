"""The site Skill of generated sites (tests/generated_site.py): an agent following it
reaches any function's full entry within 8,000 tokens (median), SKILL.md's body stays
under 5,000, and every function has exactly one entry. 200 functions by default; 1,000
in the slow set."""

from __future__ import annotations

from typing import Any

import pytest

from bench.agent_reading import skill_body_tokens, skill_reading, summary
from bench.tokens import estimate_tokens
from tests.generated_site import GeneratedSite, deploy_generated

MEDIAN_TARGET = 8_000
BODY_TARGET = 5_000


def skill_of(site: GeneratedSite) -> dict[str, Any]:
    with site.client() as client:
        data: dict[str, Any] = client.request("GET", f"/sites/{site.app_token}/skill",
                                              params={"env": "prod"})["data"]
    return data


def check_scale(site: GeneratedSite) -> None:
    skill = skill_of(site)
    costs = skill_reading(skill)
    assert summary(costs)["median"] <= MEDIAN_TARGET
    assert skill_body_tokens(skill) < BODY_TARGET
    # Every function has exactly one entry, in the file of its table.
    for function in skill["functions"]:
        heading = f"### `{function['functionId']}`"
        holding = [n for n, text in skill["references"].items() if heading in text]
        assert len(holding) == 1, (function["functionId"], holding)
        if function["table"]:
            assert f"| {function['table']} |" in skill["markdown"]
            assert f"Table: {function['table']}." in skill["references"][holding[0]]
    # Each reference file can be read whole.
    assert max(estimate_tokens(text) for text in skill["references"].values()) < 4_000


def test_the_skill_of_200_functions_routes_by_table(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    site = deploy_generated(tmp_path_factory.mktemp("skill200"), functions=200)
    site.use(monkeypatch)
    check_scale(site)
    markdown = skill_of(site)["markdown"]
    assert "grep -n -i" in markdown and '"query":"<words>"' in markdown


@pytest.mark.slow
def test_the_skill_of_1000_functions_routes_by_table(
        tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    site = deploy_generated(tmp_path_factory.mktemp("skill1000"), functions=1000)
    site.use(monkeypatch)
    check_scale(site)
