"""OAuth sign-in for remote MCP servers: where tokens live, and the sign-ins waiting for a browser.

The protocol is the SDK's (`mcp.client.auth.OAuthClientProvider`: metadata discovery, dynamic or
pre-registered clients, client ID metadata documents, PKCE, scopes from `WWW-Authenticate`,
step-up, refresh). Our side is three things:

- `TokenFile`: the SDK's `TokenStorage` over `<data_dir>/oauth/<server>.json` (mode 0600, created
  so from the start; the folder 0700). It records when the access token expires, so a restart
  refreshes an expired token instead of asking to sign in again, and the server URL, so tokens are
  never sent to another server that takes the name. A pre-registered client from `mcp.json` is
  what `get_client_info` answers.
- `SignIns`: the sign-ins waiting for their callback, by OAuth `state` (single-use, unguessable,
  expiring after `SIGN_IN_WAIT`). `finish(state, ...)` is what `/oauth/callback` (the web app's, or
  the terminal's own loopback listener) calls; an unknown or used state changes nothing.
- `provider(...)`: the SDK provider for one server, whose redirect handler opens a pending
  sign-in and tells the connection ("needs sign-in", with the URL) and whose callback handler
  waits for `finish`.

Tokens and secrets are never logged.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from loguru import logger
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientInformationFull, OAuthClientMetadata, OAuthToken
from pydantic import AnyUrl, ValidationError

from sidespin import __version__
from sidespin.errors import SidespinError
from sidespin.mcp.config import OAuthConfig

__all__ = [
    "CALLBACK_PATH",
    "SIGN_IN_WAIT",
    "PendingSignIn",
    "SignInError",
    "SignIns",
    "TokenFile",
    "preregistered",
    "provider",
    "redirect_uri",
    "token_path",
]

CALLBACK_PATH = "/oauth/callback"
SIGN_IN_WAIT = 900.0
"""Seconds a sign-in waits for the browser to come back before the server is marked failed."""

_REFRESH_MARGIN = 60.0  # refresh this long before expiry (at most half the token's life)
_MAX_PENDING = 32  # sign-ins waiting at once; the oldest is dropped beyond this
_SAFE_NAME = re.compile(r"[^A-Za-z0-9._-]")


class SignInError(SidespinError):
    """A sign-in that cannot go on: unknown or used state, a refusal from the authorization server, no answer in time."""


def preregistered(config: OAuthConfig, redirect: str) -> OAuthClientInformationFull | None:
    """The client `mcp.json` registered in advance, as the SDK expects it from storage."""
    if config.client_id is None:
        return None
    return OAuthClientInformationFull(
        client_id=config.client_id,
        client_secret=config.client_secret,
        redirect_uris=[AnyUrl(redirect)],
        token_endpoint_auth_method="client_secret_basic" if config.client_secret else "none",
        scope=" ".join(config.scopes) or None,
    )


def redirect_uri(port: int) -> str:
    """Where the authorization server sends the browser back: our app's callback on loopback."""
    return f"http://127.0.0.1:{port}{CALLBACK_PATH}"


def token_path(folder: Path, server: str) -> Path:
    """`<folder>/<server>.json`; a name that is not a plain file name is made one (with a hash, so two never meet)."""
    safe = _SAFE_NAME.sub("_", server)
    if safe != server or safe.startswith("."):
        safe = f"{safe.lstrip('.')}-{hashlib.sha256(server.encode()).hexdigest()[:8]}"
    return folder / f"{safe}.json"


def _write_private(path: Path, text: str) -> None:
    """Write `text` so that no other user can read it at any moment: a new 0600 file, then renamed over."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(text)
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


class TokenFile:
    """The SDK's `TokenStorage` for one server: in `path` (None keeps it in memory, for the conformance client)."""

    def __init__(self, path: Path | None, url: str, preregistered: OAuthClientInformationFull | None = None) -> None:
        self.path = path
        self.url = url
        self._preregistered = preregistered
        self._tokens: OAuthToken | None = None
        self._client: OAuthClientInformationFull | None = None
        self.expires_at: float | None = None
        self._load()

    def _load(self) -> None:
        if self.path is None or not self.path.exists():
            return
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if data.get("url") != self.url:  # tokens of another server that had this name: never sent here
                logger.warning("OAUTH_TOKENS_IGNORED {}: saved for another URL", self.path.name)
                return
            self._tokens = OAuthToken.model_validate(data["tokens"]) if data.get("tokens") else None
            self._client = OAuthClientInformationFull.model_validate(data["client"]) if data.get("client") else None
            self.expires_at = data.get("expires_at")
        except (OSError, ValueError, KeyError, ValidationError) as error:
            logger.warning("OAUTH_TOKENS_UNREADABLE {}: {}", self.path.name, type(error).__name__)

    def _save(self) -> None:
        if self.path is None:
            return
        data: dict[str, Any] = {
            "url": self.url,
            "tokens": self._tokens.model_dump(mode="json", exclude_none=True) if self._tokens else None,
            "expires_at": self.expires_at,
            "client": self._client.model_dump(mode="json", exclude_none=True) if self._client else None,
        }
        _write_private(self.path, json.dumps(data, indent=2))

    @property
    def refresh_at(self) -> float | None:
        """When to refresh: a little before the access token expires (None: it does not say)."""
        if self.expires_at is None or self._tokens is None or self._tokens.expires_in is None:
            return self.expires_at
        return self.expires_at - min(_REFRESH_MARGIN, self._tokens.expires_in / 2)

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._tokens = tokens
        self.expires_at = time.time() + tokens.expires_in if tokens.expires_in is not None else None
        self._save()

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        if self._preregistered is not None:
            return self._preregistered
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info
        self._save()


@dataclass
class PendingSignIn:
    """One authorization URL handed to a person, waiting for the browser to come back with its `state`."""

    server: str
    url: str
    state: str
    deadline: float
    answer: asyncio.Future[AuthorizationCodeResult] = field(repr=False)


Opener = Callable[["SignIns", PendingSignIn], Awaitable[None]]


class SignIns:
    """The sign-ins waiting for their callback, by state; `finish` resolves one exactly once.

    `opener`, when given, is called with each new sign-in: the terminal prints its URL, the
    conformance client fetches it headlessly. Without one the page shows a Sign in link.
    """

    def __init__(self, redirect: str, *, wait: float = SIGN_IN_WAIT, opener: Opener | None = None) -> None:
        self.redirect = redirect
        self.wait_seconds = wait
        self.opener = opener
        self._pending: dict[str, PendingSignIn] = {}

    def begin(self, server: str, url: str) -> PendingSignIn:
        """Record the authorization URL the SDK built (its `state` is the key the callback must bring back)."""
        state = (parse_qs(urlsplit(url).query).get("state") or [""])[0]
        if not state:
            raise SignInError(f"the authorization URL for {server!r} carries no state")
        self._drop_expired()
        for old in [p for p in self._pending.values() if p.server == server]:
            self._cancel(old)  # a new attempt replaces the server's older one
        while len(self._pending) >= _MAX_PENDING:
            self._cancel(next(iter(self._pending.values())))
        pending = PendingSignIn(
            server, url, state, time.monotonic() + self.wait_seconds, asyncio.get_running_loop().create_future()
        )
        self._pending[state] = pending
        logger.info("OAUTH_SIGN_IN_NEEDED {} (waiting {:g} s)", server, self.wait_seconds)
        return pending

    async def wait(self, pending: PendingSignIn) -> AuthorizationCodeResult:
        """The code and state the browser brought back; `SignInError` when refused or not in time."""
        try:
            async with asyncio.timeout(max(0.0, pending.deadline - time.monotonic())):
                return await pending.answer
        except TimeoutError:
            minutes = self.wait_seconds / 60
            raise SignInError(f"sign-in was not completed within {minutes:g} min") from None
        finally:
            self._pending.pop(pending.state, None)

    def url_for(self, server: str) -> str | None:
        """The authorization URL waiting for `server`, if any."""
        self._drop_expired()
        return next((p.url for p in self._pending.values() if p.server == server), None)

    def finish(self, state: str, code: str | None, iss: str | None = None, error: str | None = None) -> str:
        """Hand a callback to its sign-in (once); the server's name. Unknown, used or expired state: `SignInError`."""
        self._drop_expired()
        pending = self._pending.pop(state, None) if state else None
        if pending is None or pending.answer.done():
            logger.warning("OAUTH_CALLBACK_REFUSED unknown, used or expired state")
            raise SignInError("this sign-in link is unknown, already used or expired: start the sign-in again")
        if error:
            pending.answer.set_exception(SignInError(f"the authorization server refused the sign-in: {error}"))
            logger.warning("OAUTH_SIGN_IN_REFUSED {}: {}", pending.server, error)
            return pending.server
        if not code:
            pending.answer.set_exception(SignInError("the authorization server sent no code"))
            raise SignInError("the callback carries no code")
        pending.answer.set_result(AuthorizationCodeResult(code=code, state=state, iss=iss))
        logger.info("OAUTH_CALLBACK {}", pending.server)
        return pending.server

    def _cancel(self, pending: PendingSignIn) -> None:
        self._pending.pop(pending.state, None)
        if not pending.answer.done():
            pending.answer.set_exception(SignInError("replaced by a newer sign-in"))

    def _drop_expired(self) -> None:
        now = time.monotonic()
        for pending in [p for p in self._pending.values() if p.deadline <= now]:
            self._cancel(pending)


class _Provider(OAuthClientProvider):
    """The SDK provider, with the expiry kept in our token file, so a restart refreshes a stale token
    (instead of sending it, being refused, and asking the person to sign in again), and a little early."""

    def __init__(self, store: TokenFile, scopes: tuple[str, ...], **kwargs: Any) -> None:
        super().__init__(storage=store, **kwargs)
        self._store = store
        self._scopes = " ".join(scopes) or None

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The SDK picks scopes from the server's challenge; the ones mcp.json asks for are added to them.
        self.context.client_metadata.scope = union_scopes(self.context.client_metadata.scope, self._scopes)
        return await super()._perform_authorization_code_grant()

    def _expiry_from_store(self) -> None:
        if self.context.current_tokens is not None:
            self.context.token_expiry_time = self._store.refresh_at

    async def _initialize(self) -> None:
        await super()._initialize()
        self._expiry_from_store()

    async def _handle_token_response(self, response: Any) -> None:
        await super()._handle_token_response(response)
        self._expiry_from_store()

    async def _handle_refresh_response(self, response: Any) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        self._expiry_from_store()
        if refreshed:
            logger.info("OAUTH_REFRESHED {}", self._store.path.name if self._store.path else self._store.url)
        return refreshed


def provider(
    server: str,
    url: str,
    config: OAuthConfig,
    store: TokenFile,
    sign_ins: SignIns,
    on_needed: Callable[[PendingSignIn], None],
) -> OAuthClientProvider:
    """The SDK's OAuth provider for one server: a sign-in it needs is opened in `sign_ins` and told to `on_needed`."""
    pending: list[PendingSignIn] = []

    async def redirect_handler(authorization_url: str) -> None:
        opened = sign_ins.begin(server, authorization_url)
        pending.append(opened)
        on_needed(opened)
        if sign_ins.opener is not None:
            await sign_ins.opener(sign_ins, opened)

    async def callback_handler() -> AuthorizationCodeResult:
        answer = await sign_ins.wait(pending.pop())
        logger.info("OAUTH_SIGNED_IN {}", server)
        return answer

    metadata = OAuthClientMetadata(
        client_name=f"sidespin {__version__}",
        redirect_uris=[AnyUrl(sign_ins.redirect)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    return _Provider(
        store,
        config.scopes,
        server_url=url,
        client_metadata=metadata,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
        client_metadata_url=config.client_metadata_url,
    )
