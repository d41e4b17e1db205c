"""The agent-facing checks of issue-sized sites at 1,000 functions (slow: generating and
deploying takes a while): search finds a function by a distinctive word, every request
example passes its schema, and MCP's tools/list stays small. The Skill's figures at
1,000 are in tests/platform/test_skill_at_scale.py and `python -m bench --only agents`."""

from __future__ import annotations

import pytest

from tests.generated_site import GeneratedSite, deploy_generated
from tests.platform.test_function_search import check_distinctive_words
from tests.platform.test_param_examples import check_request_examples

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> GeneratedSite:
    return deploy_generated(tmp_path_factory.mktemp("agents1000"), functions=1000)


@pytest.fixture(autouse=True)
def _on_site(site: GeneratedSite, monkeypatch: pytest.MonkeyPatch) -> None:
    site.use(monkeypatch)


def test_search_finds_functions_by_a_distinctive_word(site: GeneratedSite) -> None:
    check_distinctive_words(site)


def test_every_request_example_passes_its_schema(site: GeneratedSite) -> None:
    check_request_examples(site)


def test_mcp_lists_the_meta_tools_within_budget(site: GeneratedSite) -> None:
    pytest.importorskip("mcp")
    from basedb.agent_tools.site_tools import META_TOOLS, SiteTools
    from bench.agent_reading import mcp_list_tokens

    with site.client() as client:
        tokens, count = mcp_list_tokens(SiteTools(client, site.app_token))
    assert count == len(META_TOOLS) and tokens < 20_000
