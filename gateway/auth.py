"""Optional authentication: API keys, signed session tokens, and the WebSocket Origin check.

Off until keys are configured (``LIVEFREQ_API_KEYS`` or ``LIVEFREQ_API_KEYS_FILE``), so a local
trainer needs no set-up. When on, every credential is a bearer secret of one of two kinds:

- an **API key**: for operators and applications. It may create sessions and reach the sessions it
  created (their owner is the key's id), and every other API route. Keys are configured as the key
  itself or as ``sha256:<hex>`` of it (what ``livefreq keys new`` prints), so the keys file need not
  hold a usable secret; in memory the gateway keeps only the SHA-256 digests, and a presented key
  is hashed and compared with every digest with `hmac.compare_digest` (constant time, no early
  exit). A key's id is its label (``label sha256:...``) or ``key-`` and the first 8 hex digits of
  its digest: the id is what sessions store as their owner, never the key.
- a **session token**: issued with each session (``session_token`` beside ``resume_token``),
  signed with the gateway's secret by `itsdangerous` (HMAC-SHA256, timestamped, checked in
  constant time), valid for ``session_token_ttl_s``. It reaches its own session only: the HTTP
  routes under ``/api/radio/sessions/{id}`` and the WebSocket ``session.resume`` of that id. Being
  signed, it needs no lookup and survives restarts and other nodes that share the secret
  (``LIVEFREQ_AUTH_SECRET``; without it a random secret is created once in ``auth_secret_file``).

HTTP takes ``Authorization: Bearer <credential>``; the WebSocket also ``?token=<credential>``
(browsers cannot set headers on a WebSocket). Missing or unknown credentials are 401
``unauthorized``; a valid credential used outside its reach is 403 ``forbidden``. The routes that
stay public are the ones a load balancer, a browser loading the radio page, or a client reading
the API description needs: ``/health``, ``/openapi.json`` and the static files.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import re
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from itsdangerous import BadSignature, URLSafeTimedSerializer

from gateway.settings import Settings

MIN_KEY_CHARS = 16  # a configured plain key shorter than this is refused at start-up
_DIGEST = re.compile(r"^sha256:([0-9a-fA-F]{64})$")
_LABEL = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
_TOKEN_SALT = "livefreq.session-token.v1"


class AuthConfigError(ValueError):
    """The configured keys or secret cannot be used; the gateway refuses to start."""


class AuthError(Exception):
    """A request refused for its credentials: 401 ``unauthorized`` or 403 ``forbidden``."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message


def unauthorized(message: str) -> AuthError:
    return AuthError(401, "unauthorized", message)


def forbidden(message: str) -> AuthError:
    return AuthError(403, "forbidden", message)


# --------------------------------------------------------------------------- API keys


@dataclass(frozen=True, slots=True)
class ApiKey:
    key_id: str
    digest: bytes  # SHA-256 of the key: the only form the gateway keeps


def digest_of(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def new_key() -> tuple[str, str]:
    """A fresh random key and the ``sha256:<hex>`` entry to configure for it."""
    key = "lf_" + secrets.token_urlsafe(32)
    return key, "sha256:" + digest_of(key).hex()


def parse_key_entry(entry: str, where: str) -> ApiKey:
    """``key``, ``sha256:<hex>``, or either after a label and a blank."""
    parts = entry.split()
    if len(parts) not in (1, 2):
        raise AuthConfigError(f"{where}: an API key entry is 'key', 'sha256:<hex>' or 'label <key or sha256:hex>'")
    label, value = (None, parts[0]) if len(parts) == 1 else (parts[0], parts[1])
    if label is not None and not _LABEL.match(label):
        raise AuthConfigError(f"{where}: a key label is 1-64 letters, digits, '_', '.', '@' or '-'")
    match = _DIGEST.match(value)
    if match:
        digest = bytes.fromhex(match.group(1))
    elif value.lower().startswith("sha256:"):
        raise AuthConfigError(f"{where}: sha256: must be followed by 64 hex digits")
    elif len(value) < MIN_KEY_CHARS:
        raise AuthConfigError(f"{where}: an API key must be at least {MIN_KEY_CHARS} characters (livefreq keys new)")
    else:
        digest = digest_of(value)
    return ApiKey(label or f"key-{digest.hex()[:8]}", digest)


class KeyRing:
    """The configured API keys, as digests."""

    def __init__(self, keys: Iterable[ApiKey]) -> None:
        self.keys = tuple(keys)
        ids = [k.key_id for k in self.keys]
        if len(set(ids)) != len(ids):
            raise AuthConfigError("two API keys have the same label or digest")

    @classmethod
    def from_settings(cls, settings: Settings) -> KeyRing:
        keys = [parse_key_entry(s.get_secret_value(), f"LIVEFREQ_API_KEYS[{i}]") for i, s in enumerate(settings.api_keys)]
        if settings.api_keys_file is not None:
            path = settings.api_keys_file.expanduser()
            try:
                lines = path.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise AuthConfigError(f"cannot read the API keys file {path}: {exc.strerror or exc}") from None
            for number, line in enumerate(lines, 1):
                entry = line.split("#", 1)[0].strip()
                if entry:
                    keys.append(parse_key_entry(entry, f"{path}:{number}"))
        if not keys:
            raise AuthConfigError("authentication is configured but no API key is given")
        return cls(keys)

    def identify(self, presented: str) -> str | None:
        """The id of the key `presented` is, or None; the time taken does not depend on which
        key matched or how much of a digest did."""
        digest = digest_of(presented)
        found: str | None = None
        for key in self.keys:
            if hmac.compare_digest(digest, key.digest):
                found = key.key_id
        return found


# --------------------------------------------------------------------------- session tokens


def load_secret(settings: Settings) -> bytes:
    """``auth_secret``, else the secret in ``auth_secret_file`` (created with mode 0600 on first
    use, so tokens survive restarts; several nodes must share one `auth_secret` instead)."""
    if settings.auth_secret is not None:
        secret = settings.auth_secret.get_secret_value()
        if len(secret) < MIN_KEY_CHARS:
            raise AuthConfigError(f"LIVEFREQ_AUTH_SECRET must be at least {MIN_KEY_CHARS} characters")
        return secret.encode("utf-8")
    path = (settings.auth_secret_file or settings.sqlite_path.with_name("auth-secret")).expanduser()
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        secret = path.read_text(encoding="utf-8").strip()
        if len(secret) < MIN_KEY_CHARS:
            raise AuthConfigError(f"the secret in {path} is too short; delete the file to make a new one") from None
        return secret.encode("utf-8")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(secrets.token_urlsafe(48) + "\n")
    return path.read_text(encoding="utf-8").strip().encode("utf-8")


class SessionTokens:
    """Signed, timestamped tokens naming one session id."""

    def __init__(self, secret: bytes, ttl_s: float) -> None:
        self._serializer = URLSafeTimedSerializer(secret, salt=_TOKEN_SALT)
        self.ttl_s = ttl_s

    def issue(self, session_id: str) -> str:
        return self._serializer.dumps(session_id)

    def verify(self, token: str) -> str | None:
        """The session id the token was issued for, or None (forged, altered or expired)."""
        try:
            value = self._serializer.loads(token, max_age=self.ttl_s)
        except (BadSignature, ValueError, TypeError):
            return None
        return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- principals


@dataclass(frozen=True, slots=True)
class Principal:
    """Who a request is. With authentication off everyone is `ANONYMOUS` and may do everything."""

    key_id: str | None = None  # an API key
    session_id: str | None = None  # a session token's session

    @property
    def is_key(self) -> bool:
        return self.key_id is not None


ANONYMOUS = Principal()


class Authenticator:
    """The gateway's one authority on credentials (HTTP middleware and WebSocket handler)."""

    def __init__(self, settings: Settings) -> None:
        self.enabled = settings.auth_enabled
        self.keys: KeyRing | None = None
        self.tokens: SessionTokens | None = None
        if self.enabled:
            self.keys = KeyRing.from_settings(settings)
            self.tokens = SessionTokens(load_secret(settings), settings.session_token_ttl_s)

    def authenticate(self, credential: str | None) -> Principal:
        """The principal a bearer credential names; `AuthError` 401 when there is none or it is
        not valid. Always `ANONYMOUS` when authentication is off."""
        if not self.enabled:
            return ANONYMOUS
        assert self.keys is not None and self.tokens is not None
        if not credential:
            raise unauthorized("this gateway requires an API key or a session token (Authorization: Bearer ...)")
        key_id = self.keys.identify(credential)
        if key_id is not None:
            return Principal(key_id=key_id)
        session_id = self.tokens.verify(credential)
        if session_id is not None:
            return Principal(session_id=session_id)
        raise unauthorized("the credential is not a valid API key or session token")

    def session_token(self, session_id: str) -> str | None:
        """The token that reaches `session_id` (None when authentication is off)."""
        return self.tokens.issue(session_id) if self.tokens is not None else None

    def require_key(self, principal: Principal, what: str) -> None:
        """Only an API key may do `what` (a session token reaches its session only)."""
        if self.enabled and not principal.is_key:
            raise forbidden(f"a session token cannot {what}; use an API key")

    def check_session(self, principal: Principal, session_id: str, owner: str | None) -> None:
        """403 unless `principal` is the session's own token or the key that created it."""
        if not self.enabled:
            return
        if principal.session_id is not None:
            if not hmac.compare_digest(principal.session_id.encode(), session_id.encode()):
                raise forbidden("this session token belongs to another session")
        elif owner is None or principal.key_id != owner:
            raise forbidden("this session was created by another API key")


def bearer(headers: Mapping[str, str]) -> str | None:
    """The credential of an ``Authorization: Bearer ...`` header, if any."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, credential = value.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return credential.strip() or None


# --------------------------------------------------------------------------- WebSocket origins


def origin_allowed(origin: str | None, host: str | None, allowed: Iterable[str]) -> bool:
    """May a browser page from `origin` open the radio socket on `host`?

    Browsers send ``Origin`` on every WebSocket handshake and let any page open a socket to any
    address, loopback included; without this check a hostile page could drive a local gateway
    (start sessions, speak, listen). Allowed: no ``Origin`` (not a browser: simulators, scripts),
    the gateway's own origin (the browser radio it serves), and the configured list (``*`` for any).
    """
    if origin is None:
        return True
    allowed = list(allowed)
    if "*" in allowed or origin in allowed:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and host is not None and parts.netloc.lower() == host.lower()
