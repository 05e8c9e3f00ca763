"""The shared workload: a policy of N rules, and the batch of calls each side decides.

Every tool ``tool_<i>`` (and ``bash``) runs without a person only for a read-only git
command (``git status``, ``git log``, word by word); ``git push`` is denied. The decided batch
is three calls that are all read-only, so neither side stops for a person: what is timed is
the decision, which is all the middleware does on its way.
"""

from __future__ import annotations

import json

SIZES = (10, 100, 1_000)
READ_ONLY = (("git", "status"), ("git", "log"))
BATCH = (
    ("c1", "bash", {"command": "git status -s"}),
    ("c2", "bash", {"command": "git log --oneline -5"}),
    ("c3", "tool_{middle}", {"command": "git status"}),
)


def tools(size: int) -> list[str]:
    """The tool names a policy of ``size`` rules covers: ``bash`` and ``tool_<i>``."""
    return ["bash", *(f"tool_{i}" for i in range(size - 1))]


def batch(size: int) -> list[tuple[str, str, dict[str, str]]]:
    """The calls decided, the third one of a tool in the middle of the policy."""
    return [(cid, name.format(middle=size // 2), args) for cid, name, args in BATCH]


def policy_toml(size: int) -> str:
    """The policy as agentkit's rules engine reads it: an allow rule per tool, one deny."""
    rules = [
        '[[rules]]\nid = "no-push"\nverdict = "deny"\ntool = "bash"\n'
        'match = { command = { prefix = ["git push"] } }\n'
    ]
    for name in tools(size)[: size - 1]:
        rules.append(
            f'[[rules]]\nid = "read-{name}"\nverdict = "allow"\ntool = "{name}"\n'
            'match = { command = { prefix = ["git status", "git log"] } }\n'
        )
    return 'default = "ask"\n\n' + "\n".join(rules)


def arguments(args: dict[str, str]) -> str:
    return json.dumps(args)
