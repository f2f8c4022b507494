"""From verified ID-token claims to a principal (docs/sso.md) and its groups (docs/sso.md).

Groups claim rules: with no claim name configured, the top-level ``groups`` claim is read (an
array of strings, or one string). With a configured, IdP-specific claim name, that claim is
read and object-shaped values contribute their keys (``{"admin": {...}}`` gives ``admin``,
also for objects inside an array). A string value is always one group: it is never split on
whitespace. Anything else (numbers, nested arrays) contributes nothing. The claim name is
matched exactly as a top-level member; some IdPs only put roles into the ID token when an
ID-token role-assertion option is enabled in the IdP application.
"""

from __future__ import annotations

from typing import Any

import msgspec

from recordseal.panel.sso.contract import Principal, PrincipalError
from recordseal.panel.sso.errors import InvalidCallback

DEFAULT_GROUPS_CLAIM = "groups"
#: Claims that bind a token to one exchange and say nothing about the person.
_NOT_KEPT = frozenset({"nonce", "at_hash", "c_hash", "s_hash"})


def groups_from(claims: dict[str, Any], claim_name: str | None) -> tuple[str, ...]:
    """The group names of ``claims`` under the rules of the module docstring, deduplicated in
    order of appearance."""
    custom = bool(claim_name)
    value = claims.get(claim_name if claim_name else DEFAULT_GROUPS_CLAIM)
    found: list[str] = []
    items = value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, str):
            found.append(item)
        elif isinstance(item, dict) and custom:
            found.extend(key for key in item if isinstance(key, str))
    return tuple(dict.fromkeys(name for name in found if name))


def _as_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return msgspec.json.encode(value, order="sorted").decode("utf-8")


def principal_from(
    claims: dict[str, Any], tenant_id: str, organization_id: str, groups_claim: str | None
) -> Principal:
    """The principal of verified claims; InvalidCallback when ``sub`` breaks docs/sso.md."""
    subject = claims.get("sub")
    email = claims.get("email")
    name = claims.get("name")
    try:
        return Principal(
            subject_id=subject if isinstance(subject, str) else "",
            tenant_id=tenant_id,
            organization_id=organization_id,
            email=email if isinstance(email, str) else None,
            display_name=name if isinstance(name, str) else None,
            groups=groups_from(claims, groups_claim),
            claims={k: _as_text(v) for k, v in claims.items() if k not in _NOT_KEPT},
        )
    except PrincipalError as exc:
        raise InvalidCallback(f"principal refused: {exc}") from None
