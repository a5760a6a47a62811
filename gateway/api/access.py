"""Who may call which HTTP route, when authentication is on (gateway/auth.py has the policy).

One ASGI middleware in front of every route, so a route added later is protected without
remembering to: the public routes are listed here, every other request needs a credential.

- public: ``/health``, ``/openapi.json``, and everything outside ``/api/``, ``/v1/`` and
  ``/metrics`` (the browser radio's static files);
- ``/api/radio/sessions/{id}`` and below: the session's own token, or the API key that created it;
- ``/v1/webrtc/...`` (the radio over WebRTC): any valid credential, as for the radio socket; what
  it reaches is checked on `session.start`/`session.resume` (gateway/radio/);
- every other ``/api/`` route and ``/metrics``: an API key.

A refused request never reaches its handler: 401 ``unauthorized`` (with ``WWW-Authenticate:
Bearer``) or 403 ``forbidden``, in the gateway's JSON error shape. The principal of an accepted
request is in ``request.state.principal`` (creating a session records its key as the owner).
"""

from __future__ import annotations

import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from gateway.api.errors import error_response, store_unavailable
from gateway.auth import ANONYMOUS, AuthError, Authenticator, Principal, bearer
from gateway.service import RadioService, SessionNotFound
from gateway.store import StoreUnavailable

PUBLIC_PATHS = frozenset({"/health", "/openapi.json"})
# ours (sessions) and the OpenSquawk app's (session, gateway/api/opensquawk.py)
_SESSION_ROUTE = re.compile(r"^/api/radio/sessions?/([^/]+)(?:/[^/]*)?$")


_RADIO_PREFIX = "/v1/"


def is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or not (path.startswith(("/api/", _RADIO_PREFIX)) or path == "/metrics")


def principal_of(request: Request) -> Principal:
    """The authenticated caller of a request (`ANONYMOUS` when authentication is off)."""
    return getattr(request.state, "principal", ANONYMOUS)


class AccessMiddleware:
    def __init__(self, app: ASGIApp, auth: Authenticator, service: RadioService) -> None:
        self.app = app
        self.auth = auth
        self.service = service

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.auth.enabled or is_public(scope["path"]):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            principal = self._authorize(scope["path"], bearer(request.headers))
        except AuthError as exc:
            headers = {"WWW-Authenticate": 'Bearer realm="livefreq"'} if exc.status == 401 else None
            await error_response(exc.status, exc.code, exc.message, None, headers)(scope, receive, send)
            return
        except StoreUnavailable as exc:  # the owner of a session could not be read (Redis down)
            await (await store_unavailable(request, exc))(scope, receive, send)
            return
        scope.setdefault("state", {})["principal"] = principal
        await self.app(scope, receive, send)

    def _authorize(self, path: str, credential: str | None) -> Principal:
        principal = self.auth.authenticate(credential)
        if path.startswith(_RADIO_PREFIX):
            return principal
        match = _SESSION_ROUTE.match(path)
        if match is None:
            self.auth.require_key(principal, "call this route")
            return principal
        session_id = match.group(1)
        if principal.is_key:
            try:
                owner = self.service.owner_of(session_id)
            except SessionNotFound:
                return principal  # the handler answers 404, as without authentication
            self.auth.check_session(principal, session_id, owner)
        else:
            self.auth.check_session(principal, session_id, None)
        return principal
