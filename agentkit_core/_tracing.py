"""Trace spans: one per model call and tool call, inspectable in tests and exportable as dicts."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from typing import Any

_current: contextvars.ContextVar[Span | None] = contextvars.ContextVar(
    "agentkit_span", default=None
)


@dataclass(slots=True)
class Span:
    """A named, timed unit of work with attributes (``compaction_rejected``, token counts...)."""

    name: str
    attributes: dict[str, Any] = field(default_factory=dict)
    start: float = field(default_factory=time.perf_counter)
    end: float | None = None
    parent: str | None = None
    error: str | None = None

    def set(self, key: str, value: Any) -> None:
        self.attributes[key] = value

    @property
    def duration(self) -> float | None:
        return None if self.end is None else self.end - self.start

    def to_dict(self) -> dict[str, Any]:
        """The span as JSON-ready data, for exporters."""
        return {
            "name": self.name,
            "attributes": dict(self.attributes),
            "duration_s": self.duration,
            "parent": self.parent,
            "error": self.error,
        }


@dataclass(slots=True)
class Trace:
    """The spans of one run, in the order they were opened."""

    spans: list[Span] = field(default_factory=list)

    @contextmanager
    def span(self, name: str, **attributes: Any) -> Iterator[Span]:
        """Open a span for the duration of the block; it becomes :func:`current_span`."""
        parent = _current.get()
        span = Span(name, attributes, parent=parent.name if parent else None)
        self.spans.append(span)
        token = _current.set(span)
        try:
            yield span
        except BaseException as exc:
            span.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            span.end = time.perf_counter()
            _current.reset(token)

    def find(self, name: str) -> list[Span]:
        """Every span of that name, oldest first."""
        return [s for s in self.spans if s.name == name]

    def export(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.spans]


def current_span() -> Span:
    """The innermost open span; outside any, a detached span whose attributes go nowhere."""
    return _current.get() or Span("detached")
