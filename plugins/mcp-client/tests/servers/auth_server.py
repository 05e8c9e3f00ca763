"""An authenticated MCP server over streamable HTTP, built with the SDK's own auth support.

``auth_server.py oauth PORT [TOKEN_SECONDS]``: the server is also its authorization server
(the SDK's routes: metadata, dynamic registration, /authorize, /token, /revoke) with an
in-memory provider that approves every authorization request at once (a browser-less test
follows the redirect). Access tokens live TOKEN_SECONDS (default 3600); refresh tokens rotate.

``auth_server.py bearer PORT TOKEN``: a resource server that takes only ``Bearer TOKEN``.

Either way it offers one tool, ``whoami``, and prints "auth server up" to stderr once bound.
"""

from __future__ import annotations

import secrets
import sys
import time
from urllib.parse import urlencode

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.provider import AuthorizationCode
from mcp.server.auth.provider import AuthorizationParams
from mcp.server.auth.provider import RefreshToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.auth.settings import ClientRegistrationOptions
from mcp.server.auth.settings import RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull
from mcp.shared.auth import OAuthToken


class Provider:
    """Clients, codes and tokens in dicts; every authorization is approved."""

    def __init__(self, token_seconds: int) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id is not None
        self.clients[client_info.client_id] = client_info

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(16)
        assert client.client_id is not None
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        query = {"code": code, **({"state": params.state} if params.state else {})}
        return f"{params.redirect_uri}?{urlencode(query)}"

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(authorization_code)

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        expires = int(time.time()) + self.token_seconds
        self.access[access] = AccessToken(
            token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        return OAuthToken(
            access_token=access,
            token_type="Bearer",
            expires_in=self.token_seconds,
            refresh_token=refresh,
            scope=" ".join(scopes) or None,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        del self.codes[authorization_code.code]
        return self._issue(
            authorization_code.client_id, authorization_code.scopes, authorization_code.resource
        )

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        """Revoke the whole grant: every token of the client."""
        for table in (self.access, self.refresh):
            for key in [k for k, v in table.items() if v.client_id == token.client_id]:
                del table[key]


class Verifier:
    def __init__(self, token: str) -> None:
        self.token = token

    async def verify_token(self, token: str) -> AccessToken | None:
        if secrets.compare_digest(token.encode(), self.token.encode()):
            return AccessToken(token=token, client_id="header", scopes=[])
        return None


def main() -> None:
    mode, port = sys.argv[1], int(sys.argv[2])
    base = f"http://127.0.0.1:{port}"
    if mode == "oauth":
        seconds = int(sys.argv[3]) if len(sys.argv) > 3 else 3600
        settings = AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=True),
            revocation_options=RevocationOptions(enabled=True),
        )
        server = MCPServer("oauth-test", auth_server_provider=Provider(seconds), auth=settings)
    else:
        settings = AuthSettings(
            issuer_url=base, resource_server_url=f"{base}/mcp", validate_token_resource=False
        )
        server = MCPServer("bearer-test", token_verifier=Verifier(sys.argv[3]), auth=settings)

    @server.tool()
    def whoami() -> str:
        """Say that the caller got in."""
        return f"{mode} ok"

    print("auth server up", file=sys.stderr, flush=True)
    server.run("streamable-http", host="127.0.0.1", port=port)


main()
