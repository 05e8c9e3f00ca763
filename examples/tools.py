"""A few real tools for the example agent: arithmetic, word counts, the time, file reading.

Run them on a labelled demo run of the built-in TestModel (no API key needed)::

    agentkit run "What is 6 * 7?" --tools examples.tools:TOOLS

or against a real model with ``--model openai:gpt-4o-mini`` and ``OPENAI_API_KEY`` set.
"""

from __future__ import annotations

import ast
import datetime as dt
import operator
from pathlib import Path
from typing import Annotated

from pydantic import Field

from agentkit_core import tool

_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
    ast.USub: operator.neg,
}


def _eval(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(node.operand))
    raise ValueError(f"not plain arithmetic: {ast.unparse(node)}")


@tool(side_effects=False)
def calculate(
    expression: Annotated[str, Field(examples=["6 * 7"])],
) -> float:
    """Evaluate an arithmetic expression (+ - * / ** %, parentheses).

    Args:
        expression: the arithmetic to evaluate, e.g. "(2 + 3) * 4"
    """
    return _eval(ast.parse(expression, mode="eval").body)


@tool(side_effects=False)
def word_count(text: Annotated[str, Field(examples=["the quick brown fox"])]) -> int:
    """Count the words in a text.

    Args:
        text: the text to count
    """
    return len(text.split())


@tool(side_effects=False)
def utc_now() -> str:
    """The current date and time in UTC, ISO 8601."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


@tool(side_effects=False, blocking=True)
def read_text_file(path: Annotated[str, Field(examples=["README.md"])]) -> str:
    """Read a UTF-8 text file below the current directory (at most 20,000 characters).

    Args:
        path: a relative path
    """
    target = (Path.cwd() / path).resolve()
    if Path.cwd().resolve() not in target.parents:
        raise ValueError(f"{path!r} is outside the working directory")
    return target.read_text(encoding="utf-8")[:20_000]


TOOLS = [calculate, word_count, utc_now, read_text_file]
