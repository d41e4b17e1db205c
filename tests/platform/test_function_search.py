"""GET /sites/{app}/functions?query&table&access: a search over a generated 200-function
site (tests/generated_site.py), and the tokens and ranking underneath."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from basedb.core.errors import ApiError
from basedb.core.text_search import SearchIndex, named_table, tokens, words
from tests.generated_site import GeneratedSite, deploy_generated


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> GeneratedSite:
    return deploy_generated(tmp_path_factory.mktemp("search"), functions=200)


@pytest.fixture(autouse=True)
def _on_site(site: GeneratedSite, monkeypatch: pytest.MonkeyPatch) -> None:
    site.use(monkeypatch)


def search(site: GeneratedSite, **params: Any) -> dict[str, Any]:
    with site.client() as client:
        data: dict[str, Any] = client.request(
            "GET", f"/sites/{site.app_token}/functions",
            params={"env": "prod", **params})["data"]
    return data


# ------------------------------------------------------------------------- tokens


def test_words_split_identifiers_and_pair_chinese_characters() -> None:
    assert words("listOrderItems") == ["list", "order", "items"]
    assert words("exportCSV2025 by-owner") == ["export", "csv", "2025", "by", "owner"]
    assert words("审批流程") == ["审批", "批流", "流程"]
    assert words("查 approvals") == ["查", "approvals"]
    assert tokens("Invoices categories") == ["invoice", "category"]


def test_a_chinese_query_finds_a_chinese_description() -> None:
    index = SearchIndex([
        ("listLeave", {"id": "listLeave", "description": "列出团队的请假记录"}),
        ("approveExpense", {"id": "approveExpense", "description": "审批一笔报销"}),
    ])
    assert [key for key, _ in index.search("报销审批")] == ["approveExpense"]
    assert [key for key, _ in index.search("请假")] == ["listLeave"]


def test_the_id_weighs_more_than_a_word_of_a_description() -> None:
    index = SearchIndex([
        ("listInvoices", {"id": "listInvoices", "description": "Lists the records."}),
        ("listPayments", {"id": "listPayments",
                          "description": "Lists payments; each refers to an invoice."}),
    ])
    assert next(key for key, _ in index.search("invoice")) == "listInvoices"


def test_a_table_is_found_in_an_id_by_whole_words() -> None:
    names = ["Orders", "Order Items", "Items"]
    assert named_table("recalculateOrderItemTotals", names) == "Order Items"
    assert named_table("exportOrders", names) == "Orders"
    assert named_table("notifyOwners", names) is None


# ------------------------------------------------------------------- the endpoint


def check_distinctive_words(site: GeneratedSite) -> None:
    """For every function, the word of its description that the fewest functions carry
    (in what the search reads: id, name, description, table, parameter names): when at
    most five carry it, the function is among the first five results. Generated sites
    describe the functions of each table from templates, so many have no such word;
    those are searched with the pair of words (the rarest, and the one fewest share with
    it) that at most five functions carry together."""
    with site.client() as client:
        functions = site.functions(client)
        params = {f["functionId"]: " ".join(p["name"] for p in client.request(
            "GET", f"/sites/{site.app_token}/functions/{f['functionId']}",
            params={"env": "prod"})["data"]["function"]["parameters"]) for f in functions}
    assert len(functions) > 150
    texts = {f["functionId"]: set(tokens(f"{f['functionId']} {f['description']} "
                                         f"{f['table'] or ''} {params[f['functionId']]}"))
             for f in functions}
    carried = Counter(term for terms in texts.values() for term in terms)
    checked = 0
    for function in functions:
        candidates = sorted({w.lower() for w in words(function["description"]) if len(w) > 3},
                            key=lambda w: (carried[tokens(w)[0]], w))
        query = candidates[0]
        if carried[tokens(query)[0]] > 5:
            first = tokens(query)[0]
            second = min(candidates[1:], key=lambda w: (sum(
                1 for terms in texts.values() if first in terms and tokens(w)[0] in terms), w))
            query = f"{query} {second}"
            if sum(1 for terms in texts.values()
                   if {first, tokens(second)[0]} <= terms) > 5:
                continue
        found = [f["functionId"] for f in search(site, query=query, pageSize=5)["functions"]]
        assert function["functionId"] in found, (query, found)
        checked += 1
    assert checked > len(functions) * 3 // 4


def test_a_distinctive_word_finds_its_function_in_the_top_five(site: GeneratedSite) -> None:
    check_distinctive_words(site)


def test_results_come_best_first_and_page_with_the_same_search(site: GeneratedSite) -> None:
    first = search(site, query="invoice", pageSize=3)
    assert first["functions"][0]["table"] == "Invoices"
    assert first["hasMore"] is True
    second = search(site, query="invoice", pageSize=3, pageToken=first["pageToken"])
    ids = [f["functionId"] for f in first["functions"] + second["functions"]]
    assert len(set(ids)) == 6
    everything = [f["functionId"] for f in search(site, query="invoice",
                                                  pageSize=200)["functions"]]
    assert everything[:6] == ids
    with pytest.raises(ApiError, match="pageToken"):
        search(site, query="payment", pageToken=first["pageToken"])


def test_table_and_access_filter(site: GeneratedSite) -> None:
    reads = search(site, table="invoices", access="read", pageSize=200)["functions"]
    assert reads and all(f["table"] == "Invoices" and f["functionType"] == "database_function"
                         for f in reads)
    writes = search(site, table="Invoices", access="write", pageSize=200)["functions"]
    assert writes and all(f["functionType"] != "database_function" for f in writes)
    assert not {f["functionId"] for f in reads} & {f["functionId"] for f in writes}
    assert [f["functionId"] for f in reads] == sorted(f["functionId"] for f in reads)


def test_a_query_matching_nothing_lists_nothing(site: GeneratedSite) -> None:
    found = search(site, query="zzzqqq")
    assert found["functions"] == [] and found["hasMore"] is False


@pytest.mark.parametrize(("params", "parameter"), [
    ({"access": "delete"}, "?access"),
    ({"query": "x" * 201}, "?query"),
])
def test_bad_search_arguments_name_the_parameter(site: GeneratedSite, params: dict[str, Any],
                                                 parameter: str) -> None:
    with pytest.raises(ApiError) as raised:
        search(site, **params)
    assert parameter in raised.value.message


def test_the_workspace_is_the_generated_one(site: GeneratedSite) -> None:
    assert (Path(site.root) / "agent-tools.json").is_file()


def test_a_document_matching_every_word_comes_before_ones_matching_one() -> None:
    index = SearchIndex([
        ("listBudgets", {"id": "listBudgets", "table": "Budgets",
                         "description": "Lists budgets."}),
        ("findProjects", {"id": "findProjects", "table": "Projects",
                          "description": "Finds projects among several statuses; for "
                                         "a budget use listBudgets."}),
    ])
    assert [key for key, _ in index.search("among budget")] == ["findProjects",
                                                                "listBudgets"]
