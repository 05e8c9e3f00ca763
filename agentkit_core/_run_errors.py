"""The errors that stop a run: :class:`RunError` and its leaves.

They are part of the one hierarchy :mod:`agentkit_core._errors` draws and roots; they live a
floor above it because a run's error carries the run's messages (``.transcript``), and the
message model's own checks raise :class:`ConfigError` from below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._errors import AgentkitError

if TYPE_CHECKING:
    from ._messages import Message
    from ._messages import ToolCall


class RunError(AgentkitError, RuntimeError):
    """A run could not go on. ``.transcript`` keeps the messages so far where there are any."""

    def __init__(self, message: str, *, transcript: list[Message] | None = None) -> None:
        super().__init__(message)
        self.transcript = transcript if transcript is not None else []


class MaxTurnsExceeded(RunError):
    """The model was still asking for tools when the turn limit was reached."""


class BudgetExceeded(RunError):
    """A usage or token budget of the run was exhausted.

    ``run_id`` names the run whose budget it was (a child agent's or its parent's), when a
    run's context raised it. ``limit`` names the limit (``"cost"``, ``"tool call"``...),
    ``used`` says how much of it was used and ``about`` what was about to happen, when known.
    """

    run_id: str | None = None
    limit: str | None = None
    used: object = None
    about: str | None = None


class OutputValidationError(RunError):
    """Typed output was still invalid after the configured repair retries."""

    def __init__(
        self,
        message: str,
        *,
        raw: str = "",
        errors: list[str] | None = None,
        transcript: list[Message] | None = None,
    ) -> None:
        super().__init__(message, transcript=transcript)
        self.raw = raw
        self.errors = errors or []


class ToolTimeoutError(RunError, TimeoutError):
    """A tool did not return within its timeout."""


class StepTimeoutError(RunError, TimeoutError):
    """A run executor's step (a model call or a tool call) overran the executor's step timeout.

    ``.step`` names the step (``"model:2"``, ``"tool:search:call_1"``), ``.timeout`` the limit.
    """

    def __init__(self, message: str, *, step: str, timeout: float) -> None:
        super().__init__(message)
        self.step = step
        self.timeout = timeout


class PendingToolCallError(RunError):
    """A request would end on tool calls whose results are not in yet; ``.calls`` are they."""

    def __init__(
        self,
        message: str,
        *,
        calls: tuple[ToolCall, ...] = (),
        transcript: list[Message] | None = None,
    ) -> None:
        super().__init__(message, transcript=transcript)
        self.calls = calls


class FoldError(RunError):
    """A summary the fold cannot use; the fold records it and sends the transcript whole.

    A custom summarizer may raise it to say why it has no summary.
    """


class ElicitationError(RunError):
    """A question for a person could not be asked or was declined."""
