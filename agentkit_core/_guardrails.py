"""The Guardrail seam, the rule that finds hosts in tool arguments, and ``egress()``.

A guardrail answers four questions: may this URL be fetched (``check_url``, synchronous and
without DNS, plus an optional resolving ``url_check``), what must be hidden in this text
(``redact``), how is tool output marked as untrusted data (``wrap_tool_output``), and may this
final answer leave the run (``check_output``). Implementations live in plugins
(``agentkit-guardrail-web``); core defines the contract, :func:`find_urls` (what in a tool
call's arguments a client could reach), and the middleware that checks every tool call with it
before the tool runs. An agent's guardrail (``Agent(guardrail=...)``) is enforced through that
middleware and travels on the run's context as ``ctx.guardrail``.
"""

from __future__ import annotations

import ipaddress
import json
import re
import unicodedata
from abc import ABC
from abc import abstractmethod
from collections.abc import Iterator
from collections.abc import Sequence
from functools import lru_cache
from typing import Any
from urllib.parse import unquote

from ._content import Part
from ._content import TextPart
from ._content import part_text
from ._errors import ConfigError
from ._errors import GuardrailViolation
from ._messages import Content
from ._messages import Message
from ._messages import ToolCall
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
        middleware calls it on the event loop for every URL of every tool call.
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

    def process_tool_result(self, result: ToolResult) -> ToolResult:
        """A tool result as the model should read it: each text part through :meth:`tool_text`.

        Hooks that frame tool output (the web plugin's ``after_tool_call``) call this with the
        run's guardrail.
        """
        if isinstance(result.content, str):
            content: Content = self.tool_text(result.content)
        else:
            content = tuple(self._part(part) for part in result.content)
        return ToolResult(content, result.is_error, result.structured)

    def _part(self, part: dict[str, Any] | Part) -> dict[str, Any] | Part:
        """A text part of tool output through :meth:`tool_text`; any other part as it is."""
        if isinstance(part, TextPart):
            return TextPart(self.tool_text(part.text))
        text = part_text(part)
        return (
            part
            if text is None or not isinstance(part, dict)
            else {**part, "text": self.tool_text(text)}
        )

    def tool_text(self, text: str) -> str:
        """One text of tool output as the model should read it; default :meth:`wrap_tool_output`.

        A guardrail that also redacts tool output overrides this (redact, then wrap).
        """
        return self.wrap_tool_output(text)

    async def check_arguments(self, arguments: object) -> None:
        """Check every URL found in a tool call's decoded ``arguments``; the first refusal raises.

        Both the ``egress()`` middleware and a plugin's before-tool-call hook use this, so a URL
        is found the same way wherever it is checked (see :func:`find_urls`).
        """
        for url in find_urls(arguments):
            self.check_url(url)
            await self.url_check(url)

    def check_arguments_offline(self, arguments: object) -> tuple[str, ...]:
        """The part of :meth:`check_arguments` that needs no I/O, without awaiting anything.

        Every URL found in ``arguments`` (the same rule, :func:`find_urls`) goes through
        :meth:`check_url`; the first refusal raises :class:`GuardrailViolation`. Returns the
        URLs found, each still owed :meth:`url_check`: a guardrail whose ``url_check`` does
        nothing (no resolving check configured) is done here, and a caller on a hot path (a
        before-tool-call hook) need not make and await a coroutine.
        """
        urls = tuple(find_urls(arguments))
        for url in urls:
            self.check_url(url)
        return urls

    def check_call_offline(self, call: ToolCall) -> tuple[str, ...]:
        """:meth:`check_arguments_offline` on ``call``'s decoded arguments.

        The URLs a call's arguments hold are found once per distinct argument text
        (:func:`urls_in_call`), so a call the model repeats is not decoded and walked again;
        each URL still goes through :meth:`check_url`. Raises ``json.JSONDecodeError`` when
        the arguments are not JSON, like :meth:`ToolCall.parsed_arguments`.
        """
        urls = urls_in_call(call)
        for url in urls:
            self.check_url(url)
        return urls


# A URL: a scheme followed by a slash or backslash ("http://x", "file:/etc/passwd", "http:\\x"),
# or a scheme that clients read even without one ("http:127.0.0.1"). A scheme has two characters
# at least: a single letter before the colon is a Windows drive (C:\Users, D:/data), a file path
# no client fetches.
_WHOLE_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+:[/\\]|(?i:https?|wss?|ftp|file):")
# URLs embedded in free text; stops at whitespace, quotes and angle brackets.
_EMBEDDED_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]+:[/\\]{2}[^\s\"'<>`]*")
# A scheme-less host as a client that prepends "http://" reads it: [//]host[:port][/path].
_HOST_SHAPE = re.compile(r"(//)?(\[[^\]/]*\]|[^\s/?#\\@:\[\]]+)(?::(\d{1,5}))?([/?#]\S*)?\Z")
_NUMBER_PART = re.compile(r"(?i)0x[0-9a-f]*|[0-9]+\Z")
_NAME_LABEL = re.compile(r"(?:[^\W_]|[-_])+\Z")
# An ideographic full stop where a client's IDNA mapping makes it a host's dot: before ASCII
# (a label, a port, a path) or at the end (a trailing dot).
_IDEOGRAPHIC_STOP = re.compile("\u3002(?=[!-~]|\\Z)")
# Characters without which a string cannot be read as a host or hold a URL or JSON.
_MAYBE = frozenset(".:/%{[@\\")
_IPV4_FLOOR = 1 << 24  # a smaller number reads as 0.x.x.x, and is a count, not a host
_IPV4_CEIL = 1 << 32
#: How many values one call may walk (JSON inside strings can nest): beyond it, refuse.
MAX_NODES = 100_000


def _reachable_private(number: int) -> bool:
    """Whether ``number`` as an IPv4 address lands off the public internet, but reachable.

    Loopback, private, link-local and shared addresses count; multicast and reserved blocks take
    no TCP connection, so a large number there is read as data.
    """
    if not _IPV4_FLOOR <= number < _IPV4_CEIL:
        return False
    ip = ipaddress.IPv4Address(number)
    return not (ip.is_global or ip.is_multicast or ip.is_reserved)


def _number_text(text: str) -> int | None:
    """The value of one decimal, hex (``0x``) or octal (leading ``0``) number, or None."""
    try:
        if text[:2].lower() == "0x":
            return int(text[2:] or "0", 16)
        if len(text) > 1 and text[0] == "0":
            return int(text, 8)
        return int(text)
    except ValueError:
        return None


def _clock(host: str, port: str, path: str | None) -> bool:
    """Whether ``host:port`` reads as a time of day ("00:30", "0:45"), not as a host and port."""
    return path is None and len(host) <= 2 and host.isdigit() and len(port) == 2 and int(port) < 60


def host_url(text: str) -> str | None:
    """``text`` read as a client that prepends ``http://`` reads it, when it names a host.

    The rule (see docs/guardrails.md): the whole string, stripped, is ``[//]host[:port][/path]``
    and host is an IPv6 literal (bracketed, or bare with a digit), a dotted address of four
    parts in any radix or with a hex part, a short dotted address (``127.1``) or a single-label
    name given with a port or ``//`` (one letter and a port is a Windows drive-relative path,
    ``C:0``), a single number (decimal, hex, octal) whose address is loopback/private/
    link-local/shared, zero (the unspecified address, which reaches this host) given with a
    port or ``//`` unless it reads as a time of day (``00:30``), ``localhost``, or a dotted name
    whose last label is alphabetic (``example.com``, ``db.internal``). The IPv6 unspecified
    address ``::`` counts bare too. After an ``@`` (an e-mail address) only an address or
    ``localhost`` counts. Returns the URL to check, or None.
    """
    s = text.strip()
    if not s.isascii():
        s = _as_host(s)
    at = s.rfind("@")
    if at >= 0:
        s = s[at + 1 :]
    if not s:
        return None
    rest = s[2:] if s.startswith("//") else s
    head = rest.split("/", 1)[0]
    if rest is s and "." not in head and ":" not in head:  # the common case, decided here
        if head.lower() == "localhost":
            return "http://" + s
        number = _number_text(head) if head[:1].isdigit() else None
        return "http://" + s if number is not None and _reachable_private(number) else None
    if head.count(":") >= 2 and "[" not in head:
        bare = head.split("%", 1)[0]
        try:
            ipaddress.IPv6Address(bare)
        except ValueError:
            return None
        if not any(c.isdigit() for c in bare) and bare != "::":
            return None  # "dead::beef" is data; "::" is the unspecified address, this host
        return f"http://[{head}]{rest[len(head) :]}"
    match = _HOST_SHAPE.match(s)
    if match is None:
        return None
    slashes, host, port, path = match.groups()
    url = "http://" + (s[2:] if slashes else s)
    if host.startswith("["):
        return url
    explicit = bool(slashes or port is not None)
    labels = host.lower().rstrip(".").split(".") if host != "." else [""]
    if all(_NUMBER_PART.fullmatch(label) for label in labels):
        if len(labels) == 1:
            number = _number_text(labels[0])
            if number == 0:  # the unspecified address: a connection to it reaches this host
                given = slashes or (port is not None and not _clock(host, port, path))
                return url if given else None
            return url if number is not None and _reachable_private(number) else None
        four = len(labels) == 4 or any(label[:2] == "0x" for label in labels)
        return url if four or explicit or path else None
    if at >= 0:
        return url if labels == ["localhost"] else None
    if not all(_NAME_LABEL.match(label) for label in labels):
        return None
    if len(labels) == 1:
        if len(host) == 1 and not slashes:
            return None  # a drive letter: "C:0" is a drive-relative path
        return url if explicit or labels[0] == "localhost" else None
    last = labels[-1]
    return url if len(last) >= 2 and (last.isalpha() or last.startswith("xn--")) else None


def _decoded(text: str, stack: list[Any]) -> bool:
    """Push what the JSON ``text`` holds onto ``stack``; False when it is not JSON.

    JSON nested too deeply to decode cannot be checked: refused, not let through unread.
    """
    try:
        stack.append(json.loads(text))
    except ValueError:
        return False
    except RecursionError:
        raise GuardrailViolation(
            "tool arguments hold a string of JSON nested too deeply to check; refused",
            value="<arguments>",
            reason="JSON nested too deeply to check",
        ) from None
    return True


def find_urls(value: object) -> Iterator[str]:
    """Every URL or host a client could reach inside ``value``, as URLs, each once.

    Walks nested dicts (keys and values), lists and tuples; decodes strings that hold JSON
    (``{...}``, ``[...]``) and percent-encoded strings, and walks what they hold. A string
    counts when it starts with a URL scheme (``scheme:/``, or ``http:`` and its kin; checked
    whole, so a tab or newline inside it is seen), for each ``scheme://...`` run embedded in
    longer text, and when the whole string reads as a host (:func:`host_url`); an integer
    counts when it reads as a loopback, private, link-local or shared IPv4 address. Key names
    play no part.
    """
    found: dict[str, None] = {}
    stack: list[Any] = [value]
    budget = MAX_NODES
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            budget -= len(item)
            for key, inner in item.items():
                if type(key) is not str or not _plain(key):
                    _look_at(key, found, stack)
                _look_at(inner, found, stack)
        elif kind is list or kind is tuple:
            budget -= len(item)
            for inner in item:
                _look_at(inner, found, stack)
        else:
            budget -= 1
            _look_at(item, found, stack)
        if budget < 0:
            raise GuardrailViolation(
                f"tool arguments hold more than {MAX_NODES} values to check; refused",
                value="<arguments>",
                reason="too many values to check",
            )
    return iter(found)


#: Argument texts up to this many characters have their URLs remembered (:func:`urls_in_call`).
CACHED_ARGUMENTS_CHARS = 2048


def urls_in_call(call: ToolCall) -> tuple[str, ...]:
    """``find_urls`` of ``call``'s decoded arguments, as a tuple.

    Remembered per argument text (the last 1,024 distinct texts of up to
    :data:`CACHED_ARGUMENTS_CHARS` characters): the answer depends on the text alone, and a
    tuple of strings cannot be changed by whoever reads it. Raises ``json.JSONDecodeError``
    on arguments that are not JSON (never remembered).
    """
    if len(call.arguments) > CACHED_ARGUMENTS_CHARS:
        return tuple(find_urls(call.parsed_arguments()))
    return _urls_in_text(call.arguments)


@lru_cache(maxsize=1024)
def _urls_in_text(arguments: str) -> tuple[str, ...]:
    return tuple(find_urls(ToolCall("", "", arguments).parsed_arguments()))


def _plain(text: str) -> bool:
    """Whether no host, URL or JSON can hide in ``text`` (a word, a sentence, a key)."""
    if not text.isascii():
        text = _as_host(text)
    return _MAYBE.isdisjoint(text) and not text.lstrip()[:1].isdigit() and len(text.strip()) != 9


def _as_host(text: str) -> str:
    """``text`` as a client's IDNA mapping reads a host: NFKC, and ``。`` as ``.`` before ASCII.

    UTS 46 (httpx, browsers) separates labels with the ideographic full stop too, which NFKC
    keeps (its halfwidth and fullwidth forms NFKC makes ``。`` and ``.``): ``192。168。1。1`` and
    ``evil。com`` reach ``192.168.1.1`` and ``evil.com``. One followed by other writing is a
    sentence's end (``こんにちは。元気ですか。``), not a host's dot.
    """
    text = unicodedata.normalize("NFKC", text)
    return _IDEOGRAPHIC_STOP.sub(".", text) if "\u3002" in text else text


def _look_at(item: Any, found: dict[str, None], stack: list[Any]) -> None:
    """Note what ``item`` reaches in ``found``; push what must be walked onto ``stack``."""
    kind = type(item)
    if kind is str:
        if _plain(item):
            return
        text = item.strip()
        if _WHOLE_URL.match(text):
            found[text] = None
        elif text[:1] in "{[" and _decoded(text, stack):
            pass  # what the JSON holds is walked instead
        else:
            for url in _EMBEDDED_URL.findall(text):
                found[url] = None
            url = host_url(text)
            if url is not None:
                found[url] = None
        if "%" in text:
            decoded = unquote(text)
            if decoded != text:
                stack.append(decoded)
    elif kind is int:
        if _reachable_private(item):
            found[f"http://{item}"] = None
    elif isinstance(item, dict | list | tuple):
        stack.append(item)
    elif isinstance(item, str):  # a str subclass
        _look_at(str(item), found, stack)
    elif isinstance(item, int) and not isinstance(item, bool):  # an int subclass
        _look_at(int(item), found, stack)


class _Egress(Middleware):
    """Checks the URLs and hosts in every tool call's arguments before the tool runs."""

    __slots__ = ("guardrail",)

    def __init__(self, guardrail: Guardrail) -> None:
        self.guardrail = guardrail

    async def wrap_tool(self, invocation: ToolInvocation, call_next: CallTool) -> ToolResult:
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


def egress_for(
    guardrail: Guardrail | None, middlewares: Sequence[object] = ()
) -> tuple[Middleware, ...]:
    """The ``egress()`` an agent adds for its ``guardrail``.

    None without a guardrail, or when ``middlewares`` already check with it.
    """
    if guardrail is None or any(
        isinstance(m, _Egress) and m.guardrail is guardrail for m in middlewares
    ):
        return ()
    return (_Egress(guardrail),)


def egress(guardrail: Guardrail | None) -> Middleware:
    """A middleware that checks every URL and host in every tool call with ``guardrail``.

    ``guardrail`` is a :class:`Guardrail` (:func:`get_guardrail` builds an installed one by
    name). Every tool is checked, read-only ones included: reading is not "no network". What
    counts is :func:`find_urls`'s rule. A refused URL becomes a tool error result the model sees
    (naming the URL and the reason), and is recorded on the tool call's span as
    ``egress_blocked``/``egress_reason``. ``None`` is refused: a control built inert would make
    the chain look guarded. An agent given ``guardrail=`` puts this middleware in its chain
    itself.
    """
    if guardrail is None:
        raise ConfigError(
            "egress() needs a guardrail, got None; pass one such as "
            "agentkit_core.plugin.get_guardrail('web') (pip install agentkit-guardrail-web), or "
            "leave egress() out of the middleware list",
            value=None,
            source="egress",
        )
    if isinstance(guardrail, str):
        raise ConfigError(
            f"egress({guardrail!r}) needs a Guardrail object, not a name; build it with "
            f"agentkit_core.plugin.get_guardrail({guardrail!r}, manager=...)",
            value=guardrail,
            source="egress",
        )
    if not isinstance(guardrail, Guardrail):
        raise ConfigError(
            f"egress() needs an agentkit_core.plugin.Guardrail, got {type(guardrail).__name__}",
            value=guardrail,
            source="egress",
        )
    return _Egress(guardrail)
