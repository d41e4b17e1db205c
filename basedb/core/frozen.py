"""`frozen_dataclass`: how basedb declares an immutable value.

    @frozen_dataclass
    class Field:
        name: str
        options: tuple[str, ...] = ()

is `@dataclass(frozen=True, slots=True)`; `eq`, `repr` and `slots` can be turned off as
in `dataclasses`. One name for it keeps the choice in one place. (Making `==`, `hash()`
and `repr()` on first use instead of as each class is defined bought under 10% of a
deploy, so it was dropped: docs/performance.md.)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)


@overload
def frozen_dataclass(cls: T, /) -> T: ...


@overload
def frozen_dataclass(*, slots: bool = True, eq: bool = True,
                     repr: bool = True) -> Callable[[T], T]: ...


@dataclass_transform(frozen_default=True, field_specifiers=(dataclasses.field,))
def frozen_dataclass(cls: T | None = None, /, *, slots: bool = True, eq: bool = True,
                     repr: bool = True) -> T | Callable[[T], T]:
    """`@dataclass(frozen=True, slots=slots, eq=eq, repr=repr)`."""
    def wrap(cls: T) -> T:
        made: Any = dataclasses.dataclass(frozen=True, slots=slots, eq=eq, repr=repr)(cls)
        return made

    return wrap if cls is None else wrap(cls)
