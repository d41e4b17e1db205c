"""`frozen_dataclass` behaves exactly as `@dataclass(frozen=True, slots=True)`."""

from __future__ import annotations

import dataclasses
import pickle
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pytest

from basedb.core.frozen import LAZY_METHODS, frozen_dataclass


def _pair(decorator: Any) -> tuple[type, type]:
    """The same classes (a base, and a subclass adding fields) under `decorator`."""

    @decorator
    class Base:
        """A base."""

        name: str
        size: int = 0
        tags: tuple[str, ...] = ()
        raw: Mapping[str, Any] = field(default_factory=dict, repr=False, compare=False)
        note: str = field(default="", hash=False)

    @decorator
    class Sub(Base):
        extra: list[int] = field(default_factory=list)
        hidden: str = field(default="h", repr=False)

    return Base, Sub


LAZY = _pair(frozen_dataclass)
STANDARD = _pair(dataclass(frozen=True, slots=True))


@frozen_dataclass
class Pickled:
    name: str
    values: tuple[int, ...] = ()


def _instances(kind: tuple[type, type]) -> list[Any]:
    base, sub = kind
    return [base("a"), base("a", 1, ("x",), {"k": 1}, "n"), base("a", raw={"other": 2}),
            base("a", note="other"), base("b"), sub("a"), sub("a", extra=[1]),
            sub("a", hidden="other"), sub("a", 1, ("x",), {"k": 1}, "n", [2], "z")]


def _fresh() -> tuple[tuple[type, type], tuple[type, type]]:
    """New classes each time, so every test sees stand-ins before their first use."""
    return _pair(frozen_dataclass), _pair(dataclass(frozen=True, slots=True))


def test_repr_eq_and_hash_match_the_standard_dataclass() -> None:
    lazy, standard = _fresh()
    lazy_items, standard_items = _instances(lazy), _instances(standard)
    assert [repr(item) for item in lazy_items] == [repr(item) for item in standard_items]
    for i, (left_lazy, left_standard) in enumerate(zip(lazy_items, standard_items,
                                                       strict=True)):
        for j, (right_lazy, right_standard) in enumerate(zip(lazy_items, standard_items,
                                                             strict=True)):
            assert (left_lazy == right_lazy) == (left_standard == right_standard), (i, j)
            assert (left_lazy != right_lazy) == (left_standard != right_standard), (i, j)
        try:
            expected: Any = hash(left_standard)
        except TypeError as error:
            expected = type(error)
        try:
            got: Any = hash(left_lazy)
        except TypeError as error:
            got = type(error)
        assert got == expected, i


def _code_name(cls: type, name: str) -> str:
    method = cls.__dict__[name]
    return str(getattr(method, "__wrapped__", method).__code__.co_name)  # under reprlib's guard


@pytest.mark.parametrize("first", LAZY_METHODS)
def test_the_first_call_of_any_method_puts_all_three_on_the_class(first: str) -> None:
    (base, sub), _ = _fresh()
    item = base("a", 1)
    assert all(_code_name(base, name) == "stand_in" for name in LAZY_METHODS)
    {"__eq__": lambda: item == base("a", 1), "__hash__": lambda: hash(item),
     "__repr__": lambda: repr(item)}[first]()
    assert all(_code_name(base, name) == name for name in LAZY_METHODS)
    # the subclass keeps its own stand-ins until its own first use
    assert _code_name(sub, "__eq__") == "stand_in"
    assert item == base("a", 1) and hash(item) == hash(base("a", 1))
    assert repr(item).endswith(".Base(name='a', size=1, tags=(), note='')")


def test_other_classes_are_not_equal_and_not_compared() -> None:
    (base, sub), (standard_base, _) = _fresh()
    assert base("a") != sub("a")
    assert base("a") != standard_base("a")
    assert base("a").__eq__(object()) is NotImplemented
    assert base("a").__eq__(sub("a")) is NotImplemented


def test_frozen_slotted_and_dataclass_tools_work() -> None:
    (base, sub), _ = _fresh()
    item: Any = sub("a", extra=[1])
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.name = "b"
    with pytest.raises(dataclasses.FrozenInstanceError):
        del item.name
    assert "__slots__" in base.__dict__ and not hasattr(item, "__dict__")
    assert base.__dataclass_params__.frozen  # type: ignore[attr-defined]
    assert dataclasses.is_dataclass(sub)
    assert [f.name for f in dataclasses.fields(item)] == [
        "name", "size", "tags", "raw", "note", "extra", "hidden"]
    assert item.__match_args__ == ("name", "size", "tags", "raw", "note", "extra", "hidden")
    changed = dataclasses.replace(item, size=3)
    assert changed.size == 3 and changed != item
    assert dataclasses.asdict(base("a"))["name"] == "a"
    copied = pickle.loads(pickle.dumps(Pickled("p", (1, 2))))
    assert copied == Pickled("p", (1, 2)) and hash(copied) == hash(Pickled("p", (1, 2)))


def test_methods_written_in_the_body_are_kept() -> None:
    @frozen_dataclass
    class Own:
        name: str

        def __eq__(self, other: object) -> bool:
            return True

        def __hash__(self) -> int:
            return 7

        def __repr__(self) -> str:
            return "own"

    assert Own("a") == Own("b") and hash(Own("a")) == 7 and repr(Own("a")) == "own"

    @frozen_dataclass
    class EqOnly:  # Python sets __hash__ = None here; dataclasses makes one anyway
        name: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, EqOnly)

    @dataclass(frozen=True, slots=True)
    class StandardEqOnly:
        name: str

        def __eq__(self, other: object) -> bool:
            return isinstance(other, StandardEqOnly)

    assert EqOnly("a") == EqOnly("b")
    assert hash(EqOnly("a")) == hash(StandardEqOnly("a"))


def test_eq_false_and_repr_false_are_honoured() -> None:
    @frozen_dataclass(eq=False, repr=False)
    class Plain:
        name: str

    @dataclass(frozen=True, slots=True, eq=False, repr=False)
    class StandardPlain:
        name: str

    item = Plain("a")
    assert item != Plain("a") and item == item
    assert hash(item) == object.__hash__(item)
    assert repr(item).startswith("<") and repr(StandardPlain("a")).startswith("<")


def test_unslotted() -> None:
    @frozen_dataclass(slots=False)
    class Loose:
        name: str

    assert "__slots__" not in Loose.__dict__
    assert Loose("a") == Loose("a") and repr(Loose("a")).endswith("Loose(name='a')")


def test_recursive_repr_is_guarded_as_in_dataclasses() -> None:
    @frozen_dataclass
    class Box:
        items: list[Any]

    box = Box([])
    box.items.append(box)
    assert repr(box).endswith("Box(items=[...])")


def test_threads_racing_to_the_first_use_agree() -> None:
    (base, _), _ = _fresh()
    items = [base("a", n % 3) for n in range(60)]
    results: list[tuple[int, bool, str]] = []
    start = threading.Barrier(6)

    def use() -> None:
        start.wait()
        for item in items:
            results.append((hash(item), item == base("a", item.size), repr(item)))

    threads = [threading.Thread(target=use) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 360 and all(equal for _, equal, _ in results)
    assert len({(h, r) for h, _, r in results}) == 3
