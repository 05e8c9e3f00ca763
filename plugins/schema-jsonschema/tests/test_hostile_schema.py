"""A hostile or broken schema handed to the JSON Schema flavour fails closed, by name."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import PluginManager
from agentkit_core.plugin import ParseError
from agentkit_core.plugin import UnsupportedTypeError
from agentkit_core.plugin import adapt

PM = PluginManager()

TREE = {"type": "object", "properties": {"child": {"$ref": "#"}}}


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"anyOf": [{"$ref": "#"}]},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
    ],
)
def test_a_ref_loop_that_consumes_nothing_is_refused_when_adapted(schema: Any) -> None:
    # it used to build, then every parse() raised a bare RecursionError
    with pytest.raises(UnsupportedTypeError, match=r"\$ref loop"):
        adapt(schema, manager=PM)


def test_a_recursive_schema_still_works_and_a_too_deep_answer_is_a_parse_error() -> None:
    adapter = adapt(TREE, manager=PM)
    assert adapter.parse('{"child": {"child": {}}}') == {"child": {"child": {}}}
    deep = '{"child": ' * 400 + "{}" + "}" * 400  # decodes, but too deep to validate
    with pytest.raises(ParseError, match="nested too deeply") as info:
        adapter.parse(deep)
    assert info.value.raw == deep and info.value.errors


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 2000))
def test_any_depth_of_answer_is_a_value_or_a_parse_error(depth: int) -> None:
    adapter = adapt(TREE, manager=PM)
    text = '{"child": ' * depth + "{}" + "}" * depth
    try:
        adapter.parse(text)
    except ParseError as exc:
        assert exc.raw == text


def test_a_remote_ref_is_never_fetched_and_names_the_fix() -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        server.settimeout(0.5)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/person.json"
        hits: list[object] = []

        def watch() -> None:
            try:
                hits.append(server.accept())
            except OSError:
                pass

        watcher = threading.Thread(target=watch)
        watcher.start()
        with pytest.raises(UnsupportedTypeError, match=r"never fetched.*\$defs"):
            adapt({"$ref": url}, manager=PM)
        nested = adapt({"type": "object", "properties": {"p": {"$ref": url}}}, manager=PM)
        with pytest.raises(UnsupportedTypeError, match="cannot be resolved"):
            nested.parse('{"p": 1}')
        watcher.join()
        assert hits == []
