"""The SchemaAdapter conformance suite every schema flavour runs.

A flavour declares one canonical shape in its own terms and hands the suite an adapter for it::

    Person: name: str, email: str
    Report: title: str, count: int, score: float, done: bool, tags: list[str],
            owner: Person, note: str | None = None

then subclasses :class:`SchemaAdapterConformance` (the class name starting with ``Test``)::

    class TestMine(SchemaAdapterConformance):
        def make_adapter(self):
            return adapt(Report, manager=PluginManager())

Documents are generated (hypothesis), written out with varied JSON styles (ASCII escapes,
indentation), and the partial parse is checked at every cut point of each document and
against the stream fed one character at a time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import TYPE_CHECKING
from typing import Any
from typing import Final
from typing import TypedDict

from .._errors import ParseError
from .._messages import JSONObject
from .._output import SchemaAdapter

if TYPE_CHECKING:
    from hypothesis.strategies import SearchStrategy

FIELDS: Final = ("title", "count", "score", "done", "tags", "owner", "note")
PERSON_FIELDS: Final = ("name", "email")
_MISSING: Final = object()
_SCALARS: Final = ("count", "score", "done")


def report_documents() -> SearchStrategy[dict[str, object]]:
    """A hypothesis strategy of Report documents (plain JSON data)."""
    from hypothesis import strategies as st

    text = st.text(st.characters(codec="utf-8"), max_size=12)
    person = st.fixed_dictionaries({"name": text, "email": text})
    return st.fixed_dictionaries(
        {
            "title": text,
            "count": st.integers(-(10**12), 10**12),
            "score": st.floats(allow_nan=False, allow_infinity=False, width=64),
            "done": st.booleans(),
            "tags": st.lists(text, max_size=4),
            "owner": person,
            "note": st.none() | text,
        }
    )


class DumpStyle(TypedDict):
    """The ``json.dumps`` keywords a document is written with."""

    ensure_ascii: bool
    indent: int | None


def dump_styles() -> SearchStrategy[DumpStyle]:
    """A hypothesis strategy of ``json.dumps`` keyword sets."""
    from hypothesis import strategies as st

    return st.builds(DumpStyle, ensure_ascii=st.booleans(), indent=st.none() | st.just(2))


class SchemaAdapterConformance:
    """Checks one adapter for the canonical Report shape; see the module docstring."""

    #: hypothesis examples per property (kept small: every cut point is parsed).
    max_examples = 15

    def make_adapter(self) -> SchemaAdapter[object]:
        """The adapter under test, for the flavour's declaration of Report."""
        raise NotImplementedError("a conformance subclass supplies make_adapter()")

    def has(self, obj: object, name: str) -> bool:
        """Whether field ``name`` has arrived in partial ``obj``.

        A field with a default reads as that default before it arrives (a class attribute of
        a dataclass, a filled-in default of a pydantic model), so presence is checked in the
        instance itself: ``vars(obj)``, or the slot being set.
        """
        if isinstance(obj, dict):
            return name in obj
        try:
            return name in vars(obj)
        except TypeError:  # a slotted class: an unset slot raises AttributeError
            return getattr(obj, name, _MISSING) is not _MISSING

    def get(self, obj: object, name: str) -> Any:
        """Field ``name`` of ``obj`` (an instance or plain data)."""
        return obj[name] if isinstance(obj, dict) else getattr(obj, name)

    # ------------------------------------------------------------------ helpers

    def view(self, obj: object, fields: tuple[str, ...] = FIELDS) -> dict[str, object]:
        """The arrived fields of a partial ``obj`` as plain data."""
        out: dict[str, object] = {}
        for name in fields:
            if self.has(obj, name):
                value = self.get(obj, name)
                if name == "owner" and value is not None:
                    value = self.view(value, PERSON_FIELDS)
                elif name == "tags":
                    value = list(value)
                out[name] = value
        return out

    def _check_prefix(self, seen: dict[str, Any], doc: dict[str, Any], where: str) -> None:
        for name, value in seen.items():
            final = doc[name]
            if name in _SCALARS:
                assert value == final and type(value) is type(final), (where, name, value)
            elif name == "owner":
                self._check_prefix(value, final, f"{where} owner")
            elif name == "tags":
                assert len(value) <= len(final), (where, value)
                for i, tag in enumerate(value):
                    last = i == len(value) - 1
                    assert tag == final[i] or (last and final[i].startswith(tag)), (where, tag)
            elif value is None or final is None:
                assert value == final, (where, name, value)
            else:
                assert isinstance(value, str) and final.startswith(value), (where, name, value)

    # ------------------------------------------------------------------ the suite

    def test_identity(self) -> None:
        adapter = self.make_adapter()
        assert isinstance(adapter, SchemaAdapter)
        assert isinstance(adapter.name, str) and adapter.name
        assert adapter.python_type is not None

    def test_json_schema(self) -> None:
        schema = self.make_adapter().json_schema()
        json.dumps(schema)
        properties, required = schema["properties"], schema["required"]
        assert isinstance(properties, dict) and isinstance(required, list)
        assert set(FIELDS) <= set(properties)
        assert set(required) >= {"title", "count", "score", "done", "tags", "owner"}
        assert "note" not in required

    def test_strict_json_schema(self) -> None:
        schema = self.make_adapter().json_schema(strict=True)
        objects = list(_objects(schema))
        assert len(objects) >= 2  # Report and Person, wherever Person is kept
        for node in objects:
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
        properties = schema["properties"]
        assert isinstance(properties, dict)
        note = properties["note"]
        assert "null" in json.dumps(note)

    def test_round_trip(self) -> None:
        from hypothesis import given
        from hypothesis import settings

        adapter = self.make_adapter()

        @settings(max_examples=self.max_examples, deadline=None)
        @given(report_documents(), dump_styles())
        def check(doc: dict[str, Any], style: DumpStyle) -> None:
            obj = adapter.parse(json.dumps(doc, **style))
            assert adapter.serialize(obj) == doc
            assert adapter.serialize(adapter.validate(obj)) == doc
            assert adapter.serialize(adapter.validate(doc)) == doc
            fenced = adapter.parse("```json\n" + json.dumps(doc) + "\n```")
            assert adapter.serialize(fenced) == doc

        check()

    def test_parse_is_strict(self) -> None:
        adapter = self.make_adapter()
        good = _example()
        for bad, field in (
            ({k: v for k, v in good.items() if k != "title"}, "title"),
            ({**good, "count": "many"}, "count"),
            ({**good, "owner": {"email": "a@b"}}, "name"),
        ):
            text = json.dumps(bad)
            try:
                adapter.parse(text)
            except ParseError as exc:
                assert exc.raw == text
                assert exc.errors and any(field in str(e) for e in exc.errors), exc.errors
            else:
                raise AssertionError(f"parse accepted {text}")
        for text in ("{", "not json", '{"title": "x",}'):
            try:
                adapter.parse(text)
            except ParseError as exc:
                assert exc.raw == text and exc.errors
            else:
                raise AssertionError(f"parse accepted {text!r}")

    def test_parse_refuses_what_is_not_plain_json(self) -> None:
        """What a decoder would read loosely is a ParseError, never a value or a crash.

        A repeated key, NaN, a number past range, a lone surrogate escape, nesting past the
        decoder's depth.
        """
        adapter = self.make_adapter()

        def swap(field: str, literal: str) -> str:
            return json.dumps({**_example(), field: "@@"}).replace('"@@"', literal)

        cases = {
            json.dumps(_example())[:-1] + ', "done": true}': "a repeated key",
            swap("score", "NaN"): "NaN",
            swap("score", "-Infinity"): "-Infinity",
            swap("score", "1e400"): "a float past range",
            swap("count", "9" * 5000): "an integer of 5000 digits",
            swap("title", '"\\ud800"'): "a lone surrogate escape",
            swap("tags", "[" * 100_000 + "]" * 100_000): "nesting 100,000 deep",
        }
        for text, why in cases.items():
            try:
                adapter.parse(text)
            except ParseError as exc:
                assert exc.raw == text and exc.errors, (why, exc)
            else:
                raise AssertionError(f"parse accepted {why}: {text[:200]!r}")

    def test_parse_raises_only_parse_error(self) -> None:
        from hypothesis import given
        from hypothesis import settings
        from hypothesis import strategies as st

        adapter = self.make_adapter()
        documents = st.builds(json.dumps, report_documents())
        noise = st.sampled_from(["NaN", "[", "{", '"\\udc00"', "9" * 5000, ",", '"done":1,'])

        @settings(max_examples=self.max_examples, deadline=None)
        @given(documents, st.integers(0, 400), noise)
        def check(text: str, at: int, insert: str) -> None:
            mangled = text[:at] + insert + text[at:]
            try:
                adapter.parse(mangled)
            except ParseError as exc:
                assert exc.raw == mangled and exc.errors
            # a mangled document that still parses is fine; any other exception is not

        check()

    def test_validate_refuses_a_bad_value(self) -> None:
        adapter = self.make_adapter()
        try:
            adapter.validate({**_example(), "done": "perhaps", "count": [1]})
        except ParseError as exc:
            assert any("count" in str(e) for e in exc.errors), exc.errors
        else:
            raise AssertionError("validate accepted count=[1]")

    def test_partial_parse_at_every_cut(self) -> None:
        from hypothesis import given
        from hypothesis import settings

        adapter = self.make_adapter()

        @settings(max_examples=self.max_examples, deadline=None)
        @given(report_documents(), dump_styles())
        def check(doc: dict[str, Any], style: DumpStyle) -> None:
            text = json.dumps(doc, **style)
            stream = adapter.stream()
            before: set[str] = set()
            for cut in range(len(text) + 1):
                partial = adapter.partial_parse(text[:cut])
                seen = {} if partial is None else self.view(partial)
                self._check_prefix(seen, doc, f"cut {cut} of {text!r}")
                assert before <= set(seen), (cut, before, seen)  # what arrived stays
                before = set(seen)
                if cut:
                    streamed = stream.feed(text[cut - 1])
                    assert (self.view(streamed) if streamed is not None else {}) == seen, cut
            assert seen == doc
            assert adapter.serialize(stream.finish()) == doc

        check()

    def test_partial_fields_not_arrived_are_absent(self) -> None:
        adapter = self.make_adapter()
        partial = adapter.partial_parse('{"title": "Quarterly rep')
        assert self.get(partial, "title") == "Quarterly rep"
        for name in ("count", "tags", "owner"):
            assert not self.has(partial, name), name
        cut_number = adapter.partial_parse('{"title": "t", "count": 12')
        assert not self.has(cut_number, "count")
        nested = adapter.partial_parse('{"owner": {"name": "Ad\\u00e')
        assert self.get(self.get(nested, "owner"), "name") == "Ad"
        assert not self.has(self.get(nested, "owner"), "email")


def _example() -> JSONObject:
    return {
        "title": "t",
        "count": 1,
        "score": 0.5,
        "done": False,
        "tags": ["a"],
        "owner": {"name": "n", "email": "e"},
        "note": None,
    }


def _objects(schema: object) -> Iterator[dict[str, Any]]:
    """Every object schema with properties, at any depth (``$defs`` included)."""
    if isinstance(schema, dict):
        if "properties" in schema:
            yield schema
        for value in schema.values():
            yield from _objects(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _objects(value)
