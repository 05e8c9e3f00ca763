"""The command conformance suite: what every plugin adding ``agentkit`` subcommands must do.

Subclass it in a test module with a name starting ``Test`` and give it ``make_plugin``, the
plugin's module (the one with ``agentkit_register_commands``)::

    class TestMyCommands(CommandConformance):
        def make_plugin(self) -> ModuleType:
            import agentkit_myplugin

            return agentkit_myplugin

It builds the real ``agentkit`` parser on a manager holding the plugin alone, and holds the
plugin to this: its commands are added without a problem (no built-in name taken, nothing
raised); each command and subcommand answers ``--help``, naming itself; each one a user can
run has a handler (``set_defaults(func=...)``); and a wrong option is the one-line usage error
every built-in command gives, exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import re
from collections.abc import Iterator
from types import ModuleType

from .._plugins import PluginManager
from ..cli import build_parser
from ..cli import main


class CommandConformance:
    """Contract tests for a plugin's ``agentkit_register_commands``; subclass, define one."""

    def make_plugin(self) -> ModuleType:
        raise NotImplementedError("define make_plugin() in the conformance subclass")

    def _manager(self) -> PluginManager:
        return PluginManager(entry_points=False, plugins=[self.make_plugin()])

    def _commands(self) -> list[tuple[list[str], argparse.ArgumentParser]]:
        """Each command path the plugin added (``["mcp", "serve"]``) with its parser."""
        manager = self._manager()
        top = _subparsers(build_parser(manager))
        assert top is not None
        ours = [n for info in manager.plugins() for n in info.commands]
        assert ours, "the plugin added no command: call cli.add_parser(...) in the hook"
        return [found for name in ours for found in _walk([name], top.choices[name])]

    def test_its_commands_are_added_without_a_problem(self) -> None:
        manager = self._manager()
        build_parser(manager)
        problems = [w for w in manager.warnings if "command" in w]
        assert problems == [], f"adding the plugin's commands: {problems}"

    def test_every_command_answers_help_naming_itself(self) -> None:
        for path, _ in self._commands():
            code, out, _ = _run([*path, "--help"], self._manager())
            assert code == 0, f"agentkit {' '.join(path)} --help exited {code}"
            assert f"agentkit {' '.join(path)}" in out, f"--help of {path} does not name it"

    def test_every_command_a_user_can_run_has_a_handler(self) -> None:
        for path, parser in self._commands():
            if _is_group(parser):
                continue  # it only holds subcommands: argparse asks for one
            handler = parser.get_default("func")
            assert callable(handler), (
                f"agentkit {' '.join(path)} has no handler: set_defaults(func=handler), where "
                "handler(args) returns the exit code"
            )

    def test_a_wrong_option_is_a_one_line_usage_error(self) -> None:
        """Exit code 2 and one line pointing at a ``--help``, as the built-in commands give."""
        option = "--agentkit-conformance-no-such-option"
        for path, _ in self._commands():
            code, _, err = _run([*path, option], self._manager())
            command = f"agentkit {' '.join(path)}"
            assert code == 2, f"{command} {option} exited {code}"
            lines = err.strip().splitlines()
            assert len(lines) == 1 and re.fullmatch(r"agentkit.*: error: .* --help\)", lines[0]), (
                f"the usage error of {command} is not the one line built-ins give: {err!r}; "
                "add parsers with cli.add_parser (and add_subparsers under them), which make "
                "parsers of the host's class"
            )


def _is_group(parser: argparse.ArgumentParser) -> bool:
    sub = _subparsers(parser)
    return sub is not None and sub.required


def _subparsers(
    parser: argparse.ArgumentParser,
) -> argparse._SubParsersAction[argparse.ArgumentParser] | None:
    return next((a for a in parser._actions if isinstance(a, argparse._SubParsersAction)), None)


def _walk(
    path: list[str], parser: argparse.ArgumentParser
) -> Iterator[tuple[list[str], argparse.ArgumentParser]]:
    yield path, parser
    sub = _subparsers(parser)
    for name, child in ({} if sub is None else sub.choices).items():
        yield from _walk([*path, name], child)


def _run(argv: list[str], manager: PluginManager) -> tuple[int, str, str]:
    """``agentkit *argv`` in this process: its exit code, standard output and error."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv, manager=manager)
        except SystemExit as exc:  # argparse's --help and usage errors
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()
