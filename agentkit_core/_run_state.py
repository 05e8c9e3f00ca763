"""What a run returns (:class:`AgentResult`) and what it keeps to go on (:class:`RunState`).

A RunState is what an agent's checkpoint holds; :func:`restored` reads one back, checked.
"""

from __future__ import annotations

from dataclasses import field
from dataclasses import fields
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

from ._messages import Message
from ._messages import ToolCall
from ._messages import Usage
from ._records import record

if TYPE_CHECKING:
    from ._checkpoint import Checkpoint
    from ._scope import RunScope

Status = Literal["done", "suspended", "stopped"]


@record(slots=True)
class AgentResult:
    """What a run returns.

    ``status`` is ``"done"`` (the model answered; ``output`` holds the answer, typed when the
    agent declares ``output=``), ``"stopped"`` (a should_stop_after_turn hook ended it;
    ``stop_reason`` names the hook) or ``"suspended"`` (``pending`` holds the tool calls
    waiting for a person's approval; continue with ``agent.resume``). ``cost`` is what the
    run's model calls cost in US dollars (its child agents' included), None when a model's
    price is unknown (never guessed); ``usage_by_model`` splits ``usage`` by the model that
    answered (in a fallback chain, the one that did); ``agent`` names the agent in charge when
    the run ended (another than the one started when a handoff was taken).
    """

    output: Any
    transcript: list[Message]
    usage: Usage
    run_id: str
    status: Status = "done"
    stop_reason: str | None = None
    pending: tuple[ToolCall, ...] = ()
    cost: float | None = None
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    agent: str = ""

    def __repr__(self) -> str:
        """Every field, the transcript by its length.

        ``asyncio.run`` on CPython 3.11 formats the finished task's repr, with its result,
        twice (checking its SIGINT handler): a whole long run each time (~30 ms at 3,000
        messages) if the transcript were shown.
        """
        count = len(self.transcript)
        transcript = f"<{count} message{'' if count == 1 else 's'}>"
        shown = ", ".join(
            f"{name}={transcript if name == 'transcript' else repr(getattr(self, name))}"
            for name in _SHOWN
        )
        return f"AgentResult({shown})"


_SHOWN = tuple(f.name for f in fields(AgentResult))


@record(slots=True)
class RunState:
    """The durable state of one run: enough to continue it from a checkpoint alone."""

    task: str
    transcript: list[Message]
    turn: int = 0
    pending: list[ToolCall] = field(default_factory=list)
    #: What the run decided on each pending call when it suspended, by call id (``"ask"``,
    #: ``"allow"``, ``"deny"``): only an ask takes a person's answer. Empty in a checkpoint
    #: written before it was kept; then every pending call is taken as held, and the deny of
    #: one is still kept by deciding it again at resume.
    verdicts: dict[str, str] = field(default_factory=dict)
    #: The transcript's length when its last fold failed; no new fold until the fold's cut
    #: passes it (see :class:`~agentkit_core.Folding`). None: no failed fold to back off from.
    fold_backoff: int | None = None
    #: The run's scratchpad (``ctx.scratchpad``) as of the checkpoint: a grounding record, what
    #: tools noted. Copied in at every checkpoint, restored into the context on resume.
    scratchpad: dict[str, Any] = field(default_factory=dict)
    #: What the run has spent so far (``ctx.usage``), so a resumed run goes on counting from it
    #: and its budget binds the whole run. A checkpoint written before it was kept: nothing.
    usage: Usage = field(default_factory=Usage)
    #: What the run's priced model calls cost so far (``ctx.spent``, US dollars), the models it
    #: found no price for, its usage per model and its tool calls: a resumed run's cost and its
    #: ``max_cost`` and ``max_tool_calls`` count the whole run. An older checkpoint: nothing.
    spent: float = 0.0
    unpriced: list[str] = field(default_factory=list)
    usage_by_model: dict[str, Usage] = field(default_factory=dict)
    tool_calls: int = 0
    #: The agent in charge after a handoff (``Kit(handoffs=)``), by name; "" for the agent the
    #: run started under. A resumed run goes on under it.
    agent: str = ""

    def note_spending(self, scope: RunScope) -> None:
        """Copy in what the run (``scope``, its context) has spent, for its checkpoint."""
        self.usage = scope.usage
        self.spent, self.unpriced = scope.spent, sorted(scope.unpriced)
        self.usage_by_model = dict(scope.usage_by_model)
        self.tool_calls = scope.tool_calls


#: What a RunState checkpoint holds: each field's type, and the type of its items.
_RUN_STATE: dict[str, tuple[type, type | None]] = {
    "task": (str, None),
    "transcript": (list, Message),
    "turn": (int, None),
    "pending": (list, ToolCall),
}


def restored(saved: Checkpoint) -> RunState:
    """The RunState a checkpoint holds; anything else is a corrupt record, named by path."""
    data = saved.state
    if not isinstance(data, dict):
        raise saved.corrupt(
            f"the state holds {type(data).__name__}, expected an agent run's state", "state"
        )
    for key, (kind, item) in _RUN_STATE.items():
        path = f'state["{key}"]'
        if key not in data:
            raise saved.corrupt(f"{path} is missing", path)
        value = data[key]
        if not isinstance(value, kind) or isinstance(value, bool):
            problem = f"{path} holds {type(value).__name__}, expected {kind.__name__}"
            raise saved.corrupt(problem, path)
        if item is None:
            continue
        for i, element in enumerate(data[key]):
            if not isinstance(element, item):
                raise saved.corrupt(
                    f"{path}[{i}] holds {type(element).__name__}, expected {item.__name__}",
                    f"{path}[{i}]",
                )
    backoff = data.get("fold_backoff")
    if backoff is not None and (not isinstance(backoff, int) or isinstance(backoff, bool)):
        path = 'state["fold_backoff"]'
        raise saved.corrupt(f"{path} holds {type(backoff).__name__}, expected int", path)
    scratchpad = data.get("scratchpad") or {}  # none in a checkpoint written before it was kept
    if not isinstance(scratchpad, dict):
        path = 'state["scratchpad"]'
        raise saved.corrupt(f"{path} holds {type(scratchpad).__name__}, expected dict", path)
    verdicts = data.get("verdicts") or {}
    if not isinstance(verdicts, dict) or not all(
        isinstance(v, str) and v in ("allow", "ask", "deny") for v in verdicts.values()
    ):
        path = 'state["verdicts"]'
        raise saved.corrupt(f"{path} holds {verdicts!r}, expected call ids to decisions", path)
    usage = data.get("usage") or Usage()
    if not isinstance(usage, Usage):
        path = 'state["usage"]'
        raise saved.corrupt(f"{path} holds {type(usage).__name__}, expected Usage", path)
    state = RunState(
        data["task"],
        list(data["transcript"]),
        data["turn"],
        list(data["pending"]),
        {str(k): v for k, v in verdicts.items()},
        backoff,
        dict(scratchpad),
        usage,
    )
    agent = data.get("agent") or ""  # none in a checkpoint written before handoffs
    if not isinstance(agent, str):
        raise _wrong(saved, "agent", agent, "an agent's name")
    state.agent = agent
    return _with_spending(saved, data, state)


def _with_spending(saved: Checkpoint, data: dict[object, object], state: RunState) -> RunState:
    """``state`` with the run's cost, unpriced models, usage per model and tool calls, checked.

    A checkpoint written before they were kept has none of them: the run had spent nothing.
    """
    spent = data.get("spent") or 0.0
    unpriced = data.get("unpriced") or []
    by_model = data.get("usage_by_model") or {}
    tool_calls = data.get("tool_calls") or 0
    if not isinstance(spent, (int, float)) or isinstance(spent, bool):
        raise _wrong(saved, "spent", spent, "dollars")
    if not isinstance(unpriced, list) or not all(isinstance(m, str) for m in unpriced):
        raise _wrong(saved, "unpriced", unpriced, "a list of model names")
    if not isinstance(by_model, dict) or not all(isinstance(u, Usage) for u in by_model.values()):
        raise _wrong(saved, "usage_by_model", by_model, "model names to Usage")
    if not isinstance(tool_calls, int) or isinstance(tool_calls, bool):
        raise _wrong(saved, "tool_calls", tool_calls, "int")
    state.spent, state.unpriced, state.tool_calls = float(spent), list(unpriced), tool_calls
    state.usage_by_model = {str(m): u for m, u in by_model.items()}
    return state


def _wrong(saved: Checkpoint, key: str, value: object, expected: str) -> Exception:
    path = f'state["{key}"]'
    return saved.corrupt(f"{path} holds {value!r}, expected {expected}", path)
