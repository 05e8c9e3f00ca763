"""The option records ``Agent(...)`` and ``Kit(...)`` take, grouped by what they configure.

``Kit(limits=Limits(max_turns=5), guards=GuardOptions(["redact"], guard_fail_open=["redact"]))``:
each record is frozen and typed, and passed under the key of its group (``limits``, ``guards``,
``session``, ``compaction``, ``tools``). The flat keywords are thin aliases that build the
same record. See ``docs/kit.md`` ("Option records").
"""

from __future__ import annotations

from ._options import CompactionOptions
from ._options import GuardOptions
from ._options import Limits
from ._options import SessionOptions
from ._options import ToolOptions
from ._public import _homes
from ._public import publish

__all__ = ["CompactionOptions", "GuardOptions", "Limits", "SessionOptions", "ToolOptions"]

publish(__all__, globals(), __name__, _homes())
