"""The limits a fetch runs under: its deadline and the size of the body it reads.

Checked where the guardrail is built and where a fetcher is made, by one function, so a bad
limit is refused before a run whichever way it came.
"""

from __future__ import annotations

import math

from agentkit_core import ConfigError


def check_fetch_limits(
    deadline: object,
    max_body_bytes: object,
    where: str,
    *,
    names: tuple[str, str] = ("deadline", "max_body_bytes"),
    optional: bool = False,
) -> None:
    """Refuse a fetch deadline or body limit that is not positive, finite and of its type.

    A deadline is a positive, finite number of seconds, a body limit a whole number of bytes
    of at least 1; with ``optional``, None (the default) is taken too. Checked where the
    guardrail is built, so a file's ``fetch_deadline = nan`` or ``AGENTKIT_WEB_MAX_BODY_BYTES=0``
    is refused before a run, not at a tool's first fetch; an infinite deadline (``inf``,
    ``1e999``) would be no deadline at all.
    """
    deadline_ok = (optional and deadline is None) or (
        isinstance(deadline, int | float)
        and not isinstance(deadline, bool)
        and math.isfinite(deadline)
        and deadline > 0
    )
    bytes_ok = (optional and max_body_bytes is None) or (
        isinstance(max_body_bytes, int)
        and not isinstance(max_body_bytes, bool)
        and max_body_bytes > 0
    )
    bad = [] if deadline_ok else [f"{names[0]}={deadline!r} (a finite number of seconds)"]
    if not bytes_ok:
        bad.append(f"{names[1]}={max_body_bytes!r} (a whole number of bytes)")
    if bad:
        raise ConfigError(
            f"{where} needs a positive deadline and max_body_bytes, got {' and '.join(bad)}",
            value=max_body_bytes if deadline_ok else deadline,
            source=where,
        )
