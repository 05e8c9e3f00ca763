"""Run executors: how a run's model calls and tool calls are executed.

Every model call and every tool call of a run is one *step*, and the agent hands each to its
executor: ``await executor.step(name, call, kind=..., idempotent=...)``. The default,
:class:`InProcessExecutor`, awaits the call in the run's own task. A durable executor (the
``executor-dbos`` plugin) records each step's result, so a run interrupted at any point resumes
after a restart from its last completed step and never repeats one (see ``docs/durable.md``).

Executors are found by name: ``get_executor("dbos", database=...)`` or
``Kit(executor="dbos", executor_options={...})``; a plugin offers one through
``agentkit_register_executors``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any
from typing import ClassVar
from typing import Literal
from typing import TypeVar
from typing import final

from ._context import unread
from ._errors import ConfigError
from ._errors import UnknownNameError
from ._run_errors import StepTimeoutError

if TYPE_CHECKING:
    from ._agent import Agent
    from ._context import RunContext
    from ._plugins import PluginManager
    from ._run_state import AgentResult

T = TypeVar("T")

#: What a step runs: one model call, one tool call, or one batch appended to the run's session.
StepKind = Literal["model", "tool", "session"]

#: The name of the built-in executor (core's, not a plugin's).
IN_PROCESS = "in-process"

#: What a resumed run may do with a call a crash left with no known outcome.
INTERRUPTED = ("report", "ask")


class Executor:
    """How a run's steps execute: the base class every run executor is.

    Subclasses implement :meth:`step`, and :meth:`run` when a run must start somewhere other
    than the caller's task (a durable executor starts it as a workflow).

    Attributes:
        name: the name the executor is registered under (``"in-process"``, ``"dbos"``).
        durable: True when a step's result is recorded and a run run again after a crash gets
            it back without running the step: the run's session batches are then steps too
            (``"session:<n>"``), so a replayed run does not append them again.
    """

    name: str = ""
    durable: ClassVar[bool] = False

    async def step(
        self,
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        kind: StepKind,
        idempotent: bool = True,
    ) -> T:
        """Run one step of a run and return what ``call()`` returns.

        Args:
            name: the step's name, the same when the run is run again from the start:
                ``"model:<turn>"``, ``"tool:<tool>:<call id>"``, or (on a durable executor)
                ``"session:start"`` and ``"session:<n>"``.
            call: makes the step's awaitable; called at most once per execution of the run.
            kind: ``"model"``, ``"tool"`` or ``"session"``.
            idempotent: False when running the step twice would act on the world twice (a
                tool whose ``idempotent`` is False and that has ``side_effects``). A durable
                executor must not silently run again such a step it finds interrupted.

        Raises:
            StepTimeoutError: the step overran the executor's step timeout.
        """
        raise NotImplementedError(f"{type(self).__name__}.step")

    async def run(self, agent: Agent, task: str, *, run_id: str | None = None) -> AgentResult:
        """Run ``agent`` on ``task`` under this executor and return its result.

        The default runs it in the caller's task (``agent.run``) with a fresh context of
        ``run_id`` (a new id when None).
        """
        return await agent.run(task, ctx=unread(agent.new_context(run_id)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


async def timed_step(name: str, call: Callable[[], Awaitable[T]], timeout: float | None) -> T:
    """``await call()``, cancelled past ``timeout`` seconds with a :class:`StepTimeoutError`.

    A ``TimeoutError`` the call raises itself (a model deadline) passes through unchanged.
    """
    if timeout is None:
        return await call()
    task = asyncio.ensure_future(call())
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    finally:
        if not task.done():  # past the timeout, or the run itself was cancelled
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    if not done:
        raise StepTimeoutError(
            f"step {name!r} took longer than step_timeout={timeout} s and was cancelled; "
            "raise executor_options['step_timeout'] (None for no limit) or find what held "
            "the step up",
            step=name,
            timeout=timeout,
        )
    return task.result()


def replayed_step(ctx: RunContext, name: str, kind: StepKind, result: object) -> None:
    """What a durable executor does for a step that returned its recorded result unrun.

    The run gets what running the step gave it besides its result: a model call's usage is
    added (so the run's usage and budget count it, as an uninterrupted run's do), and a model
    or tool call gets its ``model_call`` / ``tool_call`` span, stamped from the recorded result
    and marked ``replayed=True`` (it takes no time: the call ran in an earlier execution, whose
    own span was made there). A session step gets neither.
    """
    from ._invoke import _size
    from ._invoke import _stamp
    from ._models import ModelResponse
    from ._tools import ToolResult

    if kind == "model":
        response = result[0] if isinstance(result, tuple) else result  # (answer, repairs)
        if isinstance(response, ModelResponse):
            ctx.add_usage(response.usage)
            payload: dict[str, object] = {"response": response.message}
            with ctx.trace.span("model_call", payload, step=name, replayed=True) as span:
                _stamp(span, response, False)  # exporters map its attributes when asked
    elif kind == "tool" and isinstance(result, ToolResult):
        _, tool, call_id = name.split(":", 2) if name.count(":") >= 2 else ("", name, "")
        payload = {"result": result.content}  # its arguments: in the replayed model call
        with ctx.trace.span(
            "tool_call", payload, tool=tool, call_id=call_id, replayed=True
        ) as span:
            span.set("is_error", result.is_error)
            span.set("result_chars", _size(result.content))


@final
class InProcessExecutor(Executor):
    """The default executor: each step runs in the run's own task, nothing is recorded.

    Since nothing is recorded, a tool call that may act twice is marked *in flight* in the
    run's checkpoint (and session) before its batch runs. A run resumed after its process died
    in such a batch does not run those calls again: a tool declared ``idempotent`` (or without
    ``side_effects``) is run again, any other call's outcome is unknown.

    Args:
        step_timeout: seconds one step may take before the run fails with a
            :class:`StepTimeoutError` naming the step; None (the default) for no limit.
        interrupted: what a resumed run does with a call whose outcome is unknown:
            ``"report"`` (the default) gives the model a tool error saying so, ``"ask"``
            suspends the run with the call pending, for a person to approve running it again
            or refuse it (``agent.resume(run_id, approvals)``).
    """

    name = IN_PROCESS

    def __init__(self, *, step_timeout: float | None = None, interrupted: str = "report") -> None:
        self.step_timeout = check_timeout(step_timeout, "InProcessExecutor(step_timeout=)")
        if interrupted not in INTERRUPTED:
            raise ConfigError(
                f"InProcessExecutor(interrupted=) takes one of {', '.join(INTERRUPTED)}, got "
                f"{interrupted!r}",
                value=interrupted,
                source="InProcessExecutor(interrupted=)",
            )
        self.interrupted = interrupted

    async def step(
        self,
        name: str,
        call: Callable[[], Awaitable[T]],
        *,
        kind: StepKind,
        idempotent: bool = True,
    ) -> T:
        """Await ``call()`` (within the step timeout)."""
        return await timed_step(name, call, self.step_timeout)


def check_timeout(value: object, source: str) -> float | None:
    """``value`` as a step timeout: None or a positive number of seconds."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ConfigError(
            f"{source} takes a positive number of seconds or None, got {value!r}",
            value=value,
            source=source,
        )
    return float(value)


def check_options(
    factory: Callable[..., object], options: Mapping[str, object], source: str
) -> None:
    """Refuse an option ``factory`` does not take, naming it and the ones it takes."""
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):
        return
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return
    takes = [n for n, p in params.items() if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]
    takes = [n for n in takes if n != "manager"]
    unknown = sorted(set(options) - set(takes))
    if unknown:
        raise ConfigError(
            f"{source} has unknown option(s) {', '.join(map(repr, unknown))}; the options "
            f"are: {', '.join(takes) or 'none'}",
            value=unknown,
            source=source,
        )


def get_executor(name: str = IN_PROCESS, *, manager: PluginManager, **options: Any) -> Executor:
    """The run executor named ``name``, built with ``options``.

    ``"in-process"`` is core's :class:`InProcessExecutor`; any other name is the executor an
    installed plugin registered (``agentkit_register_executors``). An unknown name is an
    :class:`UnknownNameError` listing the installed executors; an option the executor does
    not take is a :class:`ConfigError` naming it.
    """
    from ._lookup import build

    source = f"executor_options (executor {name!r})"
    if name == IN_PROCESS:
        check_options(InProcessExecutor, options, source)
        return InProcessExecutor(**options)
    pm = manager.load()
    try:
        reg = pm.lookup("executors", name)
    except UnknownNameError as exc:  # core's own executor is no plugin's: name it too
        raise UnknownNameError(
            f"{exc}; core's own executor is {IN_PROCESS!r} (for durable runs, pip install "
            "agentkit-executor-dbos)",
            name=name,
            available=(IN_PROCESS, *exc.available),
        ) from None
    check_options(reg.value, options, source)  # build then checks the kinds of its settings
    made: Executor = build(
        "executors",
        name,
        options,
        pm,
        where="executor_options",
        check=lambda e: isinstance(e, Executor),
        expected="an agentkit_core.plugin.Executor subclass instance",
    )
    return made


def resolve_executor(
    executor: Executor | str | None,
    options: Mapping[str, object] | None = None,
    *,
    manager: PluginManager,
    source: str = "executor=",
) -> Executor:
    """An :class:`Executor` from an object, a name (built with ``options``), or None (default)."""
    if isinstance(executor, Executor):
        if options:
            raise ConfigError(
                f"{source} got the executor {executor!r} and executor_options {dict(options)!r}; "
                "options build a named executor: pass the name, or leave the options out",
                value=options,
                source=source,
            )
        return executor
    if executor is None:
        executor = IN_PROCESS
    if not isinstance(executor, str):
        raise ConfigError(
            f"{source} takes an Executor or the name of one, got {executor!r}",
            value=executor,
            source=source,
        )
    if options is not None and not isinstance(options, Mapping):
        raise ConfigError(
            f"executor_options takes a mapping of option to value, got {options!r}",
            value=options,
            source=source,
        )
    return get_executor(executor, manager=manager, **dict(options or {}))
