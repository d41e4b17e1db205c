"""A quick yes to the params of a Database Function or Mutation, before jsonschema.

    validator = ParamsValidator(schema_validator(schema), specs)
    validator.is_valid(params)       # True without jsonschema for most valid params
    validator.iter_errors(params)    # jsonschema's errors, as before

The inputSchema of these functions is generated from their `ParamSpec`s
(`basedb.platform.domain.schemas.schema_from_specs`) with a handful of keywords, so the
common case can be checked with plain Python: params that the check accepts are valid
under the schema. The check accepts a subset of what jsonschema does (a float where an
integer is expected, say, or an enum value of another type, is left to jsonschema), so
anything it does not accept is judged by jsonschema, which stays the only source of
errors: what callers are told never depends on the quick check.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from basedb.platform.domain.schemas import DATE_PATTERN, DATETIME_PATTERN, ParamSpec

Check = Callable[[Any], bool]

_DATE = re.compile(DATE_PATTERN)
_DATETIME = re.compile(DATETIME_PATTERN)


class ParamsValidator:
    """A jsonschema validator of generated params schemas, with the quick check in front
    of `is_valid`. `schema` and `iter_errors` are the wrapped validator's."""

    def __init__(self, validator: Any, specs: Iterable[ParamSpec]) -> None:
        self._validator = validator
        self.schema: Mapping[str, Any] = validator.schema
        specs = tuple(specs)
        # A validator that asserts formats would refuse what the check lets through.
        self._checks: dict[str, Check] | None = None
        if getattr(validator, "format_checker", None) is None:
            self._checks = {spec.name: _param_check(spec) for spec in specs}
        self._required = frozenset(spec.name for spec in specs if spec.required)

    def is_valid(self, params: Any) -> bool:
        return self.accepts(params) or bool(self._validator.is_valid(params))

    def iter_errors(self, params: Any) -> Iterator[Any]:
        return iter(self._validator.iter_errors(params))

    def accepts(self, params: Any) -> bool:
        """Whether the quick check finds `params` valid (False: ask jsonschema)."""
        checks = self._checks
        if checks is None or type(params) is not dict:
            return False
        for name, value in params.items():
            check = checks.get(name)  # no other properties
            if check is None or not check(value):
                return False
        return self._required.issubset(params)


def _param_check(spec: ParamSpec) -> Check:
    element = _element_check(spec)
    optional = not spec.required  # null is allowed, and means "not given"
    if not spec.is_array:
        return lambda value: optional if value is None else element(value)
    max_items = spec.max_items

    def check_list(value: Any) -> bool:
        if value is None:
            return optional
        if type(value) is not list or (max_items is not None and len(value) > max_items):
            return False
        return all(element(item) for item in value)

    return check_list


def _element_check(spec: ParamSpec) -> Check:
    kind_check = _KIND_CHECKS.get(spec.kind)
    if kind_check is None:
        return lambda value: False
    checks = [kind_check]
    if spec.enum is not None:
        allowed = tuple(spec.enum)
        # Same type and equal: jsonschema's enum agrees (it also equates 1 and 1.0, and
        # tells true from 1; those cases are left to it).
        checks.append(lambda value: any(type(value) is type(option) and value == option
                                        for option in allowed))
    if spec.minimum is not None and spec.kind in ("INT", "NUMBER"):
        minimum = spec.minimum
        checks.append(lambda value: value >= minimum)
    if len(checks) == 1:
        return kind_check
    return lambda value: all(check(value) for check in checks)


_KIND_CHECKS: dict[str, Check] = {
    "TEXT": lambda value: type(value) is str,
    "INT": lambda value: type(value) is int,  # a bool is not one; 3.0 is left to jsonschema
    "NUMBER": lambda value: type(value) is int or type(value) is float,
    "BOOL": lambda value: type(value) is bool,
    "DATE": lambda value: type(value) is str and _DATE.search(value) is not None,
    "DATETIME": lambda value: type(value) is str and _DATETIME.search(value) is not None,
    "RECORD_ID": lambda value: type(value) is str and len(value) >= 1,
    "USER_ID": lambda value: type(value) is str and len(value) >= 1,
}
