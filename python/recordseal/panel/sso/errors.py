"""Login errors of docs/sso.md with their HTTP status.

``reason`` is for the trace log only: it never reaches a response body, and it must never
quote a secret, a code, a token or text written by the identity provider.
"""

from __future__ import annotations

from recordseal.panel.errors import PanelError


class LoginError(PanelError):
    """Base of the five login errors; ``status`` is the HTTP status of docs/sso.md."""

    status = 500
    kind = "Internal"

    def __init__(self, reason: str) -> None:
        super().__init__(f"{self.kind}: {reason}")
        self.reason = reason


class InvalidNonce(LoginError):
    """The state nonce is missing, unknown, used, expired, or bound to another provider."""

    status = 401
    kind = "InvalidNonce"


class InvalidCallback(LoginError):
    """The identity provider's answer is refused (error response, bad token, bad grant)."""

    status = 401
    kind = "InvalidCallback"


class InvalidProtocol(LoginError):
    """The request does not have the shape the protocol needs (body, encoding, flavour)."""

    status = 400
    kind = "InvalidProtocol"


class Network(LoginError):
    """The identity provider could not be reached or answered outside the protocol."""

    status = 502
    kind = "Network"


class Internal(LoginError):
    """A fault of the panel itself; audited and flagged for escalation."""

    status = 500
    kind = "Internal"


class RegistrationError(PanelError, ValueError):
    """A provider registration is refused; the message names the field and the rule."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class DuplicateProvider(RegistrationError):
    """A provider with this id is already registered (docs/panel.md, "Sessions")."""

    def __init__(self, provider_id: str) -> None:
        super().__init__("id", f"a provider {provider_id!r} is already registered")
        self.provider_id = provider_id
