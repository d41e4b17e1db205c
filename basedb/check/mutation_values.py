"""Whether a Mutation's `set` value can ever be stored in its field.

A "$param" of a kind the field cannot hold (a BOOL into a text field, a TEXT into a
number field) or a literal of the wrong JSON type would pass deploy and then fail on every
call, with an error that blames the caller's value. Only combinations that can never
succeed are judged (the platform's cell rules decide the rest at invoke time);
attachment and location fields take shapes no param kind produces and are left alone.
"""

from __future__ import annotations

from typing import Any

from basedb.workspace.model import Field, Param

_STRING_KINDS = frozenset({"TEXT", "RECORD_ID", "USER_ID", "DATE", "DATETIME"})
# The param kinds whose values a field type can hold (a value at a time).
_KINDS_BY_TYPE: dict[str, frozenset[str]] = {
    "text": _STRING_KINDS,
    "number": frozenset({"INT", "NUMBER"}),
    "checkbox": frozenset({"BOOL"}),
    "datetime": _STRING_KINDS | {"INT", "NUMBER"},  # date strings or epoch milliseconds
    "select": _STRING_KINDS,  # option names
    "link": _STRING_KINDS,  # record ids
    "user": _STRING_KINDS,  # user ids
}
_LIST_TYPES = frozenset({"link", "user"})  # plus a multi-select


def param_misfit(param: Param, field: Field) -> str | None:
    """Why no value of `param` can be stored in `field`, or None when some can."""
    kinds = _KINDS_BY_TYPE.get(field.type)
    if kinds is None or not isinstance(param.kind, str):
        return None
    kind = param.element_kind
    takes_lists = field.type in _LIST_TYPES or (field.type == "select" and field.multiple)
    if kind in kinds and (takes_lists or not param.is_array):
        return None
    what = f"list of {kind}" if param.is_array else kind
    return f"a {what} value cannot be stored in a {_describe(field)}"


def literal_misfit(value: Any, field: Field) -> str | None:
    """What `field` expects when the literal `value` can never be stored in it."""
    if value is None or (isinstance(value, str) and field.type == "datetime"):
        return None
    if field.type == "text" and not isinstance(value, str):
        return "a string"
    if field.type == "number" and (isinstance(value, bool)
                                   or not isinstance(value, (int, float))):
        return "a JSON number"
    if field.type == "checkbox" and not isinstance(value, bool):
        return "true or false"
    if field.type == "datetime" and (isinstance(value, bool) or not isinstance(value, int)):
        return 'a date such as "2027-01-25 09:00:00", or milliseconds since 1970'
    if field.type in _LIST_TYPES and not (
            isinstance(value, list)
            and all(isinstance(item, dict) and isinstance(item.get("id"), str)
                    for item in value)):
        return 'a list of id objects such as [{"id": "…"}]'
    return None


# The kinds to suggest for a field type (what its values naturally are).
_SUGGESTED = {"text": "TEXT", "number": "INT or NUMBER", "checkbox": "BOOL",
              "datetime": "DATE or DATETIME", "link": "RECORD_ID, list: true for several",
              "user": "USER_ID"}


def suggested_kinds(field: Field) -> str:
    if field.type == "select":
        return "TEXT or TEXT[]" if field.multiple else "TEXT, one option name"
    return _SUGGESTED.get(field.type, "")


def _describe(field: Field) -> str:
    multiple = "multi-value " if field.multiple and field.type in ("select", "user") else ""
    return f"{multiple}{field.type} field"
