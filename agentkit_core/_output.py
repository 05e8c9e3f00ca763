"""Typed output: the SchemaAdapter seam, adapt(), the strict-schema transform and output_coerce().

A *flavour* (a plugin) turns one kind of Python type into an adapter: pydantic models, attrs
classes, dataclasses, raw JSON Schema dicts. ``adapt(tp)`` asks the installed flavours in
ascending probe rank, then name; the first whose probe accepts ``tp`` builds the adapter. The
pieces every flavour shares live here so that each is written once: the incremental parser
behind ``stream()`` and ``partial_parse()`` (:class:`OutputStream`), the typed-instance
builder (:func:`structure`), JSON decoding with errors (:func:`decode_json`) and the OpenAI
strict-mode transform (:func:`strict_json_schema`).
"""

from __future__ import annotations

import copy
import json
import re
import sys
import types
import typing
from abc import ABC
from abc import abstractmethod
from collections.abc import AsyncIterable
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING
from typing import Any
from typing import Generic
from typing import Protocol
from typing import TypeVar
from typing import final
from typing import runtime_checkable

from ._errors import ConfigError
from ._errors import ParseError
from ._errors import UnsupportedTypeError
from ._messages import DuplicateKey
from ._messages import JSONObject
from ._messages import JSONValue
from ._messages import Message
from ._messages import unique_keys
from ._middleware import CallModel
from ._middleware import Middleware
from ._models import ModelRequest
from ._models import ModelResponse
from ._models import OutputSchema
from ._models import StreamEvent
from ._run_errors import OutputValidationError

if TYPE_CHECKING:
    from ._partial import PartialJSONParser
    from ._plugins import Registration

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)

#: ``request.metadata`` key under which output_coerce() leaves the repair exchange (the
#: invalid answers and the feedback sent back), so the loop can keep it in the transcript.
REPAIRS = "output_repairs"

#: The shipped flavour plugins by flavour name, for errors that tell a user what to install.
FLAVOUR_PLUGINS = {
    "pydantic": "agentkit-schema-pydantic (BaseModel)",
    "attrs": "agentkit-schema-attrs (attrs classes)",
    "dataclass": "agentkit-schema-dataclass (dataclasses)",
    "jsonschema": "agentkit-schema-jsonschema (a JSON Schema dict)",
}


@runtime_checkable
class SchemaAdapter(Protocol[T_co]):
    """One declared output type, as the framework sees it.

    ``name`` names the type to the model (the structured-output schema's name);
    ``python_type`` is what was declared. ``json_schema(strict=True)`` is the OpenAI strict
    form (:func:`strict_json_schema`). ``parse(text)`` is strict and raises
    :class:`~agentkit_core.plugin.ParseError` with ``.errors`` (``"path: message"`` strings) and
    ``.raw``. ``partial_parse(buffer)`` is tolerant of a buffer cut anywhere and returns an
    instance built without validation whose fields that have not arrived are absent;
    ``stream()`` does the same incrementally, chunk by chunk. ``serialize(obj)`` returns
    JSON-ready data; ``validate(value)`` checks a Python value (a tool's return) and returns
    it as the declared type, raising ParseError.
    """

    @property
    def name(self) -> str: ...

    @property
    def python_type(self) -> object: ...

    def json_schema(self, strict: bool = False) -> JSONObject: ...

    def parse(self, text: str) -> T_co: ...

    def partial_parse(self, buffer: str) -> object: ...

    def stream(self) -> OutputStream[T_co]: ...

    def serialize(self, obj: object) -> object: ...

    def validate(self, value: object) -> T_co: ...


# ---------------------------------------------------------------------- streaming


@final
class PartialCache:
    """What a stream built from its parser's live tree, so each read costs the open spine.

    A closed container never changes again, so what was built from it is reused as is. An
    open list only ever grows at its end, so its built list is kept and grown: each read
    rebuilds the last item and adds the new ones. Partials are therefore live too: copy one
    to keep a snapshot.
    """

    __slots__ = ("_built", "_lists", "_parser")

    def __init__(self, parser: PartialJSONParser) -> None:
        self._parser = parser
        self._built: dict[int, tuple[object, object, object]] = {}
        self._lists: dict[int, tuple[object, object, list[object]]] = {}

    def get(self, data: object, tp: object) -> tuple[bool, object]:
        """``(True, built)`` when ``data`` is closed and was built as ``tp`` before."""
        hit = self._built.get(id(data))
        if hit is not None and hit[0] is data and hit[1] is tp:
            return True, hit[2]
        return False, None

    def put(self, data: object, tp: object, built: object) -> None:
        """Remember ``built`` for ``data`` once ``data`` is closed."""
        if not self._parser.is_open(data):
            self._built[id(data)] = (data, tp, built)
            self._lists.pop(id(data), None)

    def growing(self, data: list[object], tp: object) -> list[object]:
        """The list being built from the open list ``data`` (empty the first time)."""
        entry = self._lists.get(id(data))
        if entry is not None and entry[0] is data and entry[1] is tp:
            return entry[2]
        built: list[object] = []
        self._lists[id(data)] = (data, tp, built)
        return built


PartialBuilder = Callable[[object, "PartialCache | None"], object]


@final
class OutputStream(Generic[T_co]):
    """A typed answer arriving in chunks: ``feed(chunk)`` returns the partial object so far.

    The parser keeps its state between chunks (linear in the stream's length) and skips prose
    or a code fence before the JSON. ``finish()`` parses the whole text strictly. Once the
    text stops being JSON the partial stays at its last good value and ``error`` holds why;
    ``finish()`` then raises.
    """

    __slots__ = ("_build", "_cache", "_parse", "_parser", "_pieces", "error")

    def __init__(self, build: PartialBuilder, parse: Callable[[str], T_co]) -> None:
        from ._partial import PartialJSONParser  # loaded by the first stream, not by a flavour

        self._build = build
        self._parse = parse
        self._parser = PartialJSONParser(skip_prose=True)
        self._cache = PartialCache(self._parser)
        self._pieces: list[str] = []
        self.error: ParseError | None = None

    @property
    def text(self) -> str:
        """Everything fed so far."""
        joined = "".join(self._pieces)
        self._pieces[:] = [joined]
        return joined

    def feed(self, chunk: str) -> object:
        """Consume ``chunk``; the partial object (``None`` before the JSON starts)."""
        self._pieces.append(chunk)
        if self.error is None:
            try:
                self._parser.feed(chunk)
            except ParseError as exc:
                self.error = exc
        return self.current()

    def current(self) -> object:
        """The partial object so far, built without validation."""
        data = self._parser.current()
        return None if data is None else self._build(data, self._cache)

    def finish(self) -> T_co:
        """The whole answer parsed strictly (raises ParseError)."""
        return self._parse(self.text)


class PartialParsing(ABC):
    """``stream()`` and ``partial_parse()`` for an adapter, from its ``partial_from``.

    A flavour inherits this to get both on the shared incremental parser; it supplies
    ``parse`` and ``partial_from`` (the typed partial built from parsed JSON data).
    """

    @abstractmethod
    def parse(self, text: str) -> Any:
        """The whole answer parsed strictly (raises ParseError)."""

    @abstractmethod
    def partial_from(self, data: object, cache: PartialCache | None) -> object:
        """The partial object for JSON ``data``, built without validation."""

    def stream(self) -> OutputStream[Any]:
        """A fresh incremental stream over this adapter."""
        return OutputStream(self.partial_from, self.parse)

    def partial_parse(self, buffer: str) -> object:
        """The partial object of a buffer cut anywhere: a stream fed once."""
        return self.stream().feed(buffer)


async def stream_partials(
    adapter: SchemaAdapter[object], events: AsyncIterable[StreamEvent]
) -> AsyncIterator[StreamEvent]:
    """Pass ``events`` through, adding a ``"partial"`` event after each text delta.

    Each ``"done"`` ends one model answer, so the next text starts a new document.
    """
    stream = adapter.stream()
    async for event in events:
        yield event
        if event.kind == "done":
            stream = adapter.stream()
        elif event.kind == "text" and event.text:
            value = stream.feed(event.text)
            if value is not None:
                yield StreamEvent("partial", partial=value)


# ---------------------------------------------------------------------- shared helpers


def strip_code_fence(text: str) -> str:
    """``text`` without a surrounding Markdown code fence (models like to add one)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    return body.strip()


def decode_json(text: str) -> JSONValue:
    """``text`` (a code fence allowed) as JSON data; what is not plain JSON raises ParseError.

    Beyond the syntax, what Python's decoder would read as something the model did not
    clearly say is refused too: a repeated key (which one did it mean?), ``NaN``/``Infinity``
    or a number too large for a float (not JSON), an integer past Python's digit limit,
    nesting deeper than the decoder can follow, and a lone surrogate escape (no UTF-8 text
    holds one, so it would break whatever stores or sends the value later).
    """
    try:
        data: JSONValue = json.loads(
            strip_code_fence(text),
            object_pairs_hook=unique_keys,
            parse_constant=_no_constant,
            parse_float=_finite_float,
        )
    except json.JSONDecodeError as exc:
        where = f"{exc.msg} at line {exc.lineno} column {exc.colno}"
        raise _not_json(text, where) from exc
    except DuplicateKey as twice:
        where = f"the key {twice.key!r} appears more than once in one object"
        raise _not_json(text, where) from None
    except _NotPlainJSON as exc:
        raise _not_json(text, str(exc)) from None
    except RecursionError:
        raise _not_json(text, "nested too deeply to decode") from None
    except ValueError as exc:  # an integer past sys.get_int_max_str_digits()
        raise _not_json(text, f"a number cannot be read ({exc})") from None
    _refuse_lone_surrogates(data, text)
    return data


class _NotPlainJSON(ValueError):
    """Raised from inside the decoder's hooks; decode_json() turns it into a ParseError."""


def _not_json(text: str, why: str) -> ParseError:
    return ParseError(
        f"the answer is not valid JSON ({why}): {text[:200]!r}",
        raw=text,
        errors=[f"(root): not valid JSON: {why}"],
    )


def _no_constant(name: str) -> float:
    raise _NotPlainJSON(f"{name} is not a JSON number")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if value in (float("inf"), float("-inf")):
        raise _NotPlainJSON(f"the number {literal[:40]} is too large for a float")
    return value


def _refuse_lone_surrogates(data: JSONValue, text: str) -> None:
    """Raise ParseError when a key or string of ``data`` holds a lone surrogate.

    Walked without recursion: the decoder already allowed the depth.
    """
    stack: list[JSONValue] = [data]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str) and _SURROGATE.search(item):
            raise _not_json(text, f"a lone surrogate escape in {item[:60]!r}")


_SURROGATE = re.compile("[\ud800-\udfff]")


def error_line(loc: Sequence[object], msg: str) -> str:
    """One validation error as the ``"path: message"`` line every flavour reports."""
    return f"{'.'.join(str(p) for p in loc) or '(root)'}: {msg}"


def import_optional(module: str, *, install: str, flavour: str) -> types.ModuleType:
    """Import a flavour's library on first use; a missing one names the pip command."""
    try:
        return __import__(module)
    except ImportError as exc:
        raise UnsupportedTypeError(
            f"the {flavour} schema flavour needs the {module!r} package, which is not "
            f"installed: pip install {install}"
        ) from exc


def structure(
    tp: object,
    data: object,
    *,
    fields_of: Callable[[object], Mapping[str, object] | None],
    make: Callable[[Any, dict[str, object]], object],
    cache: PartialCache | None = None,
) -> Any:
    """Build a value of type ``tp`` from JSON ``data``, recursing through the type.

    ``fields_of(tp)`` returns the JSON keys of a class of the flavour and each field's type
    (None for any other type); ``make(cls, present)`` builds an instance from the fields that
    are present, already structured. Lists, tuples, sets, ``dict[str, X]``, Optional and
    unions of flavour classes are walked; anything else is returned as it is.
    """
    if isinstance(data, dict):
        if cache is not None:
            hit, built = cache.get(data, tp)
            if hit:
                return built
        arm = _pick(tp, lambda t: fields_of(t) is not None or _origin(t) in _MAPS)
        fields = fields_of(arm)
        if fields is not None:
            present = {
                key: structure(ftp, data[key], fields_of=fields_of, make=make, cache=cache)
                for key, ftp in fields.items()
                if key in data
            }
            built = make(arm, present)
        elif _origin(arm) in _MAPS and len(typing.get_args(arm)) == 2:
            vtp = typing.get_args(arm)[1]
            built = {
                k: structure(vtp, v, fields_of=fields_of, make=make, cache=cache)
                for k, v in data.items()
            }
        else:
            return data
        if cache is not None:
            cache.put(data, tp, built)
        return built
    if isinstance(data, list):
        arm = _pick(tp, lambda t: _origin(t) in _SEQUENCES)
        origin = _origin(arm)
        if origin not in _SEQUENCES:
            return data
        args = typing.get_args(arm)
        if origin is tuple and args and (len(args) != 2 or args[1] is not Ellipsis):
            return origin(
                structure(t, v, fields_of=fields_of, make=make, cache=cache)
                for t, v in zip(args, data, strict=False)
            )
        etp = args[0] if args else Any
        if cache is None or origin not in (list, Sequence):
            items = [structure(etp, v, fields_of=fields_of, make=make, cache=cache) for v in data]
            return items if origin in (list, Sequence) else origin(items)
        hit, built = cache.get(data, tp)
        if hit:
            return built
        items = cache.growing(data, tp)
        del items[max(len(items) - 1, 0) :]  # all but the last item built were final then
        items.extend(
            structure(etp, v, fields_of=fields_of, make=make, cache=cache)
            for v in data[len(items) :]
        )
        cache.put(data, tp, items)
        return items
    return data


def bare_instance(cls: type[T], present: Mapping[str, object]) -> T:
    """An instance of ``cls`` with only ``present`` set: no ``__init__``, no validation.

    The attributes not in ``present`` are genuinely absent, so ``getattr(obj, name, None)``
    tells what has arrived (frozen and slotted classes work too).
    """
    obj = object.__new__(cls)
    for name, value in present.items():
        object.__setattr__(obj, name, value)
    return obj


_MAPS = (dict, Mapping)
_SEQUENCES = (list, tuple, set, frozenset, Sequence)


def _origin(tp: object) -> Any:
    origin = typing.get_origin(tp)
    if origin is typing.Annotated:
        return _origin(typing.get_args(tp)[0])
    return origin


def _pick(tp: object, accepts: Callable[[object], bool]) -> object:
    """The arm of a union (or ``tp`` itself) that ``accepts``; ``tp`` when none does."""
    if typing.get_origin(tp) is typing.Annotated:
        tp = typing.get_args(tp)[0]
    if typing.get_origin(tp) in (typing.Union, types.UnionType):
        for arm in typing.get_args(tp):
            picked = _pick(arm, accepts)
            if accepts(picked):
                return picked
        return tp
    return tp


def strict_json_schema(schema: Mapping[str, JSONValue]) -> JSONObject:
    """The OpenAI strict-mode form of ``schema`` (a new dict; the input is left alone).

    Every object, at any depth and in ``$defs``, lists all its properties as required and
    gets ``additionalProperties: false``; a property that was optional becomes nullable
    instead; ``oneOf`` becomes ``anyOf``. A free-form map (``dict[str, X]``) cannot be said
    in strict mode and raises :class:`~agentkit_core.plugin.UnsupportedTypeError` naming where.
    """
    out = copy.deepcopy(dict(schema))
    _strict(out, "#")
    return out


def _strict(node: object, path: str) -> None:
    if not isinstance(node, dict):
        return
    if "oneOf" in node:
        node["anyOf"] = node.pop("oneOf")
    for key in ("$defs", "definitions", "properties"):
        for name, sub in node.get(key, {}).items():
            _strict(sub, f"{path}/{key}/{name}")
    for key in ("items", "not", "if", "then", "else", "contains"):
        _strict(node.get(key), f"{path}/{key}")
    for key in ("anyOf", "allOf", "prefixItems"):
        for i, sub in enumerate(node.get(key, ())):
            _strict(sub, f"{path}/{key}/{i}")
    kind = node.get("type")
    if kind == "object" or (isinstance(kind, list) and "object" in kind) or "properties" in node:
        extra = node.get("additionalProperties")
        if "properties" not in node and extra is not False:
            raise UnsupportedTypeError(
                f"strict mode cannot express the free-form object at {path} (a map such as "
                "dict[str, X] or an object without properties); give it named fields or ask "
                "for json_schema(strict=False)"
            )
        props: dict[str, Any] = node.setdefault("properties", {})
        required = set(node.get("required", ()))
        for name in props:
            if name not in required:
                props[name] = _nullable(props[name])
        node["required"] = list(props)
        node["additionalProperties"] = False


def _nullable(sub: dict[str, Any]) -> dict[str, Any]:
    kind = sub.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return sub
    if any(s.get("type") == "null" for s in sub.get("anyOf", ()) if isinstance(s, dict)):
        return sub
    if isinstance(kind, str) and "$ref" not in sub:
        nullable = {**sub, "type": [kind, "null"]}
        if "enum" in nullable and None not in nullable["enum"]:
            nullable["enum"] = [*nullable["enum"], None]
        return nullable
    if isinstance(kind, list):
        return {**sub, "type": [*kind, "null"]}
    return {"anyOf": [sub, {"type": "null"}]}


# ---------------------------------------------------------------------- dispatch


def adapt_with(tp: object, registrations: Sequence[Registration]) -> SchemaAdapter[Any]:
    """The adapter for ``tp`` from these ``schema_adapters`` registrations (see ``adapt``).

    Flavours are probed by ascending ``rank``, then name; the first that accepts builds it.
    A ``msgspec.Struct`` and a type no flavour accepts raise
    :class:`~agentkit_core.plugin.UnsupportedTypeError`. An adapter is returned as is.
    """
    if isinstance(tp, SchemaAdapter) and not isinstance(tp, type):
        return tp
    msgspec = sys.modules.get("msgspec")
    if msgspec is not None and isinstance(tp, type) and issubclass(tp, msgspec.Struct):
        raise UnsupportedTypeError(
            f"{tp.__qualname__} is a msgspec.Struct, which is not supported yet as an "
            "output type; declare it as a dataclass, an attrs class or a pydantic model"
        )
    registrations = sorted(
        registrations,
        key=lambda r: (r.meta.get("rank", 100), r.name),
    )
    for reg in registrations:
        probe, factory = reg.value
        if probe(tp):
            adapter: SchemaAdapter[Any] = factory(tp)
            return adapter
    installed = ", ".join(f"{r.name} (rank {r.meta.get('rank', 100)})" for r in registrations)
    missing = [
        d for name, d in FLAVOUR_PLUGINS.items() if name not in {r.name for r in registrations}
    ]
    hint = (
        f"if it is one of these kinds of type, install its flavour: {', '.join(missing)}"
        if missing
        else "declare the output as a type one of them takes"
    )
    raise UnsupportedTypeError(
        f"no installed schema flavour accepts {tp!r} as an output type; installed flavours: "
        f"{installed or 'none'}; {hint}"
    )


def supports_structured_output(model: object) -> bool:
    """Whether ``model`` declares native structured output.

    A model declares it with the optional class attribute ``supports_structured_output =
    True``; it then enforces ``ModelRequest.output`` itself and the prompt needs no schema
    block. A model that does not declare it gets the schema in the request prefix.
    """
    return getattr(model, "supports_structured_output", False) is True


def output_request(adapter: SchemaAdapter[object]) -> OutputSchema:
    """The structured-output part of a request for ``adapter``."""
    return OutputSchema(adapter.name, adapter.json_schema())


# ---------------------------------------------------------------------- the middleware


def repair_prompt(errors: list[str]) -> str:
    """The feedback a model gets when its answer does not validate."""
    return (
        "Your answer did not match the required JSON Schema:\n- "
        + "\n- ".join(errors)
        + "\nAnswer again with only the corrected JSON."
    )


@final
class OutputCoerce(Middleware):
    """Parses the final answer into ``ModelResponse.output``, repairing it when invalid.

    A response without tool calls is parsed with the adapter; if that fails, the errors go
    back to the model as a user message and the call is made again, up to ``retries``
    times; then :class:`~agentkit_core.OutputValidationError` carries the last raw answer
    and its errors. The repair exchange is left in ``request.metadata[REPAIRS]``.
    """

    __slots__ = ("adapter", "retries")

    def __init__(self, adapter: SchemaAdapter[object], retries: int = 2) -> None:
        if retries < 0:
            raise ConfigError(f"output retries must be 0 or more, got {retries}", value=retries)
        self.adapter = adapter
        self.retries = retries

    async def wrap_model(self, request: ModelRequest, call_next: CallModel) -> ModelResponse:
        attempt = request
        exchange: list[Message] = []
        rounds = 0
        while True:
            response = await call_next(attempt)
            message = response.message
            if message.tool_calls or not message.text.strip():
                return response
            try:
                value = self.adapter.parse(message.text)
            except ParseError as exc:
                errors = [str(e) for e in exc.errors] or [str(exc)]
            else:
                if exchange:
                    request.metadata[REPAIRS] = exchange
                return replace(response, output=value)
            if rounds >= self.retries:
                raise OutputValidationError(
                    f"the answer still does not match {self.adapter.name} after {rounds} "
                    f"repair rounds: {'; '.join(errors)}",
                    raw=message.text,
                    errors=errors,
                    transcript=[*attempt.messages, message],
                )
            rounds += 1
            feedback = Message.user(repair_prompt(errors))
            exchange += [message, feedback]
            attempt = replace(attempt, messages=(*attempt.messages, message, feedback))

    def __repr__(self) -> str:
        return f"output_coerce({self.adapter.name!r}, retries={self.retries})"


def output_coerce(adapter: SchemaAdapter[object], retries: int = 2) -> OutputCoerce:
    """The typed-output middleware for ``adapter`` (``adapt(Plan, manager=pm)`` makes one)."""
    if not isinstance(adapter, SchemaAdapter) or isinstance(adapter, type):
        raise ConfigError(
            f"output_coerce() takes a SchemaAdapter, got {adapter!r}: adapt it first, as in "
            f"output_coerce(adapt({getattr(adapter, '__name__', 'Plan')}, manager=pm))",
            value=adapter,
            source="output_coerce()",
        )
    return OutputCoerce(adapter, retries)
