"""Run a corpus through both engines and count what happened to each query."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from tests.differential.compare import Difference, compare
from tests.differential.engines import Case, analyse, oracle_sql, run_local, run_postgres


@dataclass
class Tally:
    compared: int = 0  # check accepted it, both engines ran it, results compared
    unsupported: int = 0  # check refused it: outside the subset
    invalid: int = 0  # check refused it as PostgreSQL would (and PostgreSQL did)
    errors_matched: int = 0  # both engines failed on the data (division by zero, …)
    with_rows: int = 0  # compared, and PostgreSQL returned at least one row
    differences: list[Difference] = field(default_factory=list)

    @property
    def total(self) -> int:
        return self.compared + self.unsupported + self.invalid

    def summary(self, what: str) -> str:
        return (f"{what}: {self.total} queries — {self.compared} compared with PostgreSQL "
                f"({self.with_rows} returning rows, {self.errors_matched} failing on both), "
                f"{self.unsupported} "
                f"refused as unsupported, {self.invalid} refused as invalid; "
                f"{len(self.differences)} differences")


def is_ordered(case: Case, tree: Any) -> bool:
    if case.ordered is not None:
        return case.ordered
    while isinstance(tree, exp.Subquery):
        tree = tree.this
    return tree is not None and tree.args.get("order") is not None


def run_corpus(engines: Any, cases: Iterable[Case]) -> Tally:
    tally = Tally()
    for case in cases:
        analysis = analyse(case, engines.catalog)
        codes = {p.code for p in analysis.problems}
        if codes:
            if codes <= {"SQL_UNSUPPORTED"}:
                tally.unsupported += 1
                continue
            if codes <= {"SQL_INVALID", "SQL_UNSUPPORTED"}:
                tally.invalid += 1
                if analysis.tree is not None and analysis.resolution is not None:
                    found = run_postgres(engines.postgres, oracle_sql(analysis), case,
                                         engines.zone)
                    if found.error is None:
                        tally.differences.append(Difference(
                            case.sql, "check refused as invalid a query PostgreSQL runs",
                            [p.message for p in analysis.problems], found.rows))
                continue
            tally.differences.append(Difference(case.sql, "the corpus query does not pass "
                                                "check", [(p.code, p.message) for p in
                                                          analysis.problems]))
            continue
        local = run_local(engines.sqlite, analysis, case, engines.catalog, engines.zone)
        theirs = run_postgres(engines.postgres, oracle_sql(analysis), case, engines.zone)
        tally.compared += 1
        if local.error is not None and theirs.error is not None:
            tally.errors_matched += 1
        if theirs.rows:
            tally.with_rows += 1
        difference = compare(case.sql, local, theirs,
                             ordered=is_ordered(case, analysis.tree))
        if difference is not None:
            tally.differences.append(difference)
    return tally
