"""jsonschema validators whose cost a caller cannot blow up: patterns on a linear-time
engine, uniqueItems in linear time, and every keyword evaluation counted.

    cls = bounded_class(schema)                    # the schema's dialect, 2020-12 by default
    with step_budget(STEPS):                       # TooComplex once STEPS keywords ran
        errors = list(cls(schema).iter_errors(params))

A function's inputSchema is its author's and its params are anyone's, so validating
must cost at most about linear time in both. jsonschema's own `pattern` and
`patternProperties` run Python's backtracking `re` (exponential for `^(a+)+$`), and its
`uniqueItems` compares every item with every other when they are objects. These are
replaced (`basedb.core.schema_regex`, `json_identity`). What remains super-linear is the
schema's own shape: `anyOf`/`oneOf` over a recursive `$ref` revalidates a subtree once
per case at each level, `contains` and `unevaluated*` walk what other keywords walked.
So every keyword evaluation spends one step of the thread's budget, and a validation
that outgrows it stops with TooComplex, whatever made it grow.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from basedb.core.schema_regex import compile_pattern

Keyword = Callable[[Any, Any, Any, Any], Any]


class TooComplex(Exception):
    """A validation spent its step budget."""

    def __init__(self, steps: int) -> None:
        super().__init__(f"validation took more than {steps} steps")
        self.steps = steps


class _Budget:
    __slots__ = ("left", "steps")

    def __init__(self, steps: int) -> None:
        self.steps = steps
        self.left = steps


_current = threading.local()


@contextmanager
def step_budget(steps: int) -> Iterator[None]:
    """Validations on this thread may evaluate `steps` keywords in all (raising
    TooComplex past that); outside such a block they are not counted."""
    outer = getattr(_current, "budget", None)
    _current.budget = _Budget(steps)
    try:
        yield
    finally:
        _current.budget = outer


def _spend() -> None:
    budget = getattr(_current, "budget", None)
    if budget is not None:
        budget.left -= 1
        if budget.left < 0:
            raise TooComplex(budget.steps)


def _counted(keyword: Keyword) -> Keyword:
    def evaluate(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        _spend()
        return keyword(validator, value, instance, schema)

    return evaluate


def json_identity(value: Any) -> Any:
    """A hashable key equal for two JSON values exactly when JSON Schema calls them equal:
    1 and 1.0 alike, true and 1 apart, objects whatever the order of their keys."""
    if isinstance(value, bool):
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)  # Python's 1 == 1.0, with equal hashes
    if isinstance(value, list):
        return ("a", tuple(json_identity(item) for item in value))
    if isinstance(value, dict):
        return ("o", frozenset((key, json_identity(item)) for key, item in value.items()))
    return ("s", value) if isinstance(value, str) else ("z", value)


def all_unique(items: list[Any]) -> bool:
    """No two of `items` are equal as JSON Schema compares them (in linear time)."""
    seen: set[Any] = set()
    for item in items:
        key = json_identity(item)
        if key in seen:
            return False
        seen.add(key)
    return True


def _replaced() -> dict[str, Keyword]:
    """The keywords whose jsonschema implementation is replaced, by name."""
    # Lazy: jsonschema loads with the first plan, not with the app.
    from jsonschema.exceptions import ValidationError  # noqa: PLC0415

    def pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
        if validator.is_type(instance, "string") and compile_pattern(pattern).search(
                instance) is None:
            yield ValidationError(f"{instance!r} does not match {pattern!r}")

    def pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any,
                           schema: Any) -> Iterator[Any]:
        if not validator.is_type(instance, "object"):
            return
        for pattern, subschema in patterns.items():
            search = compile_pattern(pattern).search
            for key, value in instance.items():
                if search(key) is not None:
                    yield from validator.descend(value, subschema, path=key,
                                                 schema_path=pattern)

    def unique_items(validator: Any, unique: bool, instance: Any,
                     schema: Any) -> Iterator[Any]:
        if unique and validator.is_type(instance, "array") and not all_unique(instance):
            yield ValidationError(f"{instance!r} has non-unique elements")

    return {"pattern": pattern, "patternProperties": pattern_properties,
            "uniqueItems": unique_items}


_classes: dict[type, type] = {}
_classes_lock = threading.Lock()


def bounded_class(schema: Any) -> Any:
    """The jsonschema validator class of `schema`'s dialect (2020-12 when it names none),
    with the keywords above replaced and every keyword counted."""
    # Lazy: jsonschema loads with the first plan, not with the app.
    from jsonschema import Draft202012Validator  # noqa: PLC0415
    from jsonschema.validators import extend, validator_for  # noqa: PLC0415

    base = validator_for(schema, default=Draft202012Validator)
    with _classes_lock:
        found = _classes.get(base)
        if found is None:
            replaced = _replaced()
            keywords = {name: _counted(replaced.get(name, keyword))
                        for name, keyword in base.VALIDATORS.items()}
            found = _classes[base] = extend(base, validators=keywords)
    return found
