"""Frozen dataclasses whose `==`, `hash()` and `repr()` are made on first use.

    @frozen_dataclass
    class Field:
        name: str
        options: tuple[str, ...] = ()

is `@dataclass(frozen=True, slots=True)`, with the same fields, `__init__`, frozenness,
slots, pickling, `dataclasses.fields` and `dataclasses.replace`, and the same `__eq__`,
`__hash__` and `__repr__` — only made later. `dataclasses` compiles every method it
generates from source as the class is defined: six for a frozen class, about a
millisecond a class, and a deploy imports well over a hundred of them while it compares,
hashes or prints few. So the class is defined without those three, and stand-ins take
their place. The first call of any of them has `dataclasses` generate all three for a
twin class with the same fields (and the same `compare`, `hash` and `repr` flags), puts
them on the class in place of the stand-ins, and answers with them: from then on, the
class has exactly the methods `@dataclass(frozen=True)` would have given it. A method
written in the class body is kept, as `dataclasses` keeps it. (Only the class's
`__dataclass_params__` tells: it records eq=False and repr=False.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)

LAZY_METHODS = ("__eq__", "__hash__", "__repr__")


@overload
def frozen_dataclass(cls: T, /) -> T: ...


@overload
def frozen_dataclass(*, slots: bool = True, eq: bool = True,
                     repr: bool = True) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_dataclass(cls: T | None = None, /, *, slots: bool = True, eq: bool = True,
                     repr: bool = True) -> T | Callable[[T], T]:
    """`@dataclass(frozen=True, slots=slots, eq=eq, repr=repr)`, its methods for `==`,
    `hash()` and `repr()` made on first use (see the module docstring)."""
    def wrap(cls: T) -> T:
        return _define(cls, slots=slots, eq=eq, repr=repr)

    return wrap if cls is None else wrap(cls)


def _define(cls: T, *, slots: bool, eq: bool, repr: bool) -> T:
    body = cls.__dict__
    # What `dataclasses` would generate for a frozen class: a method the body defines is
    # kept, and a body that defines __eq__ alone has __hash__ = None set by Python, which
    # does not count as defining it.
    explicit_hash = "__hash__" in body and not (body["__hash__"] is None and "__eq__" in body)
    wanted = [name for name, on in (("__eq__", eq), ("__hash__", eq and not explicit_hash),
                                    ("__repr__", repr))
              if on and (name == "__hash__" or name not in body)]
    made: Any = dataclasses.dataclass(frozen=True, slots=slots, eq=False, repr=False)(cls)
    for name in wanted:
        setattr(made, name, _stand_in(made, name, wanted))
    return made


def _stand_in(cls: type, name: str, wanted: list[str]) -> Callable[..., Any]:
    def stand_in(self: Any, *args: Any) -> Any:
        methods = _generated(cls)
        for each in wanted:  # two threads may both get here: they put the same methods
            setattr(cls, each, methods[each])
        return methods[name](self, *args)

    stand_in.__name__ = name
    stand_in.__qualname__ = f"{cls.__qualname__}.{name}"
    return stand_in


def _generated(cls: type) -> dict[str, Callable[..., Any]]:
    """The methods `dataclasses` makes for `cls`'s fields: those of a twin class with
    the same fields and flags, defined now."""
    fields = dataclasses.fields(cls)
    namespace: dict[str, Any] = {
        "__annotations__": {field.name: object for field in fields},
        "__module__": cls.__module__,
        "__qualname__": cls.__qualname__,
        "__doc__": cls.__name__,  # spares dataclasses working out a signature for it
    }
    for field in fields:
        namespace[field.name] = dataclasses.field(repr=field.repr, hash=field.hash,
                                                  compare=field.compare)
    twin: type = dataclasses.dataclass(init=False, repr=True, eq=True, unsafe_hash=True,
                                       match_args=False)(type(cls.__name__, (), namespace))
    return {name: twin.__dict__[name] for name in LAZY_METHODS}
