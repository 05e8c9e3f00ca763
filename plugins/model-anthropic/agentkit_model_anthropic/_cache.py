"""Prompt caching: where a request's ``cache_control`` breakpoints go.

The API caches the prefix of a request up to a block marked ``cache_control``, in the order
tools, system, messages, and takes at most :data:`MAX_BREAKPOINTS` marks per request. agentkit's
RequestBuilder keeps the leading system messages (prompt, grounding, schema block) bit-identical
across turns, and a run only appends to its transcript, so three marks cover it:

1. the end of the stable prefix: the last ``system`` block (else the last tool), read on every
   request of the run and of later runs with the same prompt;
2. the end of the previous turn: the last block before the newest assistant answer, where the
   previous request's third mark was, so this request reads what that one wrote however many
   blocks were added since (the API looks back only 20 blocks from a mark);
3. the end of this request: its last block, written for the next request to read.

Marks a caller already put on blocks (content parts with their own ``cache_control``) count
against the limit; ours give way from the last of the list above.
"""

from __future__ import annotations

from typing import Any

#: The API's limit of ``cache_control`` marks in one request.
MAX_BREAKPOINTS = 4
#: Blocks the API does not let carry a mark.
_UNMARKABLE = frozenset({"thinking", "redacted_thinking"})


def place_breakpoints(body: dict[str, Any], mark: dict[str, Any]) -> None:
    """Put ``mark`` (``{"type": "ephemeral", ...}``) on the request body's breakpoints, in place.

    The body's message content must already be lists of blocks the body owns (not shared).
    """
    taken = _count_marks(body)
    targets: list[dict[str, Any]] = []
    prefix = _last_markable(body.get("system") or []) or _last_markable(body.get("tools") or [])
    if prefix is not None:
        targets.append(prefix)
    messages = body.get("messages") or []
    answers = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if answers and answers[-1] > 0:
        previous = _last_block(messages, answers[-1] - 1)
        if previous is not None:
            targets.append(previous)
    if messages:
        last = _last_block(messages, len(messages) - 1)
        if last is not None:
            targets.append(last)
    room = MAX_BREAKPOINTS - taken
    for block in targets[: max(room, 0)]:
        if "cache_control" not in block:
            block["cache_control"] = dict(mark)


def _last_markable(blocks: list[dict[str, Any]]) -> dict[str, Any] | None:
    found: dict[str, Any] | None = next(
        (b for b in reversed(blocks) if b.get("type") not in _UNMARKABLE and b.get("text") != ""),
        None,
    )
    return found


def _last_block(messages: list[dict[str, Any]], index: int) -> dict[str, Any] | None:
    """The last markable block of ``messages[index]``, its string content made a text block."""
    message = messages[index]
    content = message["content"]
    if isinstance(content, str):
        if not content:
            return None
        content = message["content"] = [{"type": "text", "text": content}]
    return _last_markable(content)


def _count_marks(body: dict[str, Any]) -> int:
    blocks = [*(body.get("tools") or ()), *(body.get("system") or ())]
    for message in body.get("messages") or ():
        if isinstance(message["content"], list):
            blocks += message["content"]
    return sum(1 for b in blocks if isinstance(b, dict) and "cache_control" in b)
