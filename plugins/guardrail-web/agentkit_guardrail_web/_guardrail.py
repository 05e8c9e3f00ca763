"""WebGuardrail: SSRF-safe URL checks, an egress allow list, redaction and untrusted framing."""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core.plugin import Guardrail

from . import _framing
from . import _redact
from ._limits import check_fetch_limits
from ._resolve import ResolvingURLCheck
from ._resolve import URLCheck
from ._resolve import check_address
from ._resolve import networks
from ._url import IPAddress
from ._url import Target
from ._url import normalize_name
from ._url import parse_url
from ._url import refuse

if TYPE_CHECKING:
    from ._fetch import SafeFetcher


class WebGuardrail(Guardrail):
    """A guardrail for agents that touch the web, secure by default.

    Args:
        egress_allow: domains (or IP addresses) that may be reached; once given, everything
            else is refused. A domain allows itself and its subdomains, on label boundaries.
        url_check: an ``async (url) -> None`` check run after :meth:`check_url`, for what needs
            I/O; :data:`resolving_url_check` resolves names and refuses non-global answers.
        redact_tool_output: redact e-mail addresses and phone numbers in tool output before
            framing it (off by default: tool output is data the agent reasons over).
        resolve: also resolve every host before a call runs and refuse one with a non-global
            address (a :class:`ResolvingURLCheck` over ``allow_private_networks``); runs
            before ``url_check`` when both are given.
        allow_private_networks: networks that count as allowed even though they are not global
            (a lab network, or 127.0.0.0/8 in tests). Empty by default.
        flag_injections: add a warning line to framed output naming injection markers seen.
        fetch_deadline, max_body_bytes: the defaults of :meth:`fetcher` (see
            :class:`SafeFetcher`).
    """

    def __init__(
        self,
        egress_allow: Iterable[str] | None = None,
        url_check: URLCheck | None = None,
        redact_tool_output: bool = False,
        *,
        resolve: bool = False,
        allow_private_networks: Iterable[Any] = (),
        flag_injections: bool = True,
        fetch_deadline: float | None = None,
        max_body_bytes: int | None = None,
    ) -> None:
        if isinstance(egress_allow, str):
            raise ConfigError(
                f"egress_allow must be a list of domains, got the string {egress_allow!r}; "
                f"write egress_allow=[{egress_allow!r}]",
                value=egress_allow,
                source="WebGuardrail(egress_allow=...)",
            )
        self.egress_allow: frozenset[str] | None = (
            None if egress_allow is None else frozenset(_allow_entry(e) for e in egress_allow)
        )
        if url_check is not None and not callable(url_check):
            raise ConfigError(
                f"url_check must be an async callable (url) -> None, got "
                f"{type(url_check).__name__}",
                value=url_check,
                source="WebGuardrail(url_check=...)",
            )
        self.redact_tool_output = bool(redact_tool_output)
        self.allow_private_networks = networks(
            allow_private_networks, "WebGuardrail(allow_private_networks=...)"
        )
        self.resolve = bool(resolve)
        checks: list[URLCheck] = []
        if self.resolve:
            checks.append(ResolvingURLCheck(allow_private_networks=self.allow_private_networks))
        if url_check is not None:
            checks.append(url_check)
        self._url_checks = tuple(checks)
        self.flag_injections = flag_injections
        check_fetch_limits(
            fetch_deadline,
            max_body_bytes,
            "WebGuardrail(...)",
            names=("fetch_deadline", "max_body_bytes"),
            optional=True,
        )
        self.fetch_options: dict[str, Any] = {}
        if fetch_deadline is not None:
            self.fetch_options["deadline"] = fetch_deadline
        if max_body_bytes is not None:
            self.fetch_options["max_body_bytes"] = max_body_bytes

    # ------------------------------------------------------------------ URLs

    def inspect(self, url: str) -> Target:
        """The URL's target after every check that needs no DNS; raises GuardrailViolation."""
        target = parse_url(url)
        if target.ip is not None:
            check_address(target.ip, url, self.allow_private_networks)
        if self.egress_allow is not None and not self.allowed_host(target.host):
            raise refuse(url, f"host {target.host!r} is not in egress_allow")
        return target

    def check_url(self, url: str) -> None:
        """Refuse ``url`` unless it is http(s) to a public host (and allowed); never uses DNS.

        Host names are taken as names: whether ``127.0.0.1.nip.io`` resolves to loopback is
        the resolving ``url_check``'s and the fetching client's job.
        """
        self.inspect(url)

    def allowed_host(self, host: str) -> bool:
        """Whether a canonical host equals an ``egress_allow`` entry or is a subdomain of one."""
        allow = self.egress_allow
        if allow is None or host in allow:
            return True
        if host[:1].isdigit() or ":" in host:  # an address only ever matches exactly
            try:
                ipaddress.ip_address(host)
                return False
            except ValueError:
                pass
        dot = host.find(".")
        while dot >= 0:
            if host[dot + 1 :] in allow:
                return True
            dot = host.find(".", dot + 1)
        return False

    def check_address(self, ip: IPAddress | str, url: str) -> None:
        """Refuse ``url`` when a resolved ``ip`` is not allowed (the fetching client's check)."""
        check_address(ip, url, self.allow_private_networks)

    async def url_check(self, url: str) -> None:
        for check in self._url_checks:
            await check(url)

    @property
    def checks_need_io(self) -> bool:
        """Whether a URL also goes through a check that may do I/O (``resolve``, ``url_check``).

        Without one, :meth:`check_arguments_offline` is the whole check.
        """
        return bool(self._url_checks)

    async def check_arguments(self, arguments: Any) -> None:
        """Every URL in a tool call's ``arguments`` checked; the first refusal raises.

        Without a check that does I/O this is :meth:`check_arguments_offline`, with no
        coroutine per URL; with one, each URL is checked and then resolved in turn.
        """
        if self._url_checks:
            await super().check_arguments(arguments)
        else:
            self.check_arguments_offline(arguments)

    def fetcher(self, **options: Any) -> SafeFetcher:
        """A :class:`SafeFetcher` bound to this guardrail.

        ``options`` go to its constructor, over this guardrail's ``fetch_deadline`` and
        ``max_body_bytes``.
        """
        from ._fetch import SafeFetcher

        return SafeFetcher(self, **{**self.fetch_options, **options})

    # ------------------------------------------------------------------ text

    def redact(self, text: str) -> str:
        """``text`` with e-mail addresses and phone numbers replaced by placeholders."""
        return _redact.redact(text)

    def wrap_tool_output(self, text: str) -> str:
        """``text`` framed as untrusted data between delimiters carrying a fresh nonce."""
        return _framing.frame(text, flag=self.flag_injections)

    def tool_text(self, text: str) -> str:
        """One text of tool output as the model reads it: redacted when enabled, then framed."""
        return self.wrap_tool_output(self.redact(text) if self.redact_tool_output else text)

    def __repr__(self) -> str:
        allow = "any" if self.egress_allow is None else sorted(self.egress_allow)
        return (
            f"<WebGuardrail egress_allow={allow} resolve={self.resolve} "
            f"redact_tool_output={self.redact_tool_output}>"
        )


def _allow_entry(entry: Any) -> str:
    source = "WebGuardrail(egress_allow=...)"
    if not isinstance(entry, str) or not entry.strip():
        raise ConfigError(
            f"{source}: entry {entry!r} is not a domain name", value=entry, source=source
        )
    text = entry.strip()
    try:
        return str(ipaddress.ip_address(text.strip("[]")))
    except ValueError:
        pass
    if text.startswith(("*.", ".")) or "/" in text or "@" in text or ":" in text:
        raise ConfigError(
            f"{source}: entry {entry!r} must be a bare domain such as 'example.com' (a domain "
            "already allows its subdomains; no scheme, port, path or wildcard)",
            value=entry,
            source=source,
        )
    try:
        return normalize_name(text)
    except ValueError as exc:
        raise ConfigError(f"{source}: entry {entry!r}: {exc}", value=entry, source=source) from None
