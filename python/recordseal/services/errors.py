"""Domain errors of the services. The web layer maps each kind to one HTTP status.

Every refusal here is a :class:`ServiceError` (``code``, ``field`` and ``kind`` as fields),
under the root of the service's errors, :class:`RecordServiceError` (``ledger/errors.py``,
re-exported here); ``web/problems.py`` answers each as problem+json.
"""

from __future__ import annotations

from recordseal.ledger.errors import RecordServiceError


class ServiceError(RecordServiceError):
    """A refused request: ``code`` is stable, ``field`` names the offending input or path."""

    kind = "invalid"

    def __init__(self, code: str, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.field = field


class Invalid(ServiceError):
    """A well-formed request breaks a rule (a field kind, a limit, strict mode...)."""

    kind = "invalid"


class TooLarge(ServiceError):
    kind = "too_large"


class NotFound(ServiceError):
    kind = "not_found"


class AlreadyExists(ServiceError):
    kind = "conflict"


class Inconsistent(ServiceError):
    """What was sent contradicts what the service holds (a checkpoint of a forked log)."""

    kind = "conflict"


class Frozen(ServiceError):
    """The tenant is frozen read-only (``active`` false, docs/panel.md, "Freezing a
    tenant"): nothing of it may be written."""

    kind = "conflict"


def tenant_inactive(refused: str) -> Frozen:
    """The refusal of a write to a frozen tenant; ``refused`` says what is refused."""
    return Frozen("tenant_inactive", f"the tenant is frozen read-only: {refused}", None)


class Gone(ServiceError):
    """The subject was erased: its data cannot be written or read by anyone."""

    kind = "gone"


class Unauthenticated(ServiceError):
    kind = "unauthenticated"


class Forbidden(ServiceError):
    """The tenant may not use this resource (for example another tenant's fleet)."""

    kind = "forbidden"


class Malformed(ServiceError):
    """The body cannot be read as the request it should be: not JSON, the wrong shape."""

    kind = "malformed"


class UnsupportedMediaType(ServiceError):
    """The body is not declared as JSON (``Content-Type``)."""

    kind = "unsupported_media_type"


class Unavailable(ServiceError):
    """The resource cannot be served now: its store is behind what the service signed
    (``store_rolled_back``, docs/continuity.md)."""

    kind = "unavailable"


class TooManyRequests(ServiceError):
    """A rate limit of this client address is exhausted; retry after ``retry_after`` s."""

    kind = "too_many_requests"

    def __init__(self, code: str, message: str, retry_after: int) -> None:
        super().__init__(code, message)
        self.retry_after = retry_after
