"""``agentkit run``: run an agent on a task from the command line."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from typing import Any

from ._cli_show import add_show_arguments
from ._cli_show import check_show_arguments
from ._cli_show import run_and_show
from ._errors import ConfigError
from ._settings import check_settings


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    run = sub.add_parser("run", help="run an agent on a task")
    run.add_argument("task", nargs="?", default="", help="what the agent should do")
    run.add_argument(
        "--model",
        default=None,
        help="a model string such as openai:gpt-4o-mini (default: $AGENTKIT_MODEL; with neither, "
        "a demo run on the built-in TestModel)",
    )
    run.add_argument(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a tool, typed function or list of them to offer (repeatable)",
    )
    run.add_argument(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="an MCP server (command line or URL) whose tools to offer (repeatable)",
    )
    run.add_argument("--output", metavar="MODULE:TYPE", help="parse the answer into this type")
    run.add_argument("--prompt", default="", help="the system prompt")
    run.add_argument("--max-turns", type=int, default=10)
    run.add_argument(
        "--temperature", type=float, help="the model's sampling temperature (ModelSettings)"
    )
    run.add_argument(
        "--max-tokens",
        type=int,
        metavar="N",
        help="the most tokens the model's answer may take (ModelSettings.max_tokens)",
    )
    run.add_argument(
        "--session",
        metavar="URL",
        help="record the conversation in this session store (sqlite:///sessions.db, ...); a "
        "new session's id is printed on stderr; with --resume ID, continue session ID at its "
        "leaf with TASK as the next message",
    )
    add_show_arguments(run)
    run.set_defaults(func=_run)


def load_object(spec: str, what: str) -> Any:
    """The object ``module:attr`` names; the current directory is importable."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what} {spec!r} is not MODULE:ATTR", value=spec, source=what)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what} {spec!r}: cannot import {module_name!r}: {exc}") from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {spec!r}: {module_name!r} has no {attr!r}") from None
    return obj


def _model_choice(given: str | None) -> str:
    """``--model``, else ``AGENTKIT_MODEL``, else the labelled demo run on TestModel.

    The demo is the one place the test model is chosen for the user.
    """
    if given:
        return given
    if "AGENTKIT_MODEL" in os.environ:
        value = os.environ["AGENTKIT_MODEL"].strip()
        if not value:
            raise ConfigError(
                "AGENTKIT_MODEL is set but empty; set it to a model string such as "
                "openai:gpt-4o-mini, or unset it for the demo model",
                value="",
                source="AGENTKIT_MODEL",
            )
        return value
    print(
        "agentkit: demo run on the built-in TestModel, which calls every tool with made-up "
        "arguments (pass --model or set AGENTKIT_MODEL for a real model)",
        file=sys.stderr,
    )
    return "test"


def _run(args: argparse.Namespace) -> int:
    check_show_arguments(args)
    if not args.resume and not args.task.strip():
        raise ConfigError(
            'the task is empty; say what the agent should do, as in agentkit run "What is 6 * 7?"',
            value=args.task,
            source="TASK",
        )
    tools: list[Any] = []
    for spec in args.tools:
        obj = load_object(spec, "--tools")
        tools.extend(obj if isinstance(obj, list | tuple) else [obj])
    output = load_object(args.output, "--output") if args.output else None
    args.model = _model_choice(args.model)
    return asyncio.run(_run_async(args, tools, output))


async def _run_async(args: argparse.Namespace, tools: list[Any], output: Any) -> int:
    from ._agent import Agent

    recorder: Any = None
    given = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    settings = check_settings(
        {key: value for key, value in given.items() if value is not None},
        "agentkit run's --temperature/--max-tokens",
    )

    def make_agent(checkpointer: Any, exporters: list[Any], offered: Any = tools) -> Agent:
        return Agent(
            "cli",
            args.model,
            args.prompt,
            offered,
            output=output,
            max_turns=args.max_turns,
            settings=settings,
            checkpointer=checkpointer,
            exporters=exporters,
            manager=args.plugin_manager,
            recorder=recorder,
        )

    if not args.session:
        return await _run_tools(args, tools, make_agent, None)
    from ._recorder import Recorder
    from ._sessions import SessionHeader
    from ._sessions import Sessions

    async with await Sessions.open(args.session, manager=args.plugin_manager) as sessions:
        header = SessionHeader(
            cwd=os.getcwd(),
            model=args.model,
            plugin_fingerprint=args.plugin_manager.fingerprint(),
        )
        if args.resume:
            recorder = await Recorder.resume(sessions, args.resume, header=header)
            held = recorder.state.held
            if held:
                calls = ", ".join(f"{c.id} {c.name}" for c in held)
                print(
                    f"agentkit: session {args.resume} had calls waiting for approval at its "
                    f"leaf ({calls}); this message leaves them unanswered",
                    file=sys.stderr,
                )
        else:
            recorder = await Recorder.start(sessions, header)
            print(f"agentkit: session {recorder.session_id}", file=sys.stderr)
        return await _run_tools(args, tools, make_agent, recorder.working_context(args.model))


async def _run_tools(args: argparse.Namespace, tools: list[Any], make_agent: Any, wc: Any) -> int:
    """Run on ``tools``, with the ``--mcp`` servers' tools too when any are named."""
    if not args.mcp:
        return await run_and_show(args, make_agent, lambda agent: agent.run(args.task, wc=wc))
    return await _run_with_mcp(args, tools, make_agent, wc)


async def _run_with_mcp(
    args: argparse.Namespace, tools: list[Any], make_agent: Any, wc: Any
) -> int:
    """Run with the ``--mcp`` servers' tools, from the installed "mcp" tool source, offered too."""
    from ._agent import _as_tool
    from ._lookup import get_tool_source
    from ._toolunion import ToolUnion

    source = get_tool_source("mcp", manager=args.plugin_manager, servers=args.mcp)
    try:
        given = [_as_tool(t) for t in tools]
        union = await ToolUnion.create([("--tools", given), (source.label, source)])
        return await run_and_show(
            args,
            lambda checkpointer, exporters: make_agent(checkpointer, exporters, union),
            lambda agent: agent.run(args.task, wc=wc),
        )
    finally:
        await source.aclose()
