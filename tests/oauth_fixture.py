"""An OAuth-protected MCP server for tests: the SDK's own authorization server and bearer auth, in memory.

`serve_oauth_server()` runs it with uvicorn in a thread and yields it; its authorization endpoint
approves at once (redirecting to the client's redirect URI with a code), so following the sign-in
URL with an HTTP client is the whole "person". It has one tool, `whisper`, and counts what it issued.
"""

from __future__ import annotations

import contextlib
import secrets
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field

import uvicorn
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class AutoApprove:
    """An authorization server that says yes to everyone: codes, tokens and refresh tokens in dicts."""

    def __init__(self, token_seconds: int = 3600) -> None:
        self.token_seconds = token_seconds
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.issued: list[str] = []  # every access and refresh token handed out
        self.refreshes = 0

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client: OAuthClientInformationFull, params: AuthorizationParams) -> str:
        code = secrets.token_urlsafe(16)
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
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client: OAuthClientInformationFull, code: str) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(self, client: OAuthClientInformationFull, code: AuthorizationCode) -> OAuthToken:
        del self.codes[code.code]
        return self._issue(client.client_id, code.scopes, code.resource)

    async def load_refresh_token(self, client: OAuthClientInformationFull, refresh_token: str) -> RefreshToken | None:
        return self.refresh.get(refresh_token)

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        del self.refresh[refresh_token.token]
        self.refreshes += 1
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)

    def expire_access_tokens(self) -> None:
        """Every access token handed out so far stops working (the refresh tokens still do)."""
        self.access.clear()

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_urlsafe(24)}", f"rt-{secrets.token_urlsafe(24)}"
        expires = int(time.time()) + self.token_seconds
        self.access[access] = AccessToken(token=access, client_id=client_id, scopes=scopes, expires_at=expires, resource=resource)
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        self.issued += [access, refresh]
        return OAuthToken(
            access_token=access, expires_in=self.token_seconds, refresh_token=refresh, scope=" ".join(scopes) or None
        )


@dataclass
class OAuthServer:
    url: str  # the MCP endpoint
    provider: AutoApprove = field(repr=False)


def _free_socket() -> socket.socket:
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    return sock


@contextlib.contextmanager
def serve_oauth_server(token_seconds: int = 3600) -> Iterator[OAuthServer]:
    """Run the protected server on a free loopback port in a thread; yield its URL and provider."""
    sock = _free_socket()
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    provider = AutoApprove(token_seconds)
    server = MCPServer(
        "oauth-fixture",
        auth_server_provider=provider,
        auth=AuthSettings(
            issuer_url=base,
            resource_server_url=f"{base}/mcp",
            validate_token_resource=False,
            client_registration_options=ClientRegistrationOptions(enabled=True, valid_scopes=["mcp"], default_scopes=["mcp"]),
            required_scopes=["mcp"],
        ),
    )

    @server.tool()
    def whisper(text: str) -> str:
        """Say it quietly."""
        return text.lower()

    app = server.streamable_http_app()
    instance = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=instance.run, kwargs={"sockets": [sock]}, name="oauth-fixture", daemon=True)
    thread.start()
    started = threading.Event()
    for _ in range(500):
        if instance.started:
            break
        started.wait(0.02)
    try:
        yield OAuthServer(f"{base}/mcp", provider)
    finally:
        instance.should_exit = True
        thread.join(timeout=15)
        sock.close()
