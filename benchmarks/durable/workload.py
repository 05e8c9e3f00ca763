"""The durable benchmarks' shared workload: N turns, each one model call and one tool call.

The model answers as a function of the request (a tool call while fewer than ``TURNS`` answers
are in it, then the final text), the tool adds two numbers: the work inside each step is next to
nothing, so what is measured is what running a step durably costs.
"""

from __future__ import annotations

#: Turns per run: each a model call and a tool call (2 steps), then one last model call.
TURNS = 10
#: Steps per run.
STEPS = 2 * TURNS + 1
#: Runs per measured round.
RUNS = 10
#: Rounds, alternated between the contenders.
ROUNDS = 5


def model_answer(answers_so_far: int) -> tuple[str, dict[str, int]] | str:
    """The model's answer after ``answers_so_far`` answers: a call of ``add``, or the text."""
    if answers_so_far < TURNS:
        return ("add", {"a": answers_so_far, "b": 1})
    return f"added {TURNS} times"


def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
