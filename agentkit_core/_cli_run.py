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
        default=os.environ.get("AGENTKIT_MODEL"),
        help="a model string such as openai:gpt-4o-mini (default: $AGENTKIT_MODEL, else TestModel)",
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


def _run(args: argparse.Namespace) -> int:
    import json

    from ._agent import Agent

    tools: list[Any] = []
    for spec in args.tools:
        obj = load_object(spec, "--tools")
        tools.extend(obj if isinstance(obj, list | tuple) else [obj])
    output = load_object(args.output, "--output") if args.output else None
    if args.model is None:
        print("agentkit: no model configured; running on the built-in TestModel "
              "(pass --model or set AGENTKIT_MODEL)", file=sys.stderr)  # fmt: skip
    agent = Agent(
        "cli",
        args.model,
        args.prompt,
        tools,
        output=output,
        max_turns=args.max_turns,
    )
    if args.mcp:
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


async def _run_with_mcp(args: argparse.Namespace, tools: list[Any], output: Any) -> Any:
    """Run with the ``--mcp`` servers' tools, from the installed "mcp" tool source, offered too."""
    from ._agent import Agent
    from ._agent import _as_tool
    from ._toolunion import ToolUnion

    source = args.plugin_manager.lookup("tool_sources", "mcp").value(args.mcp)
    try:
        given = [_as_tool(t) for t in tools]
        union = await ToolUnion.create([("--tools", given), (source.label, source)])
        agent = Agent(
            "cli", args.model, args.prompt, union, output=output, max_turns=args.max_turns
        )
        return await agent.run(args.task)
    finally:
        await source.aclose()
