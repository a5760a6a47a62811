"""The session service behind every adapter (HTTP, the radio socket, the CLI): `RadioService`
(core.py), what it refuses (errors.py), the checks of client input (checks.py), how sessions
are kept (persistence.py) and stateless evaluation (evaluation.py)."""

from __future__ import annotations

from gateway.service.checks import MAX_SEED, MAX_TEXT_CHARS
from gateway.service.core import TIMER_LEASE_S, RadioService
from gateway.service.errors import (
    BadInput,
    ProviderUnavailable,
    ServiceError,
    SessionBusy,
    SessionNotFound,
    TooManySessions,
    UnknownFlightPlan,
    UnknownFlowError,
    UnknownStateError,
)
from gateway.service.evaluation import Evaluation
from gateway.service.persistence import MAX_ATTEMPTS

__all__ = [
    "MAX_ATTEMPTS",
    "MAX_SEED",
    "MAX_TEXT_CHARS",
    "TIMER_LEASE_S",
    "BadInput",
    "Evaluation",
    "ProviderUnavailable",
    "RadioService",
    "ServiceError",
    "SessionBusy",
    "SessionNotFound",
    "TooManySessions",
    "UnknownFlightPlan",
    "UnknownFlowError",
    "UnknownStateError",
]
