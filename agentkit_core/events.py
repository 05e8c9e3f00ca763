"""The typed events of a run, as ``Agent.run_stream_events`` yields them (docs/events.md).

Each is a frozen dataclass with ``kind`` (its name in JSON), ``run_id``, ``seq`` (strictly
increasing over a run) and ``item_id`` (the session item it corresponds to, where there is one);
``event.to_json()`` gives the JSON-ready form ``agentkit run --events`` prints. A consumer should
pass over kinds it does not know: more may come.
"""

from __future__ import annotations

from ._events import ApprovalAnswered
from ._events import ApprovalRequested
from ._events import ChildRunFinished
from ._events import ChildRunStarted
from ._events import CompactionFold
from ._events import Handoff
from ._events import MemoryWrite
from ._events import ModelRequestStarted
from ._events import OutputPartial
from ._events import Retry
from ._events import RunEvent
from ._events import RunFailed
from ._events import RunFinished
from ._events import RunStarted
from ._events import RunSuspended
from ._events import TextDelta
from ._events import ThinkingDelta
from ._events import ToolCallArgsDelta
from ._events import ToolCallReady
from ._events import ToolCallStarted
from ._events import ToolFinished
from ._events import ToolProgress
from ._events import ToolStarted
from ._events import TurnStarted
from ._events import UsageUpdate
from ._events import VerdictReported
from ._public import publish

__all__ = [
    "ApprovalAnswered",
    "ApprovalRequested",
    "ChildRunFinished",
    "ChildRunStarted",
    "CompactionFold",
    "Handoff",
    "MemoryWrite",
    "ModelRequestStarted",
    "OutputPartial",
    "Retry",
    "RunEvent",
    "RunFailed",
    "RunFinished",
    "RunStarted",
    "RunSuspended",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallArgsDelta",
    "ToolCallReady",
    "ToolCallStarted",
    "ToolFinished",
    "ToolProgress",
    "ToolStarted",
    "TurnStarted",
    "UsageUpdate",
    "VerdictReported",
]

publish(__all__, globals(), __name__)
