"""The quick initialisers of core's frozen records, and ToolCall's argument decoding.

Both replace a library path on the turn's hot path (dataclasses' frozen ``__init__``,
``json.loads``'s Python layers), so each is checked against the path it replaces, on
generated inputs.
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import json
import pickle
from dataclasses import InitVar
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import ToolCall
from agentkit_core import ToolResult
from agentkit_core import Usage
from agentkit_core._records import quick_init
from agentkit_core._records import record
from agentkit_core.plugin import ModelRequest


def _shape() -> Any:
    @dataclass(frozen=True, slots=True)
    class Shape:
        a: Any
        b: Any = 2
        c: list[Any] = field(default_factory=list)
        d: Any = None

    return Shape


Plain = _shape()
Quick = quick_init(_shape())

values = st.one_of(st.none(), st.integers(), st.text(max_size=5), st.lists(st.integers()))


def _built(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    try:
        made = cls(*args, **kwargs)
    except TypeError as exc:
        return ("TypeError", str(exc))
    return ("ok", [getattr(made, f.name) for f in dataclasses.fields(made)])


@settings(max_examples=300)
@given(
    args=st.lists(values, max_size=5).map(tuple),
    kwargs=st.dictionaries(st.sampled_from(["a", "b", "c", "d", "e"]), values, max_size=3),
)
def test_a_quick_init_takes_and_refuses_what_the_dataclass_init_does(
    args: tuple[Any, ...], kwargs: dict[str, Any]
) -> None:
    assert _built(Quick, args, kwargs) == _built(Plain, args, kwargs)


def test_a_quick_record_keeps_everything_else_the_dataclass_made() -> None:
    one, two = Quick(1), Quick(1)
    assert one == two and hash(Quick(1, 2, (), 3)) == hash(Quick(1, 2, (), 3))
    assert one.c is not two.c  # a factory default is made per instance
    assert repr(one).endswith("Shape(a=1, b=2, c=[], d=None)")
    with pytest.raises(dataclasses.FrozenInstanceError):
        one.a = 2
    assert dataclasses.replace(one, b=5) == Quick(1, 5)
    assert str(inspect.signature(Quick)) == str(inspect.signature(Plain))


def test_core_records_survive_pickling_and_replace() -> None:
    message = Message("assistant", "hi", (ToolCall("c1", "search", '{"q": 1}'),))
    assert pickle.loads(pickle.dumps(message)) == message
    assert dataclasses.replace(message, content="bye").content == "bye"
    assert Usage(1, 2, 3) + Usage(1, 1, 1) == Usage(2, 3, 4)
    assert ToolResult("x") == ToolResult("x", False, None)
    assert ModelRequest(()).metadata is not ModelRequest(()).metadata


@pytest.mark.parametrize(
    "make",
    [
        lambda: dataclass(slots=True)(type("Open", (), {"__annotations__": {"a": int}})),
        lambda: dataclass(frozen=True)(type("NoSlots", (), {"__annotations__": {"a": int}})),
        lambda: type("NotADataclass", (), {}),
        lambda: dataclass(frozen=True, slots=True, kw_only=True)(
            type("KwOnly", (), {"__annotations__": {"a": int}})
        ),
        lambda: dataclass(frozen=True, slots=True)(
            type("InitOnly", (), {"__annotations__": {"a": int, "b": InitVar[int]}})
        ),
        lambda: dataclass(frozen=True, slots=True)(
            type(
                "NotInInit",
                (),
                {"__annotations__": {"a": int, "b": int}, "b": field(default=1, init=False)},
            )
        ),
        lambda: dataclass(frozen=True, slots=True)(
            type(
                "PostInit",
                (),
                {"__annotations__": {"a": int}, "__post_init__": lambda self: None},
            )
        ),
    ],
)
def test_quick_init_refuses_a_class_it_would_get_wrong(make: Any) -> None:
    cls = make()
    with pytest.raises(TypeError, match=f"not {cls.__qualname__}"):
        quick_init(cls)


def test_a_class_variable_is_no_field_to_write() -> None:
    @quick_init
    @dataclass(frozen=True, slots=True)
    class Decision:
        kind: str
        reason: str = ""
        DEFAULT: ClassVar[Decision]

    Decision.DEFAULT = Decision("allow")
    assert Decision("deny", "no") == Decision("deny", reason="no") != Decision.DEFAULT


def _reference(text: str) -> tuple[str, Any]:
    try:
        return ("ok", json.loads(text) if text.strip() else {})
    except json.JSONDecodeError as exc:
        return ("error", str(exc))


def _parsed(text: str) -> tuple[str, Any]:
    try:
        return ("ok", ToolCall("c1", "tool", text).parsed_arguments())
    except json.JSONDecodeError as exc:
        return ("error", str(exc))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)
edges = st.sampled_from(["", " ", "\n\t", "x", "}", " 1", ","])


@settings(max_examples=500)
@given(
    text=st.one_of(
        st.tuples(edges, json_values.map(json.dumps), edges).map("".join),
        st.text(max_size=20),
    )
)
def test_parsed_arguments_decodes_and_refuses_as_json_loads(text: str) -> None:
    assert _parsed(text) == _reference(text)


def _frozen(make: Any, name: str, slots: bool = True) -> Any:
    """A frozen, slotted class ``Shape``-like, made by ``make`` (``record`` or ``dataclass``)."""
    body = {
        "__annotations__": {"a": "Any", "b": "Any", "c": "list[Any]"},
        "b": 2,
        "c": field(default_factory=list),
        "__module__": __name__,
    }
    return make(frozen=True, slots=slots)(type(name, (), body))


# module-level, so pickle finds them
FrozenRecord = _frozen(record, "FrozenRecord")
FrozenDataclass = _frozen(dataclass, "FrozenDataclass")
FrozenUnslotted = _frozen(record, "FrozenUnslotted", slots=False)


def test_a_frozen_record_is_what_a_frozen_dataclass_is() -> None:
    """``record`` makes a frozen slotted record's methods itself: the same behaviour."""
    made, plain = FrozenRecord, FrozenDataclass
    assert getattr(made.__init__, "__slot_init__", False)  # the record's own, one exec
    assert made.__dataclass_params__.frozen and dataclasses.is_dataclass(made)
    assert str(inspect.signature(made)) == str(inspect.signature(plain))
    assert made.__doc__.replace("Record", "Dataclass") == plain.__doc__
    assert made.__match_args__ == plain.__match_args__
    one, other = made(1), plain(1)
    # ("z", no field: on 3.11 a slotted dataclass's own check names the class before slots
    # and fails in super(); the record's refuses it as dataclasses means to)
    for target, names in ((one, ("a", "z")), (other, ("a",))):
        for name in names:
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"assign to field '{name}'"):
                setattr(target, name, 3)
            with pytest.raises(dataclasses.FrozenInstanceError, match=f"delete field '{name}'"):
                delattr(target, name)
    for clone in (pickle.loads(pickle.dumps(one)), copy.copy(one), copy.deepcopy(one)):
        assert clone == one and clone is not one
    assert dataclasses.replace(one, b=5) == made(1, 5)
    assert hash(made(1, 2, ())) == hash(made(1, 2, ())) == hash(plain(1, 2, ()))
    assert one.c is not made(1).c

    @dataclass(frozen=True)
    class Child(made):  # type: ignore[misc,valid-type]
        d: int = 0

    child = Child(1, d=4)
    assert (child.a, child.d) == (1, 4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        child.d = 5


def test_a_frozen_record_dataclasses_must_make_itself_is_made_so() -> None:
    """An InitVar: dataclasses' own frozen methods."""
    seen: list[int] = []

    @record(frozen=True, slots=True)
    class Posted:
        a: int
        b: InitVar[int]

        def __post_init__(self, b: int) -> None:
            seen.append(b)

    assert Posted(1, 2).a == 1 and seen == [2]
    assert not getattr(Posted.__init__, "__slot_init__", False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        Posted(1, 2).a = 3  # type: ignore[misc]


def test_a_frozen_record_without_slots_is_frozen_too() -> None:
    one = FrozenUnslotted(1)
    assert one.__dataclass_params__.frozen and vars(one) == {"a": 1, "b": 2, "c": []}
    with pytest.raises(dataclasses.FrozenInstanceError, match="assign to field 'a'"):
        one.a = 2
    assert pickle.loads(pickle.dumps(one)) == one == copy.deepcopy(one)
    assert dataclasses.replace(one, b=3) == FrozenUnslotted(1, 3)
    with pytest.raises(TypeError, match="not FrozenUnslotted"):
        quick_init(FrozenUnslotted)


def test_a_frozen_records_post_init_runs_after_its_fields_are_written() -> None:
    @record(frozen=True, slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            if self.a < 0:
                raise ValueError("negative")

    assert getattr(Checked.__init__, "__slot_init__", False) and Checked(1).a == 1
    with pytest.raises(ValueError, match="negative"):
        Checked(-1)


def test_a_frozen_records_fields_out_of_init_take_their_defaults() -> None:
    def body() -> dict[str, Any]:
        return {
            "__annotations__": {"a": "int", "b": "int", "c": "list[int]", "d": "int"},
            "b": field(default=5, init=False),
            "c": field(default_factory=list, init=False),
            "d": 1,
        }

    made = record(frozen=True, slots=True)(type("Out", (), body()))
    plain = dataclass(frozen=True, slots=True)(type("Out", (), body()))
    assert getattr(made.__init__, "__slot_init__", False)
    assert (
        str(inspect.signature(made))
        == str(inspect.signature(plain))
        == "(a: 'int', d: 'int' = 1) -> None"
    )
    assert (made(1).b, made(1).c, made(1, 2).d) == (plain(1).b, plain(1).c, plain(1, 2).d)
    assert made.__match_args__ == plain.__match_args__


#: A field's kind: what its body entry is (no entry: no default).
FIELD_KINDS = {
    "plain": None,
    "default": lambda: 7,
    "factory": lambda: field(default_factory=list),
    "not_in_init": lambda: field(default=3, init=False),
    "factory_not_in_init": lambda: field(default_factory=dict, init=False),
    "class_variable": lambda: 9,  # annotated ClassVar below: no field
}


def _body(kinds: list[str], post_init: bool) -> dict[str, Any]:
    """A class body with one field of each kind in ``kinds``, in order."""
    body: dict[str, Any] = {"__annotations__": {}, "__module__": __name__}
    for i, kind in enumerate(kinds):
        name = f"f{i}"
        body["__annotations__"][name] = "ClassVar[int]" if kind == "class_variable" else "Any"
        make = FIELD_KINDS[kind]
        if make is not None:
            body[name] = make()
    if post_init:
        body["__post_init__"] = lambda self: setattr(type(self), "seen", repr(self))
    return body


def _made(make: Any, kinds: list[str], post_init: bool, **options: bool) -> Any:
    try:
        return make(**options)(type("Made", (), _body(kinds, post_init)))
    except (TypeError, ValueError) as exc:
        return (type(exc).__name__, str(exc))


@settings(max_examples=300)
@given(
    kinds=st.lists(st.sampled_from(sorted(FIELD_KINDS)), max_size=5),
    post_init=st.booleans(),
    frozen=st.booleans(),
    slots=st.booleans(),
    args=st.lists(values, max_size=6).map(tuple),
    kwargs=st.dictionaries(st.sampled_from(["f0", "f1", "f3", "x"]), values, max_size=2),
)
def test_a_record_is_the_dataclass_it_stands_for(
    kinds: list[str],
    post_init: bool,
    frozen: bool,
    slots: bool,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
) -> None:
    """Frozen or not, slotted or not: the same class, its ``__init__`` compiled on first use."""
    made = _made(record, kinds, post_init, frozen=frozen, slots=slots)
    plain = _made(dataclass, kinds, post_init, frozen=frozen, slots=slots)
    if isinstance(plain, tuple) or isinstance(made, tuple):  # refused, in the same words
        assert made == plain
        return
    assert str(inspect.signature(made)) == str(inspect.signature(plain))
    assert made.__doc__ == plain.__doc__ and made.__match_args__ == plain.__match_args__
    assert [(f.name, f.init, f.default, f.default_factory) for f in dataclasses.fields(made)] == [
        (f.name, f.init, f.default, f.default_factory) for f in dataclasses.fields(plain)
    ]
    assert _built(made, args, kwargs) == _built(plain, args, kwargs)
    assert getattr(made, "seen", None) == getattr(plain, "seen", None)
    assert dataclasses.is_dataclass(made) and made.__dataclass_params__.frozen == frozen


def test_a_records_init_is_compiled_when_first_wanted_and_once() -> None:
    """Until then the class holds a stand-in, which binds as the function it becomes."""

    @record(slots=True)
    class Open:
        """Documented: dataclasses would write the doc from its signature."""

        a: int
        b: list[int] = field(default_factory=list)

    @record(frozen=True, slots=True)
    class Shut:
        """Frozen."""

        a: int

    for cls in (Open, Shut):
        assert not inspect.isfunction(vars(cls)["__init__"])  # no exec by defining it
    one = Open(1)
    one.a = 2  # an open record's fields are assigned, as the dataclass's
    assert (one.a, one.b, Open(1).b is not one.b) == (2, [], True)
    compiled = vars(Open)["__init__"]
    assert inspect.isfunction(compiled) and Open(3).a == 3 and vars(Open)["__init__"] is compiled
    assert inspect.isfunction(Shut.__init__) and vars(Shut)["__init__"] is Shut.__init__

    class Child(Shut):
        def __init__(self, a: int) -> None:
            super().__init__(a * 2)

    @record(frozen=True, slots=True)
    class Late:
        """Built first through a subclass."""

        a: int

    class LateChild(Late):
        def __init__(self, a: int) -> None:
            super().__init__(a + 1)  # the stand-in bound through super()

    assert Child(2).a == 4 and LateChild(1).a == 2 and Late(5).a == 5
