"""The Guardrail seam, the lookup of installed guardrails, and the ``egress()`` middleware.

A guardrail answers four questions: may this URL be fetched (``check_url``, synchronous and
without DNS, plus an optional resolving ``url_check``), what must be hidden in this text
(``redact``), how is tool output marked as untrusted data (``wrap_tool_output``), and may this
final answer leave the run (``check_output``). Implementations live in plugins
(``agentkit-guardrail-web``); core only defines the contract and the middleware that enforces
it before a side-effecting tool runs.
"""

from __future__ import annotations

import re
from abc import ABC
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

from ._errors import ConfigError
from ._errors import GuardrailViolation
from ._messages import Message
from ._middleware import CallTool
from ._middleware import Middleware
from ._middleware import ToolInvocation
from ._tools import ToolResult
from ._tracing import current_span


class Guardrail(ABC):
    """Base class of guardrails; a plugin subclasses it and registers a factory.

    Only :meth:`check_url` is required. The other methods default to "nothing to do", which is
    what a guardrail that only polices egress wants; a guardrail that redacts or frames
    overrides them.
    """

    @abstractmethod
    def check_url(self, url: str) -> None:
        """Refuse ``url`` by raising :class:`GuardrailViolation`; return None to allow it.

        Must be synchronous and must not resolve names or touch the network: the egress
        middleware calls it on the event loop for every URL of every side-effecting call.
        """

    async def url_check(self, url: str) -> None:
        """The checks that need I/O (name resolution); runs after :meth:`check_url` passed.

        Raise :class:`GuardrailViolation` to refuse. The default has nothing to resolve.
        """
        return None

    def redact(self, text: str) -> str:
        """``text`` with what must not reach the model or the user hidden; default unchanged."""
        return text

    def wrap_tool_output(self, text: str) -> str:
        """``text`` framed so the model reads it as data, not instructions; default unchanged."""
        return text

    def check_output(self, message: Message) -> Message:
        """The final answer, possibly rewritten; raise :class:`GuardrailViolation` to refuse."""
        return message

    async def check_arguments(self, arguments: Any) -> None:
        """Check every URL found in a tool call's decoded ``arguments``; the first refusal raises.

        Both the ``egress()`` middleware and a plugin's before-tool-call hook use this, so a URL
        is found the same way wherever it is checked (see :func:`find_urls`).
        """
        for url in find_urls(arguments):
            self.check_url(url)
            await self.url_check(url)


# A scheme followed by a slash or backslash: "http://x", "file:/etc/passwd", "http:\\x".
_WHOLE_URL = re.compile(r"\s*[A-Za-z][A-Za-z0-9+.\-]*:[/\\]")
# URLs embedded in free text; stops at whitespace, quotes and angle brackets.
_EMBEDDED_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:[/\\]{2}[^\s\"'<>`]*")
# Argument names whose value is a URL or host even without a scheme ("127.0.0.1/admin").
_URL_KEY = re.compile(r"(?i)(?:^|_)(?:url|uri|href|link|endpoint|host|hostname)s?$")


def find_urls(value: Any, *, _key: str = "") -> Iterator[str]:
    """Every URL-looking string inside ``value``, walking nested dicts, lists and tuples.

    A string counts when it starts with ``scheme:/`` (checked whole, so a tab or newline inside
    it is seen), for each ``scheme://...`` run embedded in longer text, and when it is the value
    of a URL-named key (``url``, ``host``, ``base_url``...): without a scheme, such a value is
    yielded as ``http://<value>``, the way tools that prepend a scheme would read it.
    """
    if isinstance(value, str):
        if _WHOLE_URL.match(value):
            yield value.strip()
        elif _key and value.strip() and _URL_KEY.search(_key):
            yield "http://" + value.strip()
        else:
            yield from _EMBEDDED_URL.findall(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from find_urls(item, _key=str(key))
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from find_urls(item, _key=_key)


class _Egress(Middleware):
    """Checks the URLs of side-effecting tool calls before the tool runs."""

    __slots__ = ("guardrail",)

    def __init__(self, guardrail: Guardrail) -> None:
        self.guardrail = guardrail

    async def wrap_tool(self, invocation: ToolInvocation, call_next: CallTool) -> ToolResult:
        if not invocation.tool.side_effects:
            return await call_next(invocation)
        span = current_span()
        with invocation.ctx.trace.span(
            "guardrail", guardrail=type(self.guardrail).__name__, tool=invocation.tool.name
        ) as verdict:
            try:
                await self.guardrail.check_arguments(invocation.arguments)
            except GuardrailViolation as exc:
                span.set("egress_blocked", str(exc.value))
                span.set("egress_reason", exc.reason or str(exc))
                verdict.set("decision", "deny")
                verdict.set("reason", exc.reason or str(exc))
                return ToolResult.error(
                    f"egress refused for tool {invocation.tool.name!r}: {exc}. The call was "
                    "not made; use a different, public URL or ask the user"
                )
            verdict.set("decision", "allow")
        span.set("egress_checked", True)
        return await call_next(invocation)

    def __repr__(self) -> str:
        return f"<egress {self.guardrail!r}>"


def egress(guardrail: Guardrail | None) -> Middleware:
    """A middleware that checks every URL of a side-effecting tool call with ``guardrail``.

    ``guardrail`` is a :class:`Guardrail` (:func:`get_guardrail` builds an installed one by
    name). A refused URL becomes
    a tool error result the model sees (naming the URL and the reason), and is recorded on the
    tool call's span as ``egress_blocked``/``egress_reason``. Tools with ``side_effects=False``
    pass unchecked. ``None`` is refused: a control built inert would make the chain look guarded.
    """
    if guardrail is None:
        raise ConfigError(
            "egress() needs a guardrail, got None; pass one such as "
            "agentkit_core.get_guardrail('web') (pip install agentkit-guardrail-web), or leave "
            "egress() out of the middleware list",
            value=None,
            source="egress",
        )
    if isinstance(guardrail, str):
        raise ConfigError(
            f"egress({guardrail!r}) needs a Guardrail object, not a name; build it with "
            f"agentkit_core.get_guardrail({guardrail!r}, manager=...)",
            value=guardrail,
            source="egress",
        )
    if not isinstance(guardrail, Guardrail):
        raise ConfigError(
            f"egress() needs an agentkit_core.Guardrail, got {type(guardrail).__name__}",
            value=guardrail,
            source="egress",
        )
    return _Egress(guardrail)
