"""The tool-source conformance suite: what every :class:`~agentkit_core.plugin.ToolSource` must do.

A tool-source plugin's test subclasses :class:`ToolSourceConformance` and opens a source with
at least one tool::

    class TestMySourceConformance(ToolSourceConformance):
        async def make_source(self) -> ToolSource:
            return await MySource.connect("...")

        def sample_call(self):
            return "echo", {"text": "hi"}, lambda result: result.content == "hi"

The suite closes the source after each test. A source that needs other fixtures (a server
started by the test session, say) overrides the ``source`` fixture instead: an async generator
fixture taking those fixtures and yielding an open source. Optional hooks: :meth:`sample_call`
(one call that must succeed), :meth:`failing_call` (one the source promises to answer as a tool
error, not an exception), ``label_must_not_show`` (configuration values, such as arguments and
tokens, the label must leave out). Once closed, a source's listing raises ToolSourceError, and
so does each part of a :class:`~agentkit_core.plugin.CompositeToolSource`. Every await is bounded by
``timeout`` so that a source that hangs fails instead of stalling the run. Requires pytest
(and pytest-asyncio in auto mode).
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any
from typing import ClassVar
from typing import TypeVar

import pytest

from .._errors import ToolSourceError
from .._models import ToolSpec
from .._tools import Tool
from .._tools import ToolResult
from .._toolsource import ToolSource
from .._toolunion import CompositeToolSource
from .._toolunion import DynamicToolSource
from ._context import make_test_ctx
from ._registrations import check_declared_options

T = TypeVar("T")

#: One call: the tool's name, its arguments, and a check on the result (truthy means good).
SampleCall = tuple[str, dict[str, Any], Callable[[ToolResult], object]]

_URL_CREDENTIALS = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^/\s]*@")


def check_label(label: object, must_not_show: tuple[str, ...] = ()) -> None:
    """Fail unless ``label`` is text that is safe to log: no credentials, no argument list."""
    assert isinstance(label, str) and label.strip(), f"a label must be a non-empty str: {label!r}"
    assert label == label.strip() and label.isprintable(), (
        f"a label is one printable line without surrounding blanks: {label!r}"
    )
    assert not _URL_CREDENTIALS.search(label), f"the label shows URL credentials: {label!r}"
    assert "?" not in label, f"the label shows a URL query (tokens live there): {label!r}"
    words = label.split()
    flags = [w for w in words if w.startswith("-") or "=" in w]
    assert not flags, f"the label shows command-line arguments {flags}: {label!r}"
    shown = [s for s in must_not_show if s in label]
    assert not shown, f"the label shows configuration it must leave out {shown}: {label!r}"


class ToolSourceConformance:
    """Contract tests for a tool source; subclass and define :meth:`make_source`."""

    #: Configuration values (arguments, paths, tokens) the label must not contain.
    label_must_not_show: ClassVar[tuple[str, ...]] = ()
    #: Seconds any one await of the source may take before the test fails as a hang.
    timeout: ClassVar[float] = 10.0

    async def make_source(self) -> ToolSource:
        raise NotImplementedError("define make_source() (or a source fixture) in the subclass")

    def sample_call(self) -> SampleCall | None:
        """A call that must succeed, as ``(tool name, arguments, check)``; None for none."""
        return None

    def failing_call(self) -> tuple[str, dict[str, Any]] | None:
        """A call the source answers as a tool error (bad arguments, say); None for none."""
        return None

    @pytest.fixture
    async def source(self) -> AsyncIterator[ToolSource]:
        made = await self._bounded(self.make_source(), "make_source()")
        try:
            yield made
        finally:
            await self._bounded(made.aclose(), "aclose()")

    async def _bounded(self, awaitable: Awaitable[T], what: str) -> T:
        try:
            return await asyncio.wait_for(awaitable, self.timeout)
        except TimeoutError:
            raise AssertionError(f"{what} did not return within {self.timeout:g}s") from None

    async def _tools(self, source: DynamicToolSource) -> list[Tool]:
        tools = await self._bounded(source.list_tools(), f"{source.label}: list_tools()")
        assert isinstance(tools, list), f"list_tools() must return a list, got {type(tools)}"
        return tools

    async def _tool(self, source: ToolSource, name: str) -> Tool:
        tools = {t.name: t for t in await self._tools(source)}
        assert name in tools, f"the call names {name!r}; the source lists {sorted(tools)}"
        return tools[name]

    def test_is_a_tool_source(self, source: ToolSource) -> None:
        assert isinstance(source, ToolSource), f"{source!r} lacks label, list_tools or aclose"

    def test_declared_options_are_taken_by_the_factory(self, source: ToolSource) -> None:
        check_declared_options(source)

    def test_label_is_safe_to_log(self, source: ToolSource) -> None:
        check_label(source.label, self.label_must_not_show)
        if isinstance(source, CompositeToolSource):
            labels = [part.label for part in source.sources()]
            for label in labels:
                check_label(label, self.label_must_not_show)
            assert len(set(labels)) == len(labels), f"the parts' labels repeat: {labels}"

    async def test_lists_tools_with_unique_names_and_object_schemas(
        self, source: ToolSource
    ) -> None:
        tools = await self._tools(source)
        assert tools, "configure the source with at least one tool so the suite can check it"
        for tool in tools:
            assert isinstance(tool, Tool), f"list_tools() gave {tool!r}, not a Tool"
            spec = tool.spec
            assert isinstance(spec, ToolSpec) and spec.name == tool.name
            assert isinstance(tool.name, str) and tool.name, f"a tool has no name: {tool!r}"
            assert isinstance(spec.description, str), f"{tool.name}: description is not a str"
            params = spec.parameters
            assert isinstance(params, dict) and params.get("type") == "object", (
                f"{tool.name}: parameters must be a JSON Schema object schema, got {params!r}"
            )
            assert isinstance(params.get("properties", {}), dict), f"{tool.name}: properties"
            json.dumps(params)  # what goes to the model must be JSON
        names = [t.name for t in tools]
        assert len(set(names)) == len(names), f"tool names repeat: {names}"
        if isinstance(source, CompositeToolSource):
            parts = [t.name for part in source.sources() for t in await self._tools(part)]
            assert sorted(parts) == sorted(names), (
                f"the parts list {sorted(parts)}, the whole lists {sorted(names)}; the kit "
                "unions the parts, so they must offer what the whole does"
            )

    async def test_listing_twice_gives_the_same_names(self, source: ToolSource) -> None:
        first = [t.name for t in await self._tools(source)]
        second = [t.name for t in await self._tools(source)]
        assert first == second

    async def test_calls_return_tool_results(self, source: ToolSource) -> None:
        for tool in await self._tools(source):
            assert type(tool).invoke is not Tool.invoke, f"{tool!r} does not implement invoke"
        sample = self.sample_call()
        if sample is not None:
            name, arguments, check = sample
            tool = await self._tool(source, name)
            result = await self._bounded(tool.invoke(arguments, make_test_ctx()), name)
            assert isinstance(result, ToolResult), f"{name} returned {result!r}"
            assert not result.is_error, f"{name}({arguments}) failed: {result.content!r}"
            assert check(result), f"{name}({arguments}) returned {result!r}"
        failing = self.failing_call()
        if failing is not None:
            name, arguments = failing
            tool = await self._tool(source, name)
            result = await self._bounded(tool.invoke(arguments, make_test_ctx()), name)
            assert isinstance(result, ToolResult) and result.is_error, (
                f"{name}({arguments}) should come back as a tool error, got {result!r}"
            )

    async def test_aclose_twice_is_a_no_op(self, source: ToolSource) -> None:
        await self._tools(source)
        await self._bounded(source.aclose(), "aclose()")
        await self._bounded(source.aclose(), "a second aclose()")

    async def test_a_closed_source_raises_tool_source_error(self, source: ToolSource) -> None:
        sample = self.sample_call()
        held = await self._tool(source, sample[0]) if sample is not None else None
        parts = list(source.sources()) if isinstance(source, CompositeToolSource) else []
        await self._bounded(source.aclose(), "aclose()")
        for part in parts:
            with pytest.raises(ToolSourceError):
                await self._bounded(part.list_tools(), f"{part.label}: list_tools() after close")
        with pytest.raises(ToolSourceError):
            await self._bounded(source.list_tools(), "list_tools() after aclose()")
        if held is not None and sample is not None:
            # a tool kept from before the close may still work (an in-process one) or fail
            # with ToolSourceError (a closed connection), but must not hang or fail otherwise
            try:
                result = await self._bounded(
                    held.invoke(sample[1], make_test_ctx()), "a call after aclose()"
                )
            except ToolSourceError:
                return
            assert isinstance(result, ToolResult), f"a call after aclose() gave {result!r}"
