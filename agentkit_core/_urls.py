"""Store URLs in messages: one masking function every error, repr and log line goes through.

A store URL can carry a password in its userinfo or its query string. It is shown masked
everywhere, whatever its shape: a password with a bad percent-escape, an unencoded ``@``, ``/``,
``?`` or ``#``, a URL without a host or a scheme, a libpq ``key=value`` string. Masking errs
towards hiding too much (an ``@`` anywhere after ``//`` is taken to end the credentials),
never too little.
"""

from __future__ import annotations

import re
from typing import Final

MASK: Final = "***"

# Two characters at least: one letter and a colon is a Windows drive (C:\data), not a scheme.
_SCHEME: Final = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]+):")
# A key=value pair whose value is a secret, in a query string or a libpq key=value string: the
# key starts the text or follows ? & ; or a blank; the value is quoted, or runs to & ; # or a
# blank. Compiled (by ``re``'s cache) when a URL is first masked: a run without a store has none.
_SECRET_PAIR: Final = (
    r"(?i)(?<![^?&;\s])(?P<key>[\w.\-]*(?:password|passwd|pwd|secret|token|api[_\-]?key))="
    r"(?P<value>'(?:[^'\\]|\\.)*'?|[^&;#\s]*)"
)


def mask_url(url: object) -> str:
    """``url`` with every password replaced by ``***``, fit for messages, reprs and logs.

    The userinfo's password (``user:***@host``), the values of secret query parameters
    (``password``, ``sslpassword``, ``token``...) and a non-numeric "port" of a URL without
    ``@`` (``postgresql://user:secret`` typed without its host; up to the first ``/``, since
    a password may hold ``?`` and ``#``) are masked; without ``//``,
    everything before the last ``@`` is. Any value is accepted (a non-string is masked as its
    repr), and masking a masked URL changes nothing.
    """
    text = url if isinstance(url, str) else repr(url)
    text = re.sub(_SECRET_PAIR, lambda m: f"{m['key']}={MASK}", text)
    scheme = _SCHEME.match(text)
    start = scheme.end() if scheme else 0
    if not text.startswith("//", start):
        at = text.rfind("@")
        return text if at < 0 else MASK + text[at:]
    start += 2
    at = text.rfind("@", start)
    if at >= 0:
        user, colon, _ = text[start:at].partition(":")
        return f"{text[:start]}{user}:{MASK}{text[at:]}" if colon else text
    end = min((i for i in map(text.find, "/?#", [start] * 3) if i >= 0), default=len(text))
    hosts = ",".join(_mask_port(host) for host in text[start:end].split(","))
    if hosts != text[start:end]:  # a password where a port goes may run on past a '?' or '#'
        slash = text.find("/", end)
        end = len(text) if slash < 0 else slash
    return text[:start] + hosts + text[end:]


def url_scheme(url: object) -> str:
    """The scheme of ``url``, lower-cased; "" when it has none (or is not a string).

    A Windows drive path (``C:/data/agents.db``, ``D:x``) has none: a scheme is two
    characters at least.

    RFC 3986's grammar, by hand: ``urlsplit`` raises on some malformed URLs (``[::1``), and its
    message would have to be masked in turn.
    """
    found = _SCHEME.match(url) if isinstance(url, str) else None
    return "" if found is None else found[1].lower()


def _mask_port(host: str) -> str:
    """``host:port`` with a port that is not a number masked (it is a password, misplaced).

    The port follows the first ``:`` (after an IPv6 address's ``]``), as libpq reads it, so a
    password with a ``:`` in it (``user:pass:word``) is masked whole.
    """
    name, colon, port = host.rpartition("]:") if host.startswith("[") else host.partition(":")
    if not colon or not port or port.isdigit() or port == MASK:
        return host
    return f"{name}{colon}{MASK}"
