"""What both sides share: the prompt, the tools, and the timer."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from typing import Any


def instructions() -> str:
    return "You are a release assistant. Be brief; cite the files you read."


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def echo(text: str) -> str:
    """Repeat the text back."""
    return text


def upper(text: str) -> str:
    """The text in capitals."""
    return text.upper()


def tool_functions() -> tuple[Callable[..., Any], ...]:
    return (add, echo, upper)


def tools() -> list[Any]:
    from agentkit_core import tool

    return [tool(f) for f in tool_functions()]


def median_us(fn: Callable[[], object], n: int, rounds: int) -> float:
    """Median over rounds of the mean time of ``n`` calls, in microseconds (collector off)."""
    means = []
    for _ in range(rounds):
        gc.collect()
        gc.disable()
        try:
            start = time.perf_counter()
            for _ in range(n):
                fn()
            means.append((time.perf_counter() - start) / n * 1e6)
        finally:
            gc.enable()
    return statistics.median(means)
