"""pydantic-ai's side: constructing the equivalent Agent (test model, instructions, three tools).

Timed with the tools already built as ``Tool`` objects, and with plain functions it wraps.

Prints one JSON line with the median microseconds over ``rounds`` rounds of ``n`` calls.
"""

from __future__ import annotations

import json
import sys

from common import instructions
from common import median_us
from common import tool_functions
from pydantic_ai import Agent
from pydantic_ai import Tool
from pydantic_ai.models.test import TestModel


def main() -> None:
    n, rounds = int(sys.argv[1]), int(sys.argv[2])

    prebuilt = [Tool(f) for f in tool_functions()]

    def construct() -> Agent[None, str]:
        return Agent(TestModel(), instructions=instructions(), tools=prebuilt)

    def construct_wrapping() -> Agent[None, str]:
        return Agent(TestModel(), instructions=instructions(), tools=list(tool_functions()))

    construct()
    construct_wrapping()
    result = {
        "construct": median_us(construct, n, rounds),
        "construct_wrapping": median_us(construct_wrapping, n, rounds),
    }
    print(json.dumps(result))


if __name__ == "__main__":
    main()
