"""agentkit as in bench_agentkit.py, with one plain-function hook on every contested field.

Each hook has no opinion (returns None; the tool-call hook allows), so the run is the same and
the difference to the row without hooks is what the folds cost: calling each hook with the
arguments it names, timing it, and checking what it returns.
"""

from __future__ import annotations

import functools

from bench_agentkit import make
from common import main

from agentkit_core import Hooks

HOOKS = Hooks.of(
    "bench",
    before_model_call=lambda request: None,
    before_tool_call=lambda call: "allow",
    after_tool_call=lambda result: None,
    output_guard=lambda message: None,
    should_stop_after_turn=lambda turn: None,
    before_turn=lambda info: None,
    transform=lambda transcript: None,
)

if __name__ == "__main__":
    main(functools.partial(make, hooks=HOOKS), "agentkit + 7 hooks", "agentkit-core")
