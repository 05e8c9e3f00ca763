"""A sample agentkit plugin: an instruction part, a before_turn reminder, a command."""

from __future__ import annotations

import argparse
from typing import Any

from agentkit_core import Message
from agentkit_core import TextPart
from agentkit_core import hookimpl

AGENTKIT_PRIORITY = 5


def greeting_part(**options: Any) -> TextPart:
    """The instruction part; ``who`` names the person greeted."""
    text = f"Greet {options.get('who', 'the user')} politely."
    return TextPart(text, id="greeting", source="greeting")


@hookimpl
def agentkit_register_instruction_parts(register: Any) -> None:
    register("greeting", greeting_part)


@hookimpl
def agentkit_before_turn(ctx: Any, info: Any) -> list[Message]:
    return [Message.user("(reminder: be polite)")]


def _greet(args: argparse.Namespace) -> int:
    print(f"hello, {args.name}")
    return 0


@hookimpl
def agentkit_register_commands(cli: Any) -> None:
    greet = cli.add_parser("greet", help="print a greeting")
    greet.add_argument("name", nargs="?", default="world")
    greet.set_defaults(func=_greet)
