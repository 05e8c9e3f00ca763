"""MaxInput and MaxOutput: size limits on what is sent and what is answered."""

from __future__ import annotations

from collections.abc import Sequence

from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core.plugin import Guard
from agentkit_core.plugin import GuardDecision
from agentkit_core.plugin import GuardInput
from agentkit_core.plugin import estimate_message


def _limit(value: object, name: str, guard: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"guard {guard!r}: {name}={value!r} must be a whole number of at least 1",
            value=value,
            source=f"guard_options[{guard!r}]",
        )
    return value


class MaxInput(Guard):
    """Refuses a request over ``max_tokens`` (agentkit's estimate, ``estimate_tokens``).

    The whole request is measured once, on the first message the pass gives it; instruction
    parts on their own are not measured (they are, joined, in the request). The reason says the
    request's estimate and the limit. The estimate is a pure function of the messages, and a
    conversation's request repeats the last one's messages before its new ones, so the guard
    keeps the last request's total and adds only what is new.
    """

    name = "max-input"
    measures_request = True
    measures_only = True

    def __init__(self, max_tokens: int = 100_000) -> None:
        self.max_tokens = _limit(max_tokens, "max_tokens", self.name)
        #: The last request measured, how many messages it has, and its estimate.
        self._last: tuple[Sequence[Message], int, int] = ((), 0, 0)

    def check_input(self, inp: GuardInput) -> GuardDecision:
        """Measure the whole request at its first message with text.

        A request that extends the last one adds its new messages' estimates to that total.
        """
        if not inp.first:
            return GuardDecision.ALLOW
        messages = inp.messages
        before, count, tokens = self._last
        if inp.extends(before):
            new = messages[count:]
            tokens += sum(map(estimate_message, new))
            count += len(new)
        else:
            tokens, count = sum(map(estimate_message, messages)), len(messages)
        self._last = (messages, count, tokens)
        if tokens <= self.max_tokens:
            return GuardDecision.ALLOW
        return GuardDecision.block(
            f"the request is about {tokens} tokens, over max_tokens={self.max_tokens}"
        )


class MaxOutput(Guard):
    """Refuses an answer longer than ``max_chars`` characters, saying its length and the limit."""

    name = "max-output"

    def __init__(self, max_chars: int = 20_000) -> None:
        self.max_chars = _limit(max_chars, "max_chars", self.name)

    def check_output(self, message: Message) -> GuardDecision:
        """Measure the answer's text."""
        length = len(message.text)
        if length <= self.max_chars:
            return GuardDecision.ALLOW
        return GuardDecision.block(
            f"the answer is {length} characters, over max_chars={self.max_chars}"
        )
