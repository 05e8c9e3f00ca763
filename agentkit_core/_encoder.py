"""The one state encoder: run state to JSON text for every checkpoint store, and back.

``encode_state`` accepts JSON's own types plus the types run state is made of; see
:func:`encode_state` for the table. A value it cannot encode raises :class:`EncodingError`
naming where it sits (``state["items"][3].when``) before anything is written anywhere.

Encoding runs orjson when it is installed (the checkpoint and session stores install it), else
CPython's C JSON encoder, both with one ``default`` hook for the types beyond JSON's and both
writing compact JSON. orjson is several times faster but writes NaN as ``null`` and refuses some
values ``json`` takes (integers beyond 64 bits, non-string keys, subclasses of the JSON types):
the values are checked for NaN and infinity first, and whatever orjson refuses goes to ``json``,
so what is encoded, and what is refused, is the same either way. Only when ``json`` fails too
does a second walk locate the offending value.
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import json
import math
import sys
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from enum import Enum
from typing import Any

from ._blobs import collecting
from ._blobs import reference
from ._content import AudioPart
from ._content import DocumentPart
from ._content import ImagePart
from ._content import TextPart
from ._errors import DecodingError
from ._errors import EncodingError
from ._lazy import loaded_instance
from ._messages import DuplicateKey
from ._messages import JSONValue
from ._messages import Message
from ._messages import ToolCall
from ._messages import TranscriptView
from ._messages import Usage
from ._messages import unique_keys

TAG = "__agentkit__"
"""The key that marks a tagged value; user dicts must not use it."""

_ENCODABLE = (
    "None, bool, int, finite float, str, dict (str keys), list, tuple, set, frozenset, "
    "bytes, datetime, date, time, Enum, UUID, Decimal, paths, Message, ToolCall, Usage, "
    "content parts, "
    "pydantic models, attrs and dataclass instances"
)


def encode_state(obj: object, *, root: str = "state") -> str:
    """``obj`` as compact JSON text (orjson's when it is installed, see the module docstring).

    =========================================  ==============================================
    in                                         back from :func:`decode_state`
    =========================================  ==============================================
    None, bool, int, float (finite), str       the same
    dict (keys str; int/float/bool/None keys)  dict (those keys become strings, as in JSON)
    list, tuple                                list
    set, frozenset                             list (sorted when the items sort)
    bytes, bytearray, memoryview               bytes (tagged, base64)
    datetime, date, time                       the same type (tagged, ISO-8601)
    Message, ToolCall, Usage                   the same type (tagged)
    TextPart, ImagePart, DocumentPart,         the same type (tagged)
    AudioPart
    Enum                                       its ``.value``
    UUID, Decimal, pathlib paths               str
    pydantic model                             dict (``model_dump(mode="json")``)
    attrs / dataclass instance                 dict of its fields
    =========================================  ==============================================

    Anything else — and NaN or infinity, cycles, and a dict two of whose keys become one string
    (``{1: "a", "1": "b"}``) — raises :class:`EncodingError` with ``.path`` (``root`` names
    the top: ``state["items"][3].when``).
    """
    try:  # the one try a value that encodes pays for: sessions encode three bodies a turn
        text = _fast(obj)
    except (TypeError, ValueError, RecursionError) as exc:
        refused: BaseException = exc
    else:  # orjson refuses keys that are not strings; json may write two of them alike
        return text if _fast is not _json_encode else _distinct_keys(root, text)
    if _fast is not _json_encode:  # json encodes what orjson refuses (big ints, int keys...)
        try:
            text = _json_encode(obj)
        except (TypeError, ValueError, RecursionError) as exc:
            refused = exc
        else:
            return _distinct_keys(root, text)
    _locate(obj, root, set())
    raise EncodingError(
        f"cannot encode {root}: {refused}; see agentkit_core.plugin.encode_state for the "
        "encodable types",
        path=root,
        value=obj,
    ) from refused


def decode_state(text: str, *, root: str = "state") -> Any:
    """The value :func:`encode_state` encoded, with its tagged types restored (see there).

    Text that is not JSON, or a tagged value that does not decode (bytes that are not base64,
    a date that is not ISO-8601, an unknown tag), raises :class:`DecodingError` with ``.path``
    (``root`` names the top): nothing decodes silently into something else.
    """
    try:
        return json.loads(text, object_hook=_untag)
    except (ValueError, TypeError, KeyError, RecursionError) as exc:
        raise _undecodable(text, root, exc) from exc


def _undecodable(text: str, root: str, exc: Exception) -> DecodingError:
    """The error for ``text``, located by decoding its plain JSON again while tracking paths."""
    try:
        plain = json.loads(text)
    except (ValueError, TypeError, RecursionError) as bad:
        return DecodingError(f"cannot decode {root}: it is not JSON ({bad})", path=root)
    try:
        _decode_at(plain, root)
    except DecodingError as located:
        return located
    return DecodingError(f"cannot decode {root}: {exc}", path=root)


def _decode_at(value: object, path: str) -> object:
    """``value`` decoded bottom-up like ``object_hook`` does; the first failure names its path."""
    if isinstance(value, list):
        return [_decode_at(v, f"{path}[{i}]") for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    decoded = {
        k: _decode_at(v, f"{path}[{json.dumps(k, ensure_ascii=False)}]") for k, v in value.items()
    }
    try:
        return _untag(decoded)
    except KeyError as exc:
        problem = f"a tagged {decoded.get(TAG)!r} value has no {exc.args[0]!r}"
    except (ValueError, TypeError) as exc:
        problem = f"a tagged {decoded.get(TAG)!r} value does not decode ({exc})"
    raise DecodingError(f"cannot decode {path}: {problem}", path=path)


#: The ``datetime`` types encoded as ISO-8601, a datetime before the date it subclasses.
_STAMPS = ("datetime", "date", "time")


def _default(value: object) -> object:
    fields = _fields(value)
    if fields is not None:
        return fields
    if isinstance(value, TranscriptView):  # a request's messages, encoded as their tuple
        return list(value)
    if isinstance(value, (set, frozenset)):
        try:
            return sorted(value)
        except TypeError:
            return list(value)
    stamps = sys.modules.get("datetime")  # no value is a date unless datetime was imported
    if stamps is not None:
        for kind in _STAMPS:
            if isinstance(value, getattr(stamps, kind)):
                return {TAG: kind, "iso": value.isoformat()}
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {TAG: "bytes", "b64": base64.b64encode(value).decode("ascii")}
    if isinstance(value, Enum):
        return value.value
    # nothing is a UUID unless uuid was imported (it imports platform, ~3 ms of a first run),
    # nor a path unless pathlib was (with urllib.parse and ipaddress behind it)
    if loaded_instance(value, ("pathlib", "PurePath"), ("uuid", "UUID"), ("decimal", "Decimal")):
        return str(value)
    pydantic = sys.modules.get("pydantic")  # nothing is a pydantic model unless it was imported
    if pydantic is not None and isinstance(value, pydantic.BaseModel):
        return value.model_dump(mode="json")
    raise TypeError(f"{_type_name(value)} is not encodable")


#: The message types, which decode back to themselves (other records decode to dicts).
_RECORDS: dict[str, type] = {
    "message": Message,
    "tool_call": ToolCall,
    "usage": Usage,
    "text_part": TextPart,
    "image_part": ImagePart,
    "document_part": DocumentPart,
    "audio_part": AudioPart,
}
_TAG_OF = {cls: tag for tag, cls in _RECORDS.items()}
#: The records whose ``data`` bytes a store that keeps blobs holds by hash (:mod:`._blobs`).
_PARTS = frozenset({"image_part", "document_part", "audio_part"})


#: How many content parts' bytes were encoded inline (no blob collection set), ever: an
#: encoding that changed it held a part (another thread's may have too, which costs only a
#: second encoding of a session batch, never a part missed).
parts_inline = 0


def _fields(value: object) -> dict[str, object] | None:
    """The fields of a record-like value (a message type, attrs, a dataclass), or None."""
    tag = _TAG_OF.get(type(value))
    if tag is not None:
        tagged = (_TAGGERS.get(tag) or _tagger(type(value), tag))(value)
        if tag in _PARTS and tagged["data"] is not None:
            if collecting.get() is not None:
                tagged["data"] = reference(tagged["data"])  # type: ignore[arg-type]
            else:
                global parts_inline
                parts_inline += 1
        return tagged
    if isinstance(value, type):
        return None
    attrs_fields = getattr(type(value), "__attrs_attrs__", None)
    if attrs_fields is not None:
        return {a.name: getattr(value, a.name) for a in attrs_fields}
    if dataclasses.is_dataclass(value):
        return {name: getattr(value, name) for name in _field_names(type(value))}
    return None


#: Per message type, the function making its tagged dict (see :func:`_tagger`).
_TAGGERS: dict[str, Callable[[object], dict[str, object]]] = {}


def _tagger(cls: type, tag: str) -> Callable[[object], dict[str, object]]:
    """A ``cls`` value's tagged dict's maker, made on first use (:func:`_make_tagger`)."""
    made = _TAGGERS[tag] = _make_tagger(cls, tag, checked=False)
    return made


def _make_tagger(cls: type, tag: str, *, checked: bool) -> Callable[[object], dict[str, object]]:
    """A function making a ``cls`` value's tagged dict, generated from its field names.

    One dict display, as dataclasses makes ``__init__``: two to three times faster than setting
    the fields one by one, for the two or three messages a recorded turn encodes. ``checked``
    (orjson's ``default``): it also raises where :func:`_finite` would on the dict, walking a
    field only when it is other than a scalar, a record (``default`` checks its own), a tuple
    of those, or an empty container; a message's fields are those nearly always. It also tags a
    message's tool calls itself (:data:`_INLINE`), so orjson calls ``default`` once a message
    rather than once a message and once a call.
    """
    names = _field_names(cls)
    if not checked:
        items = ", ".join(f"{name!r}: value.{name}" for name in names)
        code = f"def tagged(value):\n    return {{{TAG!r}: {tag!r}, {items}}}\n"
    else:
        code = _checked_source(cls, tag, names, first=False)
    return _compiled(code, cls, None)  # type: ignore[return-value]


def _message_first(otherwise: Callable[[object], object]) -> Callable[[object], object]:
    """The ``default`` orjson is given: a message's checked tagger, another value to ``otherwise``.

    A message, nearly every value a session's body hands to ``default``, costs then no lookup
    and no call more than its tagger.
    """
    names = _field_names(Message)
    code = _checked_source(Message, _TAG_OF[Message], names, first=True)
    return _compiled(code, Message, otherwise)


def _compiled(
    code: str, cls: type, otherwise: Callable[[object], object] | None
) -> Callable[[object], object]:
    """The function ``tagged`` that ``code`` (a tagger's source, above) defines."""
    env: dict[str, object] = {"plain": _NO_FLOAT, "empty": _CONTAINERS, "finite": _finite}
    env.update(record=cls, otherwise=otherwise)
    names = _field_names(cls)
    env.update({f"inner{i}": _INLINE[cls, n] for i, n in enumerate(names) if (cls, n) in _INLINE})
    exec(code, env)
    return env["tagged"]  # type: ignore[return-value]


#: The record fields whose tuple of records of one type the checked tagger tags in the same
#: call: a message's tool calls.
_INLINE: dict[tuple[type, str], type] = {(Message, "tool_calls"): ToolCall}


def _plain(name: str, *, empty_first: bool = False) -> str:
    """The test that ``name`` holds no float orjson would write itself (see _make_tagger).

    ``empty_first``: the field defaults to an empty container, so that is tested first.
    """
    scalar = f"type({name}) in plain"
    empty = f"(type({name}) in empty and not {name})"
    first, second = (empty, scalar) if empty_first else (scalar, empty)
    return (
        f"({first} or {second} or (type({name}) is tuple and plain.issuperset(map(type, {name}))))"
    )


def _checked_source(cls: type, tag: str, names: tuple[str, ...], *, first: bool) -> str:
    """The source of ``cls``'s checked tagger: fields read once, inline fields tagged in place.

    A tuple of the inline type becomes the list of its items' tagged dicts (JSON writes a list
    as it writes a tuple), each item's fields tested as its dict is made; a tuple holding
    anything else stays as it is, for orjson and ``default``. A field that may hold a float is
    walked alone. ``first``: a value of another type goes to ``otherwise``.
    """
    emptied = {
        f.name
        for f in dataclasses.fields(cls)
        if f.default == () or f.default_factory in (dict, list)  # type: ignore[comparison-overlap]
    }
    lines = (
        ["    if type(value) is not record:\n        return otherwise(value)\n"] if first else []
    )
    lines += [f"    v{i} = value.{name}\n" for i, name in enumerate(names)]
    tests = []
    for i, name in enumerate(names):
        test = _plain(f"v{i}", empty_first=name in emptied)
        inner = _INLINE.get((cls, name))
        if inner is None:
            tests.append(test)
            continue
        fields = _field_names(inner)
        reads = "".join(f"            w{j} = item.{f}\n" for j, f in enumerate(fields))
        items = ", ".join(f"{f!r}: w{j}" for j, f in enumerate(fields))
        clean = " and ".join(_plain(f"w{j}") for j in range(len(fields)))
        # clean: an empty tuple, or one whose every item was tagged here with no float in it
        lines.append(
            f"    clean{i} = type(v{i}) is tuple\n    if clean{i} and v{i}:\n"
            f"        tagged = []\n        for item in v{i}:\n"
            f"            if type(item) is not inner{i}:\n"
            f"                clean{i} = False\n                break\n{reads}"
            f"            tagged.append({{{TAG!r}: {_TAG_OF[inner]!r}, {items}}})\n"
            f"            if clean{i} and not ({clean}):\n                clean{i} = False\n"
            f"        else:\n            v{i} = tagged\n"
        )
        tests.append(f"(clean{i} or {test})")
    items = ", ".join(f"{name!r}: v{i}" for i, name in enumerate(names))
    walks = "".join(f"    if not {test}:\n        finite(v{i})\n" for i, test in enumerate(tests))
    return f"def tagged(value):\n{''.join(lines)}{walks}    return {{{TAG!r}: {tag!r}, {items}}}\n"


_FIELD_NAMES: dict[type, tuple[str, ...]] = {}


def _field_names(cls: type) -> tuple[str, ...]:
    """A dataclass's field names, read once per class (``dataclasses.fields`` is slow)."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


def _untag(obj: dict[str, Any]) -> object:
    kind = obj.get(TAG)
    if kind is None:
        return obj
    record = _RECORDS.get(kind)
    if record is not None:
        # JSON has no tuples: the tuple fields (parts, tool calls) come back as lists
        fields = {k: tuple(v) if isinstance(v, list) else v for k, v in obj.items() if k != TAG}
        return record(**fields)
    if kind in _STAMPS:
        import datetime as stamps

        return getattr(stamps, kind).fromisoformat(obj["iso"])
    if kind == "bytes":
        return _b64(obj["b64"])
    if kind == "blob":
        raise ValueError(
            f"blob {obj['sha256']} is a reference into a store; read the record through its "
            "store, which puts the bytes back"
        )
    raise ValueError(f"unknown tagged type {kind!r}")


def _b64(text: Any) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (TypeError, ValueError) as exc:  # binascii.Error is a ValueError
        raise ValueError(f"its b64 {str(text)[:40]!r} is not base64: {exc}") from None


def _distinct_keys(root: str, text: str) -> str:
    """``text``, json's encoding of a value, unless two keys of one dict in it became one.

    json writes an int, float, bool or None key as a string, so ``{1: "a", "1": "b"}`` would be
    written with the key ``"1"`` twice and read back with one of the values lost. Read back
    here, only on json's path (orjson refuses keys that are not strings).
    """
    try:
        json.loads(text, object_pairs_hook=unique_keys)
    except DuplicateKey as twice:
        raise EncodingError(
            f"cannot encode {root}: two keys of one dict in it are both written as the JSON key "
            f"{twice.key!r}, and one value would be lost; keep one of them, or make the keys "
            "strings that differ",
            path=root,
            value=twice.key,
        ) from None
    return text


def _locate(value: object, path: str, active: set[int]) -> None:
    """Raise :class:`EncodingError` at the first value under ``path`` that does not encode."""
    if value is None or isinstance(value, (str, bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise EncodingError(
                f"cannot encode {path}: {value!r} has no JSON form; store it as a string or None",
                path=path,
                value=value,
            )
        return
    if id(value) in active:
        raise EncodingError(
            f"cannot encode {path}: it contains itself (a reference cycle); break the cycle "
            "before snapshotting",
            path=path,
            value=value,
        )
    active.add(id(value))
    for child_path, child in _children(value, path):
        _locate(child, child_path, active)
    active.discard(id(value))


def _children(value: object, path: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict):
        for key, child in value.items():
            if not isinstance(key, (str, int, float, bool)) and key is not None:
                raise EncodingError(
                    f"cannot encode {path}: the key {key!r} is a {_type_name(key)}; JSON object "
                    "keys must be strings",
                    path=path,
                    value=key,
                )
            yield f"{path}[{json.dumps(key, ensure_ascii=False)}]", child
        return
    if isinstance(value, (list, tuple, TranscriptView)):
        for i, child in enumerate(value):
            yield f"{path}[{i}]", child
        return
    fields = _fields(value)
    pydantic = sys.modules.get("pydantic")
    if fields is None and pydantic is not None and isinstance(value, pydantic.BaseModel):
        fields = {name: getattr(value, name) for name in type(value).model_fields}
    if fields is not None:
        for name, child in fields.items():
            if name != TAG:
                yield f"{path}.{name}", child
        return
    try:
        encoded = _default(value)
    except (TypeError, ValueError):
        raise EncodingError(
            f"cannot encode {path}: a {_type_name(value)} is not encodable; encodable are "
            f"{_ENCODABLE}. Convert it (to a dict or a string) or keep it out of the state",
            path=path,
            value=value,
        ) from None
    if isinstance(encoded, (dict, list)):
        yield from _children(encoded, path)


def _type_name(value: object) -> str:
    cls = type(value)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


_ENCODER = json.JSONEncoder(
    default=_default, allow_nan=False, ensure_ascii=False, separators=(",", ":")
)


def _make_json_encode() -> Callable[[object], str]:
    """The json encoding function: CPython's C encoder, made once.

    ``JSONEncoder.encode`` makes it anew on every call, and that set-up is most of the cost of a
    small value. It checks no cycles itself: one ends in RecursionError, which
    :func:`encode_state` turns into an error naming the path.
    """
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:  # pragma: no cover - Pythons without the C accelerator
        return _ENCODER.encode
    # markers, default, string encoder, indent, key separator, item separator, sort_keys,
    # skipkeys, allow_nan
    iterencode = make(
        None, _default, json.encoder.encode_basestring, None, ":", ",", False, False, False
    )

    def encode(obj: object) -> str:
        return "".join(iterencode(obj, 0))

    return encode


_json_encode = _make_json_encode()

#: The types a walk for NaN passes over: those that hold no float, and the message types,
#: which orjson hands to ``default``, whose result is walked then.
_NO_FLOAT = frozenset({str, int, bool, type(None), *_RECORDS.values()})
#: The JSON containers orjson encodes itself: an empty one holds no float.
_CONTAINERS = frozenset({dict, list, tuple})


def _finite(value: Any) -> None:
    """Raise ValueError at a NaN or infinity in ``value``'s JSON containers and enum values.

    What orjson encodes itself is what this walks; a value it hands to ``default`` is walked
    as ``default`` returns it (see :func:`_orjson_encodings`).
    """
    kind = type(value)
    if kind is dict:
        items: Iterable[object] = value.values()
    elif kind is list or kind is tuple:
        items = value
    elif kind is float:
        if value - value != 0.0:  # inf - inf and nan - nan are NaN; any finite float gives 0
            raise ValueError(f"{value!r} has no JSON form")
        return
    elif isinstance(value, Enum):
        _finite(value.value)
        return
    else:
        return
    for item in items:
        kind = type(item)
        if kind in _NO_FLOAT:
            continue
        if type(item) is float:  # checked here, an empty container passed over: no call for them
            if item - item != 0.0:
                raise ValueError(f"{item!r} has no JSON form")
        elif not (kind is dict or kind is list or kind is tuple) or item:
            _finite(item)


@functools.cache
def _orjson_encodings() -> tuple[Callable[[object], str], Callable[[object], str]] | None:
    """The encodings by orjson, held to what :func:`_json_encode` writes; None without orjson.

    Imported on the first encoding, so importing agentkit_core never loads it. The passthrough
    options send dataclasses, dates and subclasses of the JSON types to ``default``, as
    ``json`` would treat them (or to ``json`` itself, when ``default`` refuses a subclass).
    The first walks the value for NaN and infinity before orjson writes it (as ``null``); the
    second leaves the walk to the value's maker (:func:`encode_finite`).
    """
    try:
        import orjson
    except ImportError:
        return None
    dumps = orjson.dumps
    options = (
        orjson.OPT_PASSTHROUGH_DATACLASS
        | orjson.OPT_PASSTHROUGH_DATETIME
        | orjson.OPT_PASSTHROUGH_SUBCLASS
    )

    #: Per message type (parts aside, whose bytes a store may keep apart), its checked tagger.
    checked: dict[type, Callable[[object], dict[str, object]]] = {}

    def default(value: object) -> object:
        tagged = checked.get(type(value))
        if tagged is None:
            tag = _TAG_OF.get(type(value))
            if tag is None or tag in _PARTS:
                converted = _default(value)
                _finite(converted)
                return converted
            tagged = checked[type(value)] = _make_tagger(type(value), tag, checked=True)
        return tagged(value)

    first = _message_first(default)

    # two bodies, not one calling the other: a session's append encodes twice a turn
    def encode(obj: object) -> str:
        _finite(obj)
        return dumps(obj, default=first, option=options).decode()

    def write(obj: object) -> str:
        return dumps(obj, default=first, option=options).decode()

    return encode, write


def encode_finite(obj: object, *, root: str = "state") -> str:
    """:func:`encode_state` of a value whose maker checked it for NaN and infinity.

    For a value built of checked parts (a session item the recorder makes from a message and
    strings and integers it checked): the walk of its containers is left out; the records in
    it (messages and the other tagged types) are checked as they are encoded, as always. What
    does not encode goes to :func:`encode_state`, which encodes or refuses it as it would.
    """
    try:
        return _written(obj)
    except (TypeError, ValueError, RecursionError):
        return encode_state(obj, root=root)


def _first_encoding(obj: object) -> str:
    """The first encoding: picks the encodings (orjson's, else ``json``'s) and encodes."""
    global _fast, _written
    found = _orjson_encodings()
    _fast, _written = (_json_encode, _json_encode) if found is None else found
    return _fast(obj)


def _first_written(obj: object) -> str:
    """The first :func:`encode_finite`: picks the encodings, as :func:`_first_encoding` does."""
    _first_encoding(None)
    return _written(obj)


#: What :func:`encode_state` tries first: orjson's encoding once it was looked for, else json's.
_fast: Callable[[object], str] = _first_encoding
#: What :func:`encode_finite` tries: orjson's without the walk for NaN, else json's (which
#: refuses NaN itself).
_written: Callable[[object], str] = _first_written


def jsonable(value: object) -> JSONValue:
    """``value`` as JSON-ready data (messages, tool calls and dataclasses as dicts).

    Bytes are text when they are UTF-8; when any is not (an image part's), all are base64.
    """
    from pydantic_core import to_jsonable_python

    try:
        data: JSONValue = to_jsonable_python(value, fallback=_fallback)
    except UnicodeDecodeError:
        data = to_jsonable_python(value, fallback=_fallback, bytes_mode="base64")
    return data


def _fallback(value: object) -> object:
    """What :func:`jsonable` makes of a value pydantic does not know: a view's list, else repr."""
    return list(value) if isinstance(value, TranscriptView) else repr(value)
