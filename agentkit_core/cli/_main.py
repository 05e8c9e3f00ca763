"""The ``agentkit`` command line (argparse; startup time matters, so imports stay lazy).

Built-in command groups live in the modules of :data:`_BUILTIN_COMMANDS`, each exposing
``add_commands(subparsers)``; plugins add theirs through ``agentkit_register_commands``. A
command's handler is ``func(args) -> int`` set with ``set_defaults(func=...)``; it finds the
loaded plugin manager as ``args.plugin_manager``.

Every error is one line on stderr and exit code 2, never a traceback: a usage error, an
:class:`~agentkit_core.AgentkitError`, and anything else a command raises (named by its type;
``AGENTKIT_TRACEBACK=1`` shows the traceback of the unexpected ones). Ctrl-C is one line too
(naming the plugin when it came while one was imported) and exit 130. A Python warning raised
while a command runs (a ``SlowHookWarning``, a library's ``DeprecationWarning``) is one
``agentkit: warning: ...`` line on stderr; the warning filters (``-W``, ``PYTHONWARNINGS``)
still decide which are shown.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import NoReturn
from typing import TextIO

if TYPE_CHECKING:
    from .._plugins import PluginManager

#: Each built-in command and the module that adds it with ``add_commands(subparsers)``.
_BUILTIN_COMMANDS: dict[str, str] = {
    "plugins": "agentkit_core.cli._plugins",
    "run": "agentkit_core.cli._run",
    "chat": "agentkit_core.cli._chat",
    "serve": "agentkit_core.cli._serve",
    "sessions": "agentkit_core.cli._sessions",
    "memory": "agentkit_core.cli._memory",
    "view": "agentkit_core.cli._view",
}


class Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line naming the fix, not the usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def build_parser(
    manager: PluginManager | None = None, *, command: str | None = None
) -> argparse.ArgumentParser:
    """The parser with the built-in commands and, given a manager, every plugin's commands.

    Given ``command``, a built-in one, only that command's module is imported (the others get
    an empty parser, so a plugin still cannot take their names): one command's run never pays
    for building every other command's options. Without it (``--help``) every one is built.
    """
    from .. import __version__

    parser = Parser(prog="agentkit", description="agentkit command line")
    parser.add_argument("--version", action="version", version=f"agentkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module_name in _BUILTIN_COMMANDS.items():
        if command in (None, name):
            importlib.import_module(module_name).add_commands(sub)
        else:
            sub.add_parser(name)
    if manager is not None:
        manager.add_commands(sub, prog=parser.prog)
    return parser


def main(argv: Sequence[str] | None = None, *, manager: PluginManager | None = None) -> int:
    """Run the command line; returns the exit code (2 for a usage or plugin error)."""
    from ._terminal import terminals_shown

    # restores showwarning and the streams, so a caller's own are untouched
    with warnings.catch_warnings(), terminals_shown():
        warnings.showwarning = _show_warning
        return _main(argv, manager)


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: TextIO | None = None,
    line: str | None = None,
) -> None:
    """A warning as the CLI's one line; one of another library's says its category."""
    text = _one_line(str(message))
    if not category.__module__.startswith("agentkit"):
        text = f"{category.__name__}: {text}"
    print(f"agentkit: warning: {text}", file=sys.stderr)


def _main(argv: Sequence[str] | None, manager: PluginManager | None) -> int:
    from .._errors import AgentkitError

    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the manager records them; printed below
            from .._plugins import manager_or_default

            manager = manager_or_default(manager)
            parser = build_parser(manager, command=_builtin_command(arguments))
    except AgentkitError as exc:
        print(f"agentkit: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:  # Ctrl-C while plugins were imported: it names the plugin
        return _interrupted(exc)
    if "--json" not in arguments:  # before parsing, which may exit; --json carries its own
        for message in manager.warnings:
            print(f"agentkit: warning: {message}", file=sys.stderr)
    try:
        args = parser.parse_args(arguments)
    except SystemExit as exc:  # a usage error (printed already), --help or --version
        return exc.code if isinstance(exc.code, int) else 0
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return 0
    args.plugin_manager = manager
    try:
        return int(func(args) or 0)
    except AgentkitError as exc:
        print(f"agentkit: error: {_one_line(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # output piped into `head` and closed: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except KeyboardInterrupt as exc:
        return _interrupted(exc)
    except Exception as exc:
        if os.environ.get("AGENTKIT_TRACEBACK", "").strip() not in ("", "0"):
            raise
        print(
            f"agentkit: error: {type(exc).__name__}: {_one_line(str(exc))} (unexpected; "
            "AGENTKIT_TRACEBACK=1 shows where it came from)",
            file=sys.stderr,
        )
        return 2


def _builtin_command(arguments: list[str]) -> str | None:
    """The built-in command the arguments name first; None (build all) for anything else.

    The top-level options (``--help``, ``--version``) take no value, so a command is the
    first argument; one after an option is left to argparse with every command built.
    """
    first = arguments[0] if arguments else None
    return first if first in _BUILTIN_COMMANDS else None


def _interrupted(exc: KeyboardInterrupt) -> int:
    """Ctrl-C: one line (what was interrupted, when it says) and exit 130, as shells use."""
    print(f"agentkit: {_one_line(str(exc)) or 'interrupted'}", file=sys.stderr)
    return 130


def _one_line(text: str) -> str:
    """``text`` on one line: a message spanning lines would read as several errors."""
    return " ".join(text.split())
