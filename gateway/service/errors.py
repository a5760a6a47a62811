"""What the session service refuses: each error carries the stable wire code adapters send."""

from __future__ import annotations


class ServiceError(Exception):
    """A request the service refuses; `code` is the stable wire code, `field` what was wrong."""

    code = "error"

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class SessionNotFound(ServiceError):
    code = "unknown_session"


class UnknownFlowError(ServiceError):
    code = "unknown_flow"


class UnknownStateError(ServiceError):
    code = "unknown_state"


class BadInput(ServiceError):
    code = "validation_error"


class TooManySessions(ServiceError):
    """A limit of `Settings.max_sessions` (the gateway is full: 503) or `max_sessions_per_key`
    (this key has enough: 429) refuses a new session."""

    code = "too_many_sessions"

    def __init__(self, message: str, *, per_key: bool) -> None:
        super().__init__(message)
        self.status = 429 if per_key else 503


class UnknownFlightPlan(ServiceError):
    """No flight plan with that callsign in the data feed (none at all offline)."""

    code = "unknown_flight_plan"


class ProviderUnavailable(ServiceError):
    """The data provider a request needs (the flight plan feed) did not answer."""

    code = "provider_unavailable"


class SessionBusy(ServiceError):
    """Other writers changed the session every time it was decided (`MAX_ATTEMPTS` in a row)."""

    code = "session_busy"
