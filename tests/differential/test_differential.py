"""The local platform against PostgreSQL, query by query (see conftest.py for the server).

Every query either gives the same rows on both (values and types as the invoke JSON
shows them, in order when the query fixes one), fails on both, or is refused by `check`
— and when `check` calls it invalid, PostgreSQL refuses it too.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.differential.conftest import SUMMARIES
from tests.differential.corpus import CORPUS
from tests.differential.generator import QueryGenerator
from tests.differential.runner import run_corpus
from tests.differential.signatures import signature_cases


def _report(tally: Any, what: str) -> None:
    SUMMARIES.append(tally.summary(what))
    details = "\n\n".join(str(d) for d in tally.differences[:25])
    assert not tally.differences, f"{tally.summary(what)}\n\n{details}"


def test_the_hand_written_corpus_behaves_as_in_postgresql(engines: Any) -> None:
    tally = run_corpus(engines, CORPUS)
    _report(tally, "hand-written corpus")


def test_every_function_of_the_subset_behaves_as_in_postgresql(engines: Any) -> None:
    tally = run_corpus(engines, signature_cases())
    _report(tally, "every signature of check's function table")


@pytest.mark.slow
def test_a_generated_corpus_behaves_as_in_postgresql(engines: Any) -> None:
    count = int(os.environ.get("BASEDB_DIFF_QUERIES", "2500"))
    seed = int(os.environ.get("BASEDB_DIFF_SEED", "11"))
    tally = run_corpus(engines, QueryGenerator(seed=seed).cases(count))
    _report(tally, f"generated corpus (seed {seed}, {count} queries)")
