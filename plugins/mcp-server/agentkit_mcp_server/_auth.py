"""Bearer-token verification for the HTTP transport: fixed tokens, checked in constant time."""

from __future__ import annotations

import hmac
import os
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentkit_core import ConfigError

if TYPE_CHECKING:
    from mcp.server.auth.provider import AccessToken


class BearerTokens:
    """A ``TokenVerifier`` accepting fixed tokens, each for a client id with scopes.

    ``BearerTokens({"s3cret": "ci"})``; :meth:`from_env` reads one token from an environment
    variable (what ``agentkit mcp serve --token-env NAME`` uses). A token is never printed.
    """

    def __init__(self, tokens: Mapping[str, str], scopes: Sequence[str] = ()) -> None:
        if not tokens or any(not isinstance(t, str) or not t for t in tokens):
            raise ConfigError(
                "BearerTokens needs at least one non-empty token (a mapping token -> client id)",
                value=f"{len(tokens)} token(s)",
                source="BearerTokens(tokens=...)",
            )
        self._tokens = dict(tokens)
        self._scopes = list(scopes)

    @classmethod
    def from_env(cls, name: str, scopes: Sequence[str] = ()) -> BearerTokens:
        token = os.environ.get(name, "")
        if not token:
            raise ConfigError(
                f"the environment variable {name} holds no token; set it to the bearer token "
                "clients must send",
                value=name,
                source="--token-env",
            )
        return cls({token: name.lower()}, scopes)

    async def verify_token(self, token: str) -> AccessToken | None:
        from mcp.server.auth.provider import AccessToken

        for known, client in self._tokens.items():
            if hmac.compare_digest(known.encode(), token.encode()):
                return AccessToken(token=token, client_id=client, scopes=self._scopes)
        return None

    def __repr__(self) -> str:
        return f"<BearerTokens: {len(self._tokens)} token(s)>"
