"""How long a SQLite statement may run on a thread that must not stand still.

    budget = TimeBudget(budget_s=0.02, cpu_budget_s=0.002)
    conn.set_progress_handler(budget, 500)   # SQLite stops the statement once spent
    ...
    if budget.spent: ...                      # it was the budget that stopped it

The budget counts the thread's CPU time (`cpu_budget_s`), so that a busy machine taking
the CPU away from the server does not count against the statement, and wall-clock time
(`budget_s`), which bounds waits for the disk. The CPU clock is a system call, unlike the
wall clock, and a thread cannot have used more CPU time than has passed: it is read only
once the wall clock says the CPU budget may be spent.
"""

from __future__ import annotations

import time


class TimeBudget:
    """A SQLite progress handler: true (stop) once the budget is spent, and from then on."""

    __slots__ = ("_cpu_give_up_at", "_give_up_at", "_may_be_spent_at", "spent")

    def __init__(self, budget_s: float, cpu_budget_s: float | None = None) -> None:
        started = time.perf_counter()
        self._give_up_at = started + budget_s
        if cpu_budget_s is None:
            self._may_be_spent_at = self._give_up_at
            self._cpu_give_up_at = None
        else:
            self._may_be_spent_at = started + cpu_budget_s
            self._cpu_give_up_at = time.thread_time() + cpu_budget_s
        self.spent = False

    def __call__(self) -> bool:
        if not self.spent:
            now = time.perf_counter()
            self.spent = now > self._may_be_spent_at and (
                now > self._give_up_at or self._cpu_give_up_at is None
                or time.thread_time() > self._cpu_give_up_at)
        return self.spent
