"""Session cookie payloads and their wire form (docs/panel.md, "Sessions").

Wire form: fields separated by ``|``, then optional trailing tags ``r=<role>`` and
``g=<epoch>`` (each at most once, in any order; issued as ``r=`` then ``g=``). The shape is
decided by the field count once the trailing tags are removed:

- legacy, 2 fields: ``<user_id>|<exp>`` (passkey logins; ``g=`` only, no tenant scope);
- tenant-scoped, 4 fields: ``<subject>|<tenant_id>|<org_id>|<exp>`` (sso logins).

``exp`` is whole seconds since the Unix epoch, ASCII digits without leading zeros; a session
is valid while ``now < exp``. A subject (and a legacy user id) is 1 to 256 characters and may
not contain ``|``: such a subject is refused, not escaped. A tenant-scoped payload without
``r=`` is read with the role ``viewer``; an ``r=`` value this version does not know is read as
``viewer`` too (fail closed). Issued tenant payloads always carry ``r=``.
"""

from __future__ import annotations

import re
from typing import Literal, TypeAlias, get_args

import msgspec

from recordseal.identifiers import IDENTIFIER_RULE, check_identifier
from recordseal.panel.errors import PanelError

Role: TypeAlias = Literal["operator", "viewer"]
ROLES: tuple[Role, ...] = get_args(Role)

SUBJECT_MAX_CHARS = 256
SEPARATOR = "|"
_NUMBER = re.compile(r"0|[1-9][0-9]{0,18}")


class PayloadError(PanelError, ValueError):
    """A payload that cannot be issued or read: ``field`` names the field (a tag as ``g=`` or
    ``r=``; ``fields`` for the payload's shape), ``rule`` the rule it breaks, ``shown`` what
    was found as the message shows it (a number, a role, an identifier; None where the message
    shows none: a subject is never repeated). The message is ``field [shown] rule`` unless a
    sentence of its own is given."""

    def __init__(
        self, field: str, rule: str, shown: str | None = None, *, message: str | None = None
    ) -> None:
        if message is None:
            message = " ".join(part for part in (field, shown, rule) if part is not None)
        super().__init__(message)
        self.field = field
        self.rule = rule
        self.shown = shown


class LegacySession(msgspec.Struct, frozen=True):
    """A passkey session: operator-admin view, no tenant scope."""

    user_id: str
    exp: int
    epoch: int | None = None


class TenantSession(msgspec.Struct, frozen=True):
    """An sso session scoped to one tenant and organization."""

    subject: str
    tenant_id: str
    org_id: str
    exp: int
    role: Role = "viewer"
    epoch: int | None = None


Session: TypeAlias = LegacySession | TenantSession


def check_subject(field: str, value: str) -> str:
    """Spec 2.7: non-empty, at most 256 characters; ``|`` would split the cookie, so refused."""
    if not value:
        raise PayloadError(field, f"is empty; it must be 1 to {SUBJECT_MAX_CHARS} characters")
    if len(value) > SUBJECT_MAX_CHARS:
        raise PayloadError(field, f"is {len(value)} characters; the limit is {SUBJECT_MAX_CHARS}")
    if SEPARATOR in value:
        raise PayloadError(field, "contains '|', the cookie field separator")
    if any(0xD800 <= ord(char) <= 0xDFFF for char in value):
        raise PayloadError(field, "contains a lone surrogate, which UTF-8 cannot carry")
    return value


def encode_payload(session: Session) -> str:
    """The wire form of ``session``, after checking every field."""
    _check_number("exp", session.exp)
    if isinstance(session, LegacySession):
        fields = [check_subject("user_id", session.user_id), str(session.exp)]
    else:
        if session.role not in ROLES:
            raise PayloadError("role", f"is not one of {', '.join(ROLES)}", repr(session.role))
        fields = [
            check_subject("subject", session.subject),
            _identifier("tenant_id", session.tenant_id),
            _identifier("org_id", session.org_id),
            str(session.exp),
            f"r={session.role}",
        ]
    if session.epoch is not None:
        _check_number("epoch", session.epoch)
        fields.append(f"g={session.epoch}")
    return SEPARATOR.join(fields)


def decode_payload(payload: str) -> Session:
    """The typed session of a wire payload, or PayloadError saying what is wrong."""
    fields = payload.split(SEPARATOR)
    tags: dict[str, str] = {}
    while fields and fields[-1][:2] in ("g=", "r="):
        name, value = fields.pop().split("=", 1)
        if name in tags:
            raise PayloadError(
                f"{name}=", "appears twice", message=f"the {name}= tag appears twice"
            )
        tags[name] = value
    return _shape(fields, tags)


def _shape(fields: list[str], tags: dict[str, str]) -> Session:
    epoch = _parse_number("g", tags["g"]) if "g" in tags else None
    if len(fields) == 2:
        if "r" in tags:
            raise PayloadError(
                "r=",
                "is carried by a tenant (4-field) payload only",
                message="a legacy (2-field) payload carries no r= tag",
            )
        return LegacySession(
            check_subject("user_id", fields[0]), _parse_number("exp", fields[1]), epoch
        )
    if len(fields) == 4:
        subject, tenant_id, org_id, exp = fields
        role: Role = "operator" if tags.get("r") == "operator" else "viewer"
        return TenantSession(
            check_subject("subject", subject),
            _identifier("tenant_id", tenant_id),
            _identifier("org_id", org_id),
            _parse_number("exp", exp),
            role,
            epoch,
        )
    raise PayloadError(
        "fields",
        "are 2 or 4 before the tags",
        str(len(fields)),
        message=f"a payload has 2 or 4 fields before its tags, not {len(fields)}",
    )


def _identifier(field: str, value: str) -> str:
    try:
        return check_identifier(field, value)
    except ValueError as exc:
        rule = f"is not an identifier: {IDENTIFIER_RULE}"
        raise PayloadError(field, rule, repr(value), message=str(exc)) from None


def _parse_number(field: str, text: str) -> int:
    if not _NUMBER.fullmatch(text):
        raise PayloadError(field, "is not a non-negative integer in ASCII digits", repr(text))
    return int(text)


def _check_number(field: str, value: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 10**19:
        raise PayloadError(field, "is not an integer from 0 to 10**19 - 1", repr(value))
