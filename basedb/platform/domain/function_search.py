"""Finding a function among hundreds: `GET /sites/{app}/functions?query&table&access`
and MCP discover_functions.

    found = search_functions(plans, FunctionQuery(query="overdue invoices", access="read"))

`table` keeps the functions that work on that table (any of `FunctionPlan.tables`,
case-insensitive), `access` those that only read (Database Functions) or may write
(everything else, as the Skill counts them). `query` ranks what is left with BM25 over
each function's id, description, tables and parameter names
(`basedb.core.text_search`), best first, and leaves out functions that match none of
its words. Without a query the order stays by functionId.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from basedb.core.frozen import frozen_dataclass
from basedb.core.text_search import SearchIndex
from basedb.platform.domain.function_plans import FunctionPlan

Access = Literal["read", "write"]
ACCESS_VALUES: tuple[Access, ...] = ("read", "write")
MAX_QUERY_CHARS = 200


def access_of(kind: str) -> Access:
    """Only a Database Function is known not to change anything: a FaaS may write
    records and an AI Function runs a model, so both count as writes."""
    return "read" if kind == "database_function" else "write"


@frozen_dataclass
class FunctionQuery:
    query: str = ""
    table: str = ""
    access: Access | None = None

    @property
    def active(self) -> bool:
        return bool(self.query.strip() or self.table or self.access)

    def key(self) -> str:
        """What a page token must carry so that the next page answers the same search."""
        return "\x1f".join((self.query.strip(), self.table.lower(), self.access or ""))


def parameter_names(plan: FunctionPlan) -> list[str]:
    if plan.specs:
        return [spec.name for spec in plan.specs]
    properties = (plan.input_schema or {}).get("properties")
    return [str(name) for name in properties] if isinstance(properties, dict) else []


def search_functions(plans: Sequence[FunctionPlan], wanted: FunctionQuery
                     ) -> list[FunctionPlan]:
    """The plans `wanted` selects, best first when it has a query."""
    table = wanted.table.lower()
    kept = [plan for plan in plans
            if (not table or any(t.lower() == table for t in plan.tables))
            and (wanted.access is None or access_of(plan.kind) == wanted.access)]
    if not wanted.query.strip():
        return kept
    index = SearchIndex((plan.function_id, {
        "id": plan.function_id, "table": " ".join(plan.tables),
        "params": " ".join(parameter_names(plan)),
        "description": f"{plan.name} {plan.description}"}) for plan in kept)
    by_id = {plan.function_id: plan for plan in kept}
    return [by_id[key] for key, _ in index.search(wanted.query)]
