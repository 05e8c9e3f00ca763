"""The command conformance suite passes a plugin whose commands behave as the built-ins do, and
fails one that takes a built-in's name, leaves a command without a handler, or answers a wrong
option with argparse's own multi-line usage."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from agentkit_core import hookimpl
from agentkit_core.testing import CommandConformance


def plugin(name: str, add: Callable[[Any], None]) -> ModuleType:
    module = ModuleType(name)

    @hookimpl
    def agentkit_register_commands(cli: Any) -> None:
        add(cli)

    module.agentkit_register_commands = agentkit_register_commands  # type: ignore[attr-defined]
    return module


def _hello(args: argparse.Namespace) -> int:
    print("hello")
    return 0


def good(cli: Any) -> None:
    group = cli.add_parser("greet", help="greetings")
    sub = group.add_subparsers(dest="greet_command", metavar="SUBCOMMAND", required=True)
    hello = sub.add_parser("hello", help="say hello")
    hello.add_argument("--loud", action="store_true")
    hello.set_defaults(func=_hello)


def takes_run(cli: Any) -> None:
    cli.add_parser("run", help="another run").set_defaults(func=_hello)


def no_handler(cli: Any) -> None:
    cli.add_parser("greet", help="greetings")


def plain_argparse(cli: Any) -> None:
    group = cli.add_parser("greet", help="greetings")
    sub = group.add_subparsers(required=True, parser_class=argparse.ArgumentParser)
    hello = sub.add_parser("hello")
    hello.add_argument("name")  # missing, argparse's own parser prints its usage block
    hello.set_defaults(func=_hello)


class TestGoodCommands(CommandConformance):
    def make_plugin(self) -> ModuleType:
        return plugin("agentkit_greet", good)


@pytest.mark.parametrize(
    ("add", "test", "message"),
    [
        (takes_run, "test_its_commands_are_added_without_a_problem", "already taken"),
        (no_handler, "test_every_command_a_user_can_run_has_a_handler", "no handler"),
        (plain_argparse, "test_a_wrong_option_is_a_one_line_usage_error", "one line"),
    ],
)
def test_the_suite_fails_commands_that_break_the_contract(
    add: Callable[[Any], None], test: str, message: str
) -> None:
    class Broken(CommandConformance):
        def make_plugin(self) -> ModuleType:
            return plugin("agentkit_broken", add)

    with pytest.raises(AssertionError, match=message):
        getattr(Broken(), test)()
