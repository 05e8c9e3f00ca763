"""Tools: the base class every tool is, and the result a tool call produces."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import cast
from typing import overload

from ._errors import ToolDefinitionError
from ._lazy import loaded_instance
from ._messages import Content
from ._messages import JSONObject
from ._models import ToolSpec
from ._records import quick_init
from ._records import record

if TYPE_CHECKING:
    from pydantic import ValidationError

    from ._context import RunContext
    from ._toolunion import ToolUnion


@quick_init
@record(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced.

    ``content`` is what the model reads (text, or content parts such as images: typed ones
    from :mod:`agentkit_core.content`, or OpenAI-style dicts);
    ``structured`` keeps machine-readable output beside it; ``is_error`` marks a failure the
    model should see and may recover from.
    """

    content: Content
    is_error: bool = False
    structured: object = None

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(message, is_error=True)


class Tool:
    """A tool an agent may call.

    Subclasses implement :meth:`invoke`. The agent validates nothing on a subclass's behalf:
    ``invoke`` receives the decoded JSON arguments and must check them itself (the function
    tools built by :func:`~agentkit_core.tool` validate against their signature).

    Attributes:
        name: unique within an agent; what the model calls.
        description: what the model reads to decide when to call it.
        parameters: the JSON Schema of the arguments object.
        sequential: True when the tool must not run alongside others in one batch.
        side_effects: True when calling it acts on the world (egress checks these).
        timeout: seconds a call may take before it becomes a tool error; None takes the
            agent's ``tool_timeout`` (300 s unless set; ``Agent(tool_timeout=None)`` for none).
        idempotent: True when running one call twice acts on the world as running it once.
            A durable executor re-runs an interrupted call only of such a tool (or of one
            without ``side_effects``); see ``docs/durable.md``.
    """

    name: str
    description: str = ""
    parameters: dict[str, Any]
    sequential: bool = False
    side_effects: bool = True
    timeout: float | None = None
    idempotent: bool = False

    def __init__(
        self,
        name: str,
        description: str = "",
        parameters: JSONObject | None = None,
        *,
        sequential: bool = False,
        side_effects: bool = True,
        timeout: float | None = None,
        idempotent: bool = False,
    ) -> None:
        self.name = name
        self.description = description
        self.parameters = parameters or {"type": "object", "properties": {}}
        self.sequential = sequential
        self.side_effects = side_effects
        self.timeout = timeout
        self.idempotent = idempotent

    @property
    def spec(self) -> ToolSpec:
        """The tool as the model is told about it."""
        return ToolSpec(self.name, self.description, self.parameters)

    async def invoke(self, arguments: JSONObject, ctx: RunContext) -> ToolResult:
        """Run the tool with decoded arguments; return a result (errors as ``is_error``)."""
        raise NotImplementedError(f"{type(self).__name__}.invoke")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


class FunctionTool(Tool):
    """A tool made from a typed Python function (sync or async).

    The JSON Schema of the arguments comes from the signature and the docstring (pydantic);
    arguments are validated before the call, and a failure is a tool error the model sees. A
    parameter annotated ``RunContext`` receives the run's context and is not in the schema.
    A plain ``def`` runs on the event loop (fast, for quick functions); pass ``blocking=True``
    for one that waits on I/O, and it runs in a worker thread.
    """

    def __init__(
        self,
        fn: Callable[..., object],
        *,
        name: str | None = None,
        description: str | None = None,
        sequential: bool = False,
        side_effects: bool = True,
        timeout: float | None = None,
        blocking: bool = False,
        idempotent: bool = False,
    ) -> None:
        from ._tool_schema import signature_model

        if not callable(fn):
            raise ToolDefinitionError(f"{fn!r:.200} is not a tool: pass a Tool or a typed function")
        self.fn = fn
        self.is_async = inspect.iscoroutinefunction(fn)
        self.blocking = blocking
        summary, model, self._ctx_param, schema = signature_model(fn)
        self._model = model
        self._has_args = bool(model.model_fields) if model is not None else False
        if self._has_args:
            from pydantic import ValidationError

            self._invalid: type[ValidationError] = ValidationError
        super().__init__(
            name or str(getattr(fn, "__name__", type(fn).__name__)),
            description if description is not None else summary,
            schema,
            sequential=sequential,
            side_effects=side_effects,
            timeout=timeout,
            idempotent=idempotent,
        )

    async def invoke(self, arguments: JSONObject, ctx: RunContext) -> ToolResult:
        kwargs: dict[str, object] = {}
        if self._has_args:
            assert self._model is not None
            try:  # model_validate with its defaults, without its Python frame
                validated = self._model.__pydantic_validator__.validate_python(arguments)
            except self._invalid as exc:
                problems = "; ".join(
                    f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                    for e in exc.errors()
                )
                return ToolResult.error(f"invalid arguments for tool {self.name!r}: {problems}")
            # every field, defaults filled in (the model forbids extra keys): the call's kwargs
            kwargs = dict(validated.__dict__)
        elif arguments:
            unexpected = ", ".join(sorted(arguments))
            return ToolResult.error(f"tool {self.name!r} takes no arguments, got {unexpected}")
        if self._ctx_param is not None:
            kwargs[self._ctx_param] = ctx
        if self.is_async:
            value = await self.fn(**kwargs)  # type: ignore[misc]  # is_async: a coroutine
        elif self.blocking:
            from ._threads import run_in_thread

            value = await run_in_thread(self.fn, **kwargs)
        else:
            value = self.fn(**kwargs)
        return as_tool_result(value)


#: ``json.dumps(data, ensure_ascii=False)`` without building an encoder per call (``dumps``
#: reuses its cached one only when every option is the default).
_encode = json.JSONEncoder(ensure_ascii=False).encode
#: Return types that are JSON data already: ``to_jsonable_python`` would return them as they are.
_SCALARS = frozenset({int, float, bool, type(None)})


def as_tool_result(value: object) -> ToolResult:
    """A tool's return value as a result: text as is, anything else as JSON."""
    if type(value) is str:  # the common case, before any isinstance check
        return ToolResult(value)
    if type(value) in _SCALARS:
        return ToolResult(_encode(value), structured=value)
    if isinstance(value, ToolResult):
        return value
    if isinstance(value, str):
        return ToolResult(value)
    from pydantic_core import to_jsonable_python

    data = to_jsonable_python(value)
    return ToolResult(_encode(data), structured=data)


#: The label of the user's own tools: the first source of a kit's union, and an agent's list.
USER_TOOLS = "tools"

#: A union's ``tool_filter=`` and ``tool_wrap=`` (see ``ToolUnion``).
ToolFilter = Callable[[str, Tool], bool]
ToolWrap = Callable[[str, Tool], "Tool | None"]


def union_of(tools: object) -> ToolUnion | None:
    """``tools`` when it is a ``ToolUnion``, else None, without loading that module.

    No union exists before ``_toolunion`` is loaded, so an agent given a list does not load it.
    """
    if loaded_instance(tools, ("agentkit_core._toolunion", "ToolUnion")):
        return cast("ToolUnion", tools)
    return None


@overload
def tool(fn: Callable[..., object], /) -> FunctionTool: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    sequential: bool = False,
    side_effects: bool = True,
    timeout: float | None = None,
    blocking: bool = False,
    idempotent: bool = False,
) -> Callable[[Callable[..., object]], FunctionTool]: ...


def tool(
    fn: Callable[..., object] | None = None,
    /,
    **options: Any,
) -> FunctionTool | Callable[[Callable[..., object]], FunctionTool]:
    """Make a tool from a typed function: ``@tool`` or ``@tool(timeout=5, sequential=True)``."""
    if fn is not None:
        return FunctionTool(fn, **options)
    return lambda f: FunctionTool(f, **options)


def as_tool(obj: Any) -> Tool:
    """``obj`` when it is a Tool, else the FunctionTool made of it (it refuses a non-callable)."""
    return obj if isinstance(obj, Tool) else FunctionTool(obj)


def tool_table(agent: str, tools: Sequence[Any]) -> dict[str, Tool]:
    """The agent's tools by name; two of one name is a ToolDefinitionError."""
    table: dict[str, Tool] = {}
    for t in map(as_tool, tools):
        if t.name in table:
            raise ToolDefinitionError(
                f"agent {agent!r} has two tools named {t.name!r}: "
                f"{table[t.name]!r} and {t!r}; rename one"
            )
        table[t.name] = t
    return table
