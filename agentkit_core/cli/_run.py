"""``agentkit run``: run an agent on a task from the command line.

The agent is assembled by :class:`~agentkit_core.Kit`, from the kit settings of the project's
configuration file (the ``[kit]`` table of the nearest ``agentkit.toml``, or
``[tool.agentkit.kit]`` of a ``pyproject.toml``; ``AGENTKIT_CONFIG`` names another file) with
the command-line options on top. So ``agentkit run`` builds the agent a program building
``Kit.from_file(...)`` would, and a compactor, a guardrail or instruction parts configured in
the file apply here too.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from .._errors import ConfigError
from .._run_errors import MaxTurnsExceeded
from .._settings import check_settings
from ._show import add_show_arguments
from ._show import check_show_arguments
from ._show import run_and_show

if TYPE_CHECKING:
    from ._stream import StreamPrinter


def _positive(value: str) -> int:
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise argparse.ArgumentTypeError(f"must be a whole number of at least 1, got {value!r}")
    return number


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    run = sub.add_parser(
        "run",
        help="run an agent on a task",
        description="Run an agent on a task. Kit settings come from the [kit] table of the "
        "project's agentkit.toml (or [tool.agentkit.kit] in pyproject.toml); options given "
        "here win.",
    )
    run.add_argument("task", nargs="?", default="", help="what the agent should do")
    add_agent_arguments(run)
    run.add_argument(
        "--attach",
        metavar="FILE",
        action="append",
        default=[],
        help="send FILE with the task (repeatable): an image, a PDF or audio, its media type "
        "from its suffix",
    )
    run.add_argument("--output", metavar="MODULE:TYPE", help="parse the answer into this type")
    run.add_argument(
        "--session",
        metavar="URL",
        help="record the conversation in this session store (sqlite:///sessions.db, ...); a "
        "new session's id is printed on stderr; with --resume ID, continue session ID at its "
        "leaf with TASK as the next message",
    )
    add_show_arguments(run)
    run.set_defaults(func=_run)


def add_agent_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options that build the agent (``--model``, ``--tools``, ``--prompt``...).

    What ``agentkit run`` takes besides the task; a plugin's command that runs agents (``agentkit
    worker``) adds the same, and :func:`kit_options_from_args` turns them, over the project
    file's kit settings, into Kit options.
    """
    added: list[argparse.Action] = []

    def add(*flags: str, **options: Any) -> None:
        added.append(parser.add_argument(*flags, **options))

    add(
        "--model",
        default=None,
        help="a model string such as openai:gpt-4o-mini (default: $AGENTKIT_MODEL, then the "
        "file's model; with none of them, a demo run on the built-in TestModel)",
    )
    add(
        "--tools",
        action="append",
        default=[],
        metavar="MODULE:ATTR",
        help="a tool, typed function or list of them to offer (repeatable)",
    )
    add(
        "--mcp",
        action="append",
        default=[],
        metavar="COMMAND",
        help="an MCP server (command line or URL) whose tools to offer, besides the file's "
        "(repeatable)",
    )
    add(
        "--compactor",
        metavar="NAME",
        help="an installed compactor (agentkit plugins list shows them); the file's "
        "compactor_options apply when the file names the same one",
    )
    add("--prompt", default=None, help="the system prompt (the file's instructions)")
    add("--max-turns", type=_positive, default=None, help="model calls allowed (default 10)")
    add("--temperature", type=float, help="the model's sampling temperature (ModelSettings)")
    add(
        "--max-tokens",
        type=int,
        metavar="N",
        help="the most tokens the model's answer may take (ModelSettings.max_tokens)",
    )
    # what a resume must pass again to build the same agent (a suspended run's hint)
    parser.set_defaults(agent_options=tuple((a.dest, a.option_strings[0]) for a in added))


def load_object(spec: str, what: str) -> Any:
    """The object ``module:attr`` names; the current directory is importable.

    Whatever importing the module raises becomes a ConfigError naming ``what`` and the module.
    """
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(
            f"{what} {spec!r} is not MODULE:ATTR (such as examples.tools:TOOLS)",
            value=spec,
            source=what,
        )
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"{what} {spec!r}: cannot import {module_name!r}: {exc}", value=spec, source=what
        ) from exc
    except Exception as exc:
        raise ConfigError(
            f"{what} {spec!r}: importing {module_name!r} raised {type(exc).__name__}: {exc}",
            value=spec,
            source=what,
        ) from exc
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(
                f"{what} {spec!r}: {module_name!r} has no {attr!r}", value=spec, source=what
            ) from None
    return obj


def file_kit_options(given: str | None = None) -> tuple[dict[str, Any], str]:
    """The kit settings of the project's configuration file, and where they were read.

    The file is ``given`` (``agentkit serve --kit``), else the one the plugin configuration
    comes from: ``AGENTKIT_CONFIG``, else the nearest ``agentkit.toml`` or ``pyproject.toml``.
    No file, or one without kit settings, gives ``({}, "")``. The whole file is checked (an
    unknown key anywhere is an error).
    """
    from .._config import find_config_file
    from .._config import read_config

    explicit = given or os.environ.get("AGENTKIT_CONFIG")
    path = Path(explicit) if explicit else find_config_file()
    if path is None:
        return {}, ""
    config = read_config(path)
    return (dict(config.kit), config.kit_where) if config.kit is not None else ({}, "")


def model_choice(given: str | None, options: dict[str, Any]) -> str:
    """``--model``, else ``AGENTKIT_MODEL``, else the file's model, else the labelled demo.

    The environment replaces the file's setting, as it does for every key. The demo is the one
    place the test model is chosen for the user.
    """
    if given:
        return given
    if "AGENTKIT_MODEL" in os.environ:
        value = os.environ["AGENTKIT_MODEL"].strip()
        if not value:
            raise ConfigError(
                "AGENTKIT_MODEL is set but empty; set it to a model string such as "
                "openai:gpt-4o-mini, or unset it",
                value="",
                source="AGENTKIT_MODEL",
            )
        return value
    if options.get("model"):
        model = options["model"]  # a list is a fallback chain: resolved as "a,b"
        return ",".join(model) if isinstance(model, list) else str(model)
    print(
        "agentkit: demo run on the built-in TestModel, which calls every tool with made-up "
        "arguments (pass --model or set AGENTKIT_MODEL for a real model)",
        file=sys.stderr,
    )
    return "test"


#: The options whose empty value would be read as left out: a weaker setting than the one asked
#: for (``--resume ""`` a new session, ``--session ""`` none recorded, ``--model ""`` the demo).
NOT_BLANK = (
    "--model",
    "--tools",
    "--mcp",
    "--compactor",
    "--session",
    "--resume",
    "--store",
    "--history",
    "--trace",
    "--output",
    "--attach",
    "--approve",
    "--deny",
)


def refuse_blank(args: argparse.Namespace, flags: tuple[str, ...] = NOT_BLANK) -> None:
    """Refuse each of ``flags`` the command line gave as empty (or blank) text, naming it."""
    for flag in flags:
        value = getattr(args, flag.lstrip("-").replace("-", "_"), None)
        for each in value if isinstance(value, list) else [value]:
            if isinstance(each, str) and not each.strip():
                raise ConfigError(
                    f"{flag} was given an empty value ({each!r}), which would be read as the "
                    f"option left out; give {flag} a value, or leave it out",
                    value=each,
                    source=flag,
                )


def kit_options_from_args(args: argparse.Namespace) -> dict[str, Any]:
    """The Kit options of a command: the project file's kit settings, then the command line.

    ``args`` holds what :func:`add_agent_arguments` added, and ``args.plugin_manager`` (the
    CLI sets it): the kit is built on that manager. An option given empty is refused
    (:func:`refuse_blank`).
    """
    refuse_blank(args)
    options, where = file_kit_options(getattr(args, "kit", None))
    options = dict(options)
    options["model"] = model_choice(args.model, options)
    options.setdefault("name", "cli")
    if args.prompt is not None:
        options["instructions"] = args.prompt
    if args.max_turns is not None:
        options["max_turns"] = args.max_turns
    given = {"temperature": args.temperature, "max_tokens": args.max_tokens}
    given = {key: value for key, value in given.items() if value is not None}
    if given:  # over the file's [kit.settings], key by key
        check_settings(given, "agentkit run's --temperature/--max-tokens")
        options["settings"] = {**(options.get("settings") or {}), **given}
    if args.compactor is not None:
        if options.get("compactor") != args.compactor:
            options.pop("compactor_options", None)  # they were for the file's compactor
        options["compactor"] = args.compactor
    if args.mcp:
        options["mcp"] = [*(options.get("mcp") or ()), *args.mcp]
    tools: list[Any] = []
    for spec in args.tools:
        obj = load_object(spec, "--tools")
        tools.extend(obj if isinstance(obj, list | tuple) else [obj])
    if tools:
        options["tools"] = tools
    options["manager"] = args.plugin_manager
    args.kit_source = where
    check_file_plugin_options(options, where)
    return options


def check_file_plugin_options(
    options: dict[str, Any], where: str, *, returned: bool = False
) -> None:
    """The file's ``compactor_options`` and ``guard_options`` against what each plugin takes.

    Before the kit calls the factories (and, with ``returned``, after one raised TypeError:
    see :func:`~agentkit_core._lookup.check_plugin_options`), so a key a plugin does not take
    is one error naming the key, the table of the file it is in and the nearest key the plugin
    takes.
    """
    from .._lookup import check_plugin_options
    from .._tables import table_where

    if not where:  # no file: options given in code are the code's business
        return
    manager = options["manager"]
    compactor = options.get("compactor")
    if compactor and options.get("compactor_options"):
        reg = manager.lookup("compactors", compactor)
        table = f"{table_where(where, 'compactor_options')} (compactor {compactor!r})"
        check_plugin_options(reg, options["compactor_options"], table, returned=returned)
    guard_options = options.get("guard_options") or {}
    for name in options.get("guards") or ():
        if isinstance(name, str) and guard_options.get(name):
            reg = manager.lookup("guards", name)
            table = f"{table_where(table_where(where, 'guard_options'), name)} (guard {name!r})"
            check_plugin_options(reg, guard_options[name], table, returned=returned)


def _run(args: argparse.Namespace) -> int:
    refuse_blank(args)
    check_show_arguments(args)
    if (args.session or not args.resume) and not args.task.strip() and not args.attach:
        raise ConfigError(
            'the task is empty; say what the agent should do, as in agentkit run "What is 6 * 7?"',
            value=args.task,
            source="TASK",
        )
    options = kit_options_from_args(args)
    if args.session:
        options["session"] = args.session
        if args.resume:
            options["resume"] = args.resume
    output = load_object(args.output, "--output") if args.output else None
    import asyncio  # here, not at the top: listing plugins builds this parser

    try:
        return asyncio.run(_run_kit(args, options, output))
    except MaxTurnsExceeded as exc:
        limit = options.get("max_turns", 10)
        raise ConfigError(
            f"the agent reached --max-turns {limit} with the model still calling tools; "
            "pass a larger --max-turns (or set max_turns in the [kit] table of "
            "agentkit.toml), or give a task with a clearer end",
            value=limit,
            source="--max-turns",
        ) from exc


async def _run_kit(args: argparse.Namespace, options: dict[str, Any], output: Any) -> int:
    """Build the kit (connecting its tool sources and session), run the agent, close the kit."""
    from .._agent import Agent
    from .._kit import Kit
    from ._attach import attached_task
    from ._stream import stream_run

    try:
        opened = await Kit.open(**options)
    except TypeError:  # a plugin's factory refused an option of the file: name it, if so
        check_file_plugin_options(options, args.kit_source, returned=True)
        raise
    async with opened as kit:
        if kit.session_id:
            _tell_session(args, kit)
        wc = kit.working_context() if args.session else None

        def make_agent(checkpointer: Any, exporters: list[Any]) -> Agent:
            return Agent.from_config(
                kit.config(),
                output=output,
                checkpointer=checkpointer,
                exporters=exporters,
            )

        task = attached_task(args.task, args.attach)

        async def run(agent: Agent, printer: StreamPrinter | None) -> Any:
            if printer is None:
                return await agent.run(task, wc=wc)
            return await stream_run(agent.run_stream_events(task, wc=wc), printer)

        return await run_and_show(args, make_agent, run)


def _tell_session(args: argparse.Namespace, kit: Any) -> None:
    """A new session's id on stderr; for a resumed one, the calls its leaf left waiting."""
    if not args.resume:
        print(f"agentkit: session {kit.session_id}", file=sys.stderr)
        return
    held = kit.recorder.state.held
    if held:
        calls = ", ".join(f"{c.id} {c.name}" for c in held)
        print(
            f"agentkit: session {args.resume} had calls waiting for approval at its leaf "
            f"({calls}); this message leaves them unanswered",
            file=sys.stderr,
        )
