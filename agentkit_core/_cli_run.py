"""``agentkit run``: run an agent on a task from the command line."""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from typing import Any

from ._errors import ConfigError


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    run = sub.add_parser("run", help="run an agent on a task")
    run.add_argument("task", help="what the agent should do")
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
        "--session",
        metavar="URL",
        help="record the conversation in this session store (sqlite:///sessions.db, ...); a "
        "new session's id is printed on stderr",
    )
    run.add_argument(
        "--resume",
        metavar="ID",
        help="continue session ID at its leaf with the task as the next message (needs --session)",
    )
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
    import json

    from ._agent import Agent

    tools: list[Any] = []
    for spec in args.tools:
        obj = load_object(spec, "--tools")
        tools.extend(obj if isinstance(obj, list | tuple) else [obj])
    output = load_object(args.output, "--output") if args.output else None
    args.model = _model_choice(args.model)
    agent = Agent(
        "cli",
        args.model,
        args.prompt,
        tools,
        output=output,
        max_turns=args.max_turns,
        manager=args.plugin_manager,
    )
    if args.resume and not args.session:
        raise ConfigError(
            "--resume needs --session URL (the store the session is in)",
            value=args.resume,
            source="--resume",
        )
    if args.session:
        result = asyncio.run(_run_recorded(args, agent, tools, output))
    elif args.mcp:
        result = asyncio.run(_run_with_mcp(args, tools, output))
    else:
        result = agent.run_sync(args.task)
    out = result.output
    if result.status != "done":
        print(f"agentkit: run {result.status}: {result.stop_reason}", file=sys.stderr)
    if isinstance(out, str):
        print(out)
    else:
        from pydantic_core import to_jsonable_python

        print(json.dumps(to_jsonable_python(out), indent=2, ensure_ascii=False))
    return 0 if result.status == "done" else 1


async def _run_recorded(args: argparse.Namespace, agent: Any, tools: list[Any], output: Any) -> Any:
    """Run with ``--session``: a new session (its id on stderr), or ``--resume ID`` at its leaf."""
    from ._recorder import Recorder
    from ._sessions import SessionHeader
    from ._sessions import Sessions

    async with await Sessions.open(args.session, manager=args.plugin_manager) as sessions:
        header = SessionHeader(
            cwd=os.getcwd(),
            model=agent.model.name,
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
        wc = recorder.working_context(agent.model.name)
        if args.mcp:
            return await _run_with_mcp(args, tools, output, recorder=recorder, wc=wc)
        ctx = agent.new_context()
        ctx.recorder = recorder
        return await agent.run(args.task, ctx=ctx, wc=wc)


async def _run_with_mcp(
    args: argparse.Namespace,
    tools: list[Any],
    output: Any,
    *,
    recorder: Any = None,
    wc: Any = None,
) -> Any:
    """Run with the ``--mcp`` servers' tools, from the installed "mcp" tool source, offered too."""
    from ._agent import Agent
    from ._agent import _as_tool
    from ._lookup import get_tool_source
    from ._toolunion import ToolUnion

    source = get_tool_source("mcp", manager=args.plugin_manager, servers=args.mcp)
    try:
        given = [_as_tool(t) for t in tools]
        union = await ToolUnion.create([("--tools", given), (source.label, source)])
        agent = Agent(
            "cli",
            args.model,
            args.prompt,
            union,
            output=output,
            max_turns=args.max_turns,
            manager=args.plugin_manager,
            recorder=recorder,
        )
        return await agent.run(args.task, wc=wc)
    finally:
        await source.aclose()
