"""The state encoder: every documented type, what comes back, and errors that name the path."""

from __future__ import annotations

import collections
import dataclasses
import enum
import json
import math
import uuid
from dataclasses import dataclass
from dataclasses import field
from datetime import UTC
from datetime import date
from datetime import datetime
from datetime import time
from decimal import Decimal
from pathlib import PurePosixPath
from typing import Any

import attrs
import pydantic
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

from agentkit_core import Message
from agentkit_core import StorageError
from agentkit_core import ToolCall
from agentkit_core import Usage
from agentkit_core.content import AudioPart
from agentkit_core.content import ImagePart
from agentkit_core.content import TextPart
from agentkit_core.plugin import DecodingError
from agentkit_core.plugin import EncodingError
from agentkit_core.plugin import decode_state
from agentkit_core.plugin import encode_state


class Colour(enum.Enum):
    RED = "red"


class Level(enum.IntEnum):
    HIGH = 3


@dataclass
class Event:
    when: Any
    tags: tuple[str, ...] = ()


@attrs.define
class Point:
    x: int
    label: Any = None


class Order(pydantic.BaseModel):
    id: int
    placed: datetime
    note: Any = None


@dataclass
class Holder:
    items: list[Any] = field(default_factory=list)


def round_trip(value: Any) -> Any:
    text = encode_state(value)
    json.loads(text)  # always plain JSON
    return decode_state(text)


def test_json_types_come_back_unchanged() -> None:
    value = {"s": "héllo 🙂", "i": 3, "f": 2.5, "b": True, "n": None, "l": [1, [2, {"x": []}]]}
    assert round_trip(value) == value


def test_tagged_types_come_back_as_themselves() -> None:
    when = datetime(2026, 12, 3, 7, 30, 1, 5, tzinfo=UTC)
    call = ToolCall("c1", "search", '{"q": "x"}')
    msg = Message("assistant", "thinking", (call,), metadata={"k": [1]})
    parts = Message.user(({"type": "text", "text": "hi"},))
    value = {
        "when": when,
        "day": date(2026, 12, 3),
        "at": time(7, 30),
        "raw": b"\x00\xffbytes",
        "buf": bytearray(b"ab"),
        "messages": [msg, parts, Message.tool("c1", "found", name="search", is_error=True)],
        "usage": Usage(10, 5, 1),
    }
    back = round_trip(value)
    assert back["when"] == when and back["when"].tzinfo is not None
    assert back["day"] == date(2026, 12, 3) and back["at"] == time(7, 30)
    assert back["raw"] == b"\x00\xffbytes" and back["buf"] == b"ab"
    assert back["messages"][0] == msg and back["messages"][0].metadata == {"k": [1]}
    assert back["messages"][0].tool_calls[0] == call
    assert back["messages"][1].content == ({"type": "text", "text": "hi"},)
    assert back["messages"][2].is_error is True
    assert back["usage"] == Usage(10, 5, 1)


def test_record_types_come_back_as_plain_json() -> None:
    when = datetime(2026, 1, 2, tzinfo=UTC)
    u = uuid.UUID(int=7)
    value = {
        "event": Event(when, ("a", "b")),
        "point": Point(1, Colour.RED),
        "order": Order(id=4, placed=when, note=Level.HIGH),
        "set": {3, 1, 2},
        "frozen": frozenset({"b", "a"}),
        "tuple": (1, (2, 3)),
        "misc": [u, Decimal("1.10"), PurePosixPath("/tmp/x")],
        1: "int key",
    }
    assert round_trip(value) == {
        "event": {"when": when, "tags": ["a", "b"]},
        "point": {"x": 1, "label": "red"},
        "order": {"id": 4, "placed": "2026-01-02T00:00:00Z", "note": 3},
        "set": [1, 2, 3],
        "frozen": ["a", "b"],
        "tuple": [1, [2, 3]],
        "misc": [str(u), "1.10", "/tmp/x"],
        "1": "int key",
    }


class Opaque:
    pass


@pytest.mark.parametrize(
    ("state", "path", "message"),
    [
        (
            {"items": [0, 1, 2, Event(Opaque())]},
            'state["items"][3].when',
            r'cannot encode state\["items"\]\[3\]\.when: a \S*test_encoder\.Opaque is not',
        ),
        ({"a": {"b": math.nan}}, 'state["a"]["b"]', r'state\["a"\]\["b"\]: nan has no JSON form'),
        ([math.inf], "state[0]", r"state\[0\]: inf has no JSON form"),
        ({(1, 2): "x"}, "state", r"key \(1, 2\) is a tuple; JSON object keys must be strings"),
        (Point(1, {Opaque()}), "state.label[0]", r"state\.label\[0\]: a \S*test_encoder\.Opaque"),
        (Order(id=1, placed=datetime(2026, 1, 1), note=Opaque()), "state.note", r"state\.note"),
        (Holder([Message.user("x"), lambda: 1]), "state.items[1]", r"function is not encodable"),
        (
            {"m": Message("user", "x", metadata={"obj": Opaque()})},
            'state["m"].metadata["obj"]',
            "Opaque",
        ),
    ],
)
def test_unencodable_values_are_named_by_path(state: Any, path: str, message: str) -> None:
    with pytest.raises(EncodingError, match=message) as info:
        encode_state(state)
    assert info.value.path == path
    assert isinstance(info.value, TypeError)


def test_a_cycle_is_named() -> None:
    loop: dict[str, Any] = {"a": []}
    loop["a"].append(loop)
    with pytest.raises(EncodingError, match=r'state\["a"\]\[0\]: it contains itself'):
        encode_state(loop)


def test_the_root_name_is_the_caller_s() -> None:
    with pytest.raises(EncodingError, match=r'metadata\["x"\]'):
        encode_state({"x": Opaque()}, root="metadata")


def b64(value: str) -> str:
    """A tagged bytes value whose b64 field is ``value`` (JSON text)."""
    return '{"__agentkit__": "bytes"' + (f', "b64": {value}' if value else "") + "}"


@pytest.mark.parametrize(
    ("text", "path", "message"),
    [
        ('{"a": ' + b64('"!!!!"') + "}", 'state["a"]', r'state\["a"\]: .*not base64'),
        ('{"a": [0, ' + b64('"YWJ"') + "]}", 'state["a"][1]', r"not base64"),
        ('{"a": ' + b64("5") + "}", 'state["a"]', r"not base64"),
        ('{"a": ' + b64("") + "}", 'state["a"]', r"has no 'b64'"),
        ('[{"__agentkit__": "datetime", "iso": "yesterday"}]', "state[0]", r"datetime"),
        ('{"__agentkit__": "date"}', "state", r"has no 'iso'"),
        ('{"m": {"__agentkit__": "message", "role": "user", "x": 1}}', 'state["m"]', r"message"),
        ('{"a": {"__agentkit__": "hologram"}}', 'state["a"]', r"unknown tagged type 'hologram'"),
        ('{"a": 1', "state", r"cannot decode state: it is not JSON \(Expecting"),
        ("", "state", r"it is not JSON"),
    ],
)
def test_undecodable_state_is_named_by_path(text: str, path: str, message: str) -> None:
    with pytest.raises(DecodingError, match=message) as info:
        decode_state(text)
    assert info.value.path == path
    assert isinstance(info.value, StorageError) and isinstance(info.value, ValueError)


def test_the_decoding_root_is_the_caller_s() -> None:
    with pytest.raises(DecodingError, match=r'metadata\["x"\]') as info:
        decode_state('{"x": ' + b64('"@"') + "}", root="metadata")
    assert info.value.path == 'metadata["x"]'


@given(st.binary())
def test_bytes_round_trip(data: bytes) -> None:
    assert round_trip({"b": data}) == {"b": data}


@given(st.text(max_size=12))
def test_bad_base64_never_decodes_silently(b64: str) -> None:
    import base64
    import binascii

    text = json.dumps({"b": {"__agentkit__": "bytes", "b64": b64}})
    try:
        want = base64.b64decode(b64, validate=True)
    except (binascii.Error, ValueError):
        with pytest.raises(DecodingError, match="not base64"):
            decode_state(text)
    else:
        assert decode_state(text) == {"b": want}


class Ratio(float):
    """A float subclass: orjson refuses it, json writes it as a float."""


class Number(enum.Enum):
    NAN = math.nan
    HALF = 0.5


_floats = st.floats(allow_nan=True, allow_infinity=True)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)  # past 64 bits: orjson refuses those
    | _floats
    | st.text(max_size=8)
    | st.sampled_from([Colour.RED, Level.HIGH, Number.HALF, Number.NAN, Usage(1, 2, 1)])
    | st.builds(Ratio, _floats)
    | st.datetimes()
    | st.binary(max_size=4)
)
_keys = st.text(max_size=4) | st.integers(-3, 3) | st.booleans() | st.none()
_values = st.recursive(
    _scalars,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(inner, max_size=3).map(tuple)
        | st.dictionaries(_keys, inner, max_size=4)
        | st.frozensets(st.integers(-5, 5) | st.text(max_size=2), max_size=3)
        | st.builds(Event, inner, st.just(("t",)))
        | st.builds(Point, st.integers(0, 9), inner)
        | st.builds(lambda m: Message("user", "x", metadata={"m": m}), inner)
        | st.builds(  # a record inside a record: the walk for NaN leaves both to ``default``
            lambda m: Message("assistant", "", (ToolCall("c", "t", "{}"),), metadata={"m": m}),
            inner,
        )
        | st.builds(  # any value in any field: orjson's tagger checks each as it makes the dict
            lambda role, content, calls, name: Message(role, content, calls, name=name),
            inner,
            inner,
            inner | st.tuples(st.builds(ToolCall, st.just("c"), st.just("t"), inner)),
            inner,
        )
    ),
    max_leaves=12,
)


def _nested(depth: int) -> Any:
    value: Any = [1.5]
    for _ in range(depth):
        value = {"x": value}
    return value


def _cycle() -> Any:
    value: dict[str, Any] = {}
    value["self"] = [value]
    return value


class Text(str):
    pass


Pair = collections.namedtuple("Pair", "a b")

#: Shapes at the edges of what orjson takes: subclasses, big ints, key types, depth, cycles.
ODD_SHAPES = [
    collections.OrderedDict(b=1, a=[2.5]),
    collections.defaultdict(list, a=[1]),
    collections.Counter("abca"),
    Pair(1, math.inf),
    Pair(1, 2.5),
    Text("plain"),
    {Text("k"): 1},
    Ratio(2.5),
    [Ratio(math.nan)],
    2**64,
    -(2**63) - 1,
    {2: "a", 2.5: "b", True: "c", None: "d"},
    {(1, 2): "tuple key"},
    _nested(200),
    _nested(400),
    _cycle(),
    {"s": "\x00\x1f\x7f\u2028\ud800"},
    Level.HIGH,
    {"e": Number.HALF},
]


def _holds_float(decoded: Any) -> bool:
    """Whether plain decoded JSON holds a float anywhere (its text may spell the exponent)."""
    pending = [decoded]  # a stack, not recursion: the odd shapes nest 400 deep
    while pending:
        value = pending.pop()
        if isinstance(value, float):
            return True
        if isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, list):
            pending.extend(value)
    return False


def _outcome(encode: Any, value: Any) -> tuple[str, Any]:
    try:
        return "text", encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        return "error", type(exc)


def _encodes_as_json_does(value: Any) -> None:
    """With orjson installed the encoding takes its path; what it writes and refuses is json's."""
    from agentkit_core._encoder import _json_encode
    from agentkit_core._encoder import _orjson_encodings

    assert _orjson_encodings() is not None  # the plugins' test environment installs orjson
    fast, plain = _outcome(encode_state, value), _outcome(_json_encode, value)
    if plain[0] == "text" and _names_a_key_twice(plain[1]):  # 1 and "1" both written as "1"
        assert fast == ("error", EncodingError), (value, fast)
        return
    assert fast[0] == plain[0], (value, fast, plain)
    if fast[0] == "text":
        assert json.loads(fast[1]) == json.loads(plain[1])
        assert decode_state(fast[1]) == decode_state(plain[1])
        if not _holds_float(json.loads(plain[1])):
            assert fast[1] == plain[1]  # only a float's exponent may be written differently


def _names_a_key_twice(text: str) -> bool:
    twice = False

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal twice
        twice = twice or len({k for k, _ in items}) < len(items)
        return dict(items)

    json.loads(text, object_pairs_hook=pairs)
    return twice


@given(st.dictionaries(_keys, st.integers(), max_size=6), st.sampled_from(["state", "body"]))
@example({1: 1, "1": 2}, "state")
@example({None: 1, "null": 2, True: 3, "true": 4}, "body")
def test_no_value_is_lost_to_keys_written_alike(value: dict[Any, int], root: str) -> None:
    """json writes 1 and "1" both as the key "1": such a dict is refused, never half kept."""
    written = [k if isinstance(k, str) else json.dumps(k) for k in value]
    for state in (value, {"nested": [value]}):
        if len(set(written)) < len(written):
            with pytest.raises(EncodingError, match="both written as the JSON key"):
                encode_state(state, root=root)
        else:
            assert decode_state(encode_state(state, root=root)) == json.loads(json.dumps(state))


@given(_values)
def test_orjson_and_json_encode_and_refuse_the_same_values(value: Any) -> None:
    _encodes_as_json_does(value)


@given(_values)
@example([Number.NAN])  # an enum of NaN in a list: refused for the whole list, found by the walk
def test_encode_finite_writes_and_refuses_what_encode_state_does_but_a_loose_nan(
    value: Any,
) -> None:
    """Without the walk of its containers, the text is encode_state's and so is a refusal.

    The one difference is what the walk is there for: a NaN or infinity (or an enum of one) in
    a container outside a record (its maker was to check), which orjson writes as null.
    """
    from agentkit_core._encoder import _finite
    from agentkit_core._encoder import encode_finite

    try:
        expected = encode_state(value)
    except EncodingError as exc:
        refused = exc
    else:
        assert encode_finite(value) == expected
        return
    try:
        encode_finite(value)
    except EncodingError as exc:
        assert (exc.path, str(exc)) == (refused.path, str(refused))
    else:  # what the walk left out refuses, and nothing else does
        with pytest.raises(ValueError, match="has no JSON form"):
            _finite(value)


@pytest.mark.parametrize("value", ODD_SHAPES, ids=range(len(ODD_SHAPES)))
def test_odd_shapes_encode_as_json_encodes_them(value: Any) -> None:
    _encodes_as_json_does(value)


@given(st.sampled_from([math.nan, math.inf, -math.inf]), st.integers(0, 7))
def test_nan_anywhere_is_refused_by_the_orjson_path(bad: float, where: int) -> None:
    """orjson would write NaN as null: the walk before it and around ``default`` refuses it."""
    from agentkit_core._encoder import _orjson_encodings

    found = _orjson_encodings()
    assert found is not None
    fast = found[0]
    placed = [
        {"a": [1, {"b": bad}]},
        (None, bad),
        Event(when={"x": [bad]}),
        Message("user", "x", metadata={"score": bad}),
        {"n": Number.NAN},
        {"m": [Message("tool", "x", tool_call_id="c", metadata={"s": [bad]})]},
        Message("assistant", "", (ToolCall("c", "t"), bad)),  # type: ignore[arg-type]
        {"m": Message("user", "x", name=bad)},  # type: ignore[arg-type]
    ][where]
    with pytest.raises((TypeError, ValueError)):
        fast(placed)
    with pytest.raises(EncodingError, match="cannot encode state"):
        encode_state(placed)


def test_each_message_type_s_tagged_dict_is_its_fields_in_order() -> None:
    """The generated tagger writes what a field-by-field copy does, for every message type."""
    import dataclasses

    from agentkit_core._content import AudioPart
    from agentkit_core._content import DocumentPart
    from agentkit_core._content import ImagePart
    from agentkit_core._content import TextPart
    from agentkit_core._encoder import _RECORDS
    from agentkit_core._encoder import TAG
    from agentkit_core._encoder import _fields
    from agentkit_core._encoder import _make_tagger

    samples = [
        Message("assistant", "x", (ToolCall("c", "n", "{}"),), metadata={"k": 1}),
        ToolCall("c", "n", "{}"),
        Usage(1, 2, 3),
        TextPart("t"),
        ImagePart(url="https://example.com/a.png"),
        DocumentPart(url="https://example.com/a.pdf"),
        AudioPart(b"ab", "audio/wav"),
    ]
    assert {type(s) for s in samples} == set(_RECORDS.values())
    tags = {cls: tag for tag, cls in _RECORDS.items()}
    for sample in samples:
        fields = [(f.name, getattr(sample, f.name)) for f in dataclasses.fields(sample)]
        assert list(_fields(sample).items()) == [(TAG, tags[type(sample)]), *fields]
        checked = _make_tagger(type(sample), tags[type(sample)], checked=True)
        # orjson's tagger tags a message's tool calls itself: a list of their tagged dicts
        inline = [(n, [_fields(c) for c in v] if n == "tool_calls" else v) for n, v in fields]
        assert list(checked(sample).items()) == [(TAG, tags[type(sample)]), *inline]


_anything = _scalars | st.lists(_scalars, max_size=2) | st.dictionaries(_keys, _scalars, max_size=2)
_non_finite = st.sampled_from([math.nan, math.inf, -math.inf])
#: A call's field: a non-finite float alone or in a container, text, or anything.
_call_field = (
    _non_finite
    | st.text(max_size=3)
    | st.lists(_non_finite | _scalars, max_size=2).map(tuple)
    | st.dictionaries(st.text(max_size=2), _non_finite | _scalars, max_size=2)
    | _anything
    | _values
)
_calls = st.builds(ToolCall, _call_field, _call_field, _call_field)
_parts = st.sampled_from(
    [
        TextPart("t"),
        ImagePart(url="https://example.com/a.png"),
        ImagePart(data=b"\x89PNG", media_type="image/png"),
        AudioPart(b"ab", "audio/wav"),
        {"type": "text", "text": "hi"},
    ]
)


def _messages(field: st.SearchStrategy[Any]) -> st.SearchStrategy[Message]:
    """Messages with several tool calls, parts and metadata, ``field`` in any other field.

    Calls hold non-finite floats in their fields (alone, in containers), a tuple mixes calls
    with other values, and metadata holds floats, NaN and infinity at any depth.
    """
    calls = st.lists(_calls, min_size=1, max_size=3)
    return st.builds(
        Message,
        st.sampled_from(["user", "assistant", "tool"]) | field,
        st.text(max_size=4) | st.lists(_parts, max_size=3).map(tuple) | field,
        calls.map(tuple)
        | st.just(())
        | st.lists(_calls | field, max_size=3).map(tuple)
        | calls
        | field,
        field,
        field,
        st.booleans() | field,
        st.just({}) | st.dictionaries(st.text(max_size=3), _values, max_size=3),
    )


_plain_fields = st.none() | st.text(max_size=3)


@given(
    st.lists(_messages(_plain_fields) | _messages(_anything), min_size=1, max_size=3),
    st.sampled_from(["body", "list", "bare"]),
)
def test_messages_with_tool_calls_encode_as_json_encodes_them(
    messages: list[Message], shape: str
) -> None:
    """A message's tool calls, tagged with the message in one call, write json's bytes."""
    value: Any = {
        "body": {"message": messages[0], "model": "m", "usage": {"input_tokens": 1}, "run": "r"},
        "list": messages,
        "bare": messages[0],
    }[shape]
    _encodes_as_json_does(value)


@given(_messages(_anything), st.sampled_from([math.nan, math.inf, -math.inf]), st.integers(0, 4))
def test_a_non_finite_float_in_a_tool_call_is_refused(
    message: Message, bad: float, where: int
) -> None:
    """orjson would write it as null: the call's fields are checked as the message is tagged."""
    call = [
        ToolCall("c", "t", bad),  # type: ignore[arg-type]
        ToolCall("c", "t", [1, {"x": bad}]),  # type: ignore[arg-type]
        ToolCall(bad, "t"),  # type: ignore[arg-type]
        ToolCall("c", "t", Message("user", "x", metadata={"m": bad})),  # type: ignore[arg-type]
        ToolCall("c", "t", (Number.NAN,) if math.isnan(bad) else (1, bad)),  # type: ignore[arg-type]
    ][where]
    calls = (*message.tool_calls, call) if isinstance(message.tool_calls, tuple) else (call,)
    placed = {"message": dataclasses.replace(message, tool_calls=calls), "run": "r"}
    with pytest.raises(EncodingError, match="cannot encode body"):
        encode_state(placed, root="body")
