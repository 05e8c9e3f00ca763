"""The ``agentkit`` command line: every built-in subcommand, the run viewer, ``plugins new``.

The top floor of the core (docs/architecture.md): it may import any floor, and no floor
imports it (the ``agentkit_core`` door, beside the floors, re-exports a few of its names).
Each built-in command group is a private module here with ``add_commands(subparsers)``; a
plugin adds its own through ``agentkit_register_commands``, and builds its options with the
helpers below (executor-dbos's ``worker`` takes the same agent options as ``agentkit run``
through :func:`add_agent_arguments`).

Names load their module on first use, so importing this package (as ``agentkit_core.TraceFile``
does) costs no argparse and no command module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .._lazy import lazy_attributes

if TYPE_CHECKING:
    from ._main import build_parser as build_parser
    from ._main import main as main
    from ._run import add_agent_arguments as add_agent_arguments
    from ._run import file_kit_options as file_kit_options
    from ._run import kit_options_from_args as kit_options_from_args
    from ._serve import serve_asgi as serve_asgi
    from ._trace_file import TraceFile as TraceFile
    from ._trace_file import read_trace_file as read_trace_file

#: Public name -> the private module defining it, imported on first access.
_LAZY = {
    "build_parser": "._main",
    "main": "._main",
    "add_agent_arguments": "._run",
    "file_kit_options": "._run",
    "kit_options_from_args": "._run",
    "serve_asgi": "._serve",
    "TraceFile": "._trace_file",
    "read_trace_file": "._trace_file",
}

__all__ = [
    "TraceFile",
    "add_agent_arguments",
    "build_parser",
    "file_kit_options",
    "kit_options_from_args",
    "main",
    "read_trace_file",
    "serve_asgi",
]

if not TYPE_CHECKING:  # type checkers see the imports above only, so a misspelt name fails
    __getattr__ = lazy_attributes(__name__, _LAZY)
