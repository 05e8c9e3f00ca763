"""The web guardrail's settings, apart from the guardrail so that reading them imports nothing.

:class:`WebSettings` is declared at registration (``settings=``) through a function, so it is
made when the settings are first read, not when the plugin loads; the guardrail itself
(:mod:`._guardrail`) is imported when one is built.
"""

from __future__ import annotations

from typing import TypedDict


class WebSettings(TypedDict, total=False):
    """The web guardrail's settings: ``[guardrail.web]`` keys, ``AGENTKIT_WEB_*`` variables.

    The variable of a key is ``AGENTKIT_WEB_`` and the key in upper case; a list is written
    comma-separated there (``AGENTKIT_WEB_EGRESS_ALLOW=example.com,python.org``), a flag as
    ``1``/``0``. See :class:`WebGuardrail` for what each does.
    """

    egress_allow: list[str]
    resolve: bool
    redact_tool_output: bool
    allow_private_networks: list[str]
    flag_injections: bool
    fetch_deadline: float
    max_body_bytes: int
