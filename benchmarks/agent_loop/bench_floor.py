"""The floor: a bare asyncio loop over dicts, the least any agent loop can do per turn."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Any

from common import ANSWER
from common import REC
from common import main
from common import tools


async def model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    planned = REC.step()
    if planned is None:
        reply: dict[str, Any] = {"role": "assistant", "content": ANSWER}
    else:
        name, args = planned
        call = {"id": f"call_{len(REC.model_in)}", "name": name, "arguments": json.dumps(args)}
        reply = {"role": "assistant", "content": None, "tool_calls": [call]}
    REC.model_done()
    return reply


def make(kind: str) -> Callable[[int], Awaitable[object]]:
    table = {fn.__name__: fn for fn in tools(kind)}

    async def run(turns: int) -> object:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
        while True:
            reply = await model(messages)
            messages.append(reply)
            if not reply.get("tool_calls"):
                return reply["content"]
            for call in reply["tool_calls"]:
                out = table[call["name"]](**json.loads(call["arguments"]))
                if inspect.isawaitable(out):
                    out = await out
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(out)})

    return run


if __name__ == "__main__":
    main(make, "plain asyncio loop", None)
