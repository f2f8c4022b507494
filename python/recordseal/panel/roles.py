"""Roles of panel sessions (spec 3): operator groups from the environment, fail closed."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from recordseal.panel.sessions import LegacySession, Role, Session

OPERATOR_GROUPS_ENV = "RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS"
_SEPARATORS = re.compile(r"[,;]")


def operator_groups(environ: Mapping[str, str]) -> frozenset[str]:
    """Group names separated by commas or semicolons, trimmed; unset or blank: none."""
    raw = environ.get(OPERATOR_GROUPS_ENV, "")
    return frozenset(name for part in _SEPARATORS.split(raw) if (name := part.strip()))


def role_for(groups: Iterable[str], operator_groups: Collection[str]) -> Role:
    """``operator`` when an IdP group is an operator group (exact, case-sensitive match)."""
    return "operator" if any(group in operator_groups for group in groups) else "viewer"


def can_mutate(session: Session, passkey_role: Role | None = None) -> bool:
    """Whether ``session`` may send mutating requests (viewers get 403).

    A legacy (passkey) cookie carries no role: its role comes from the panel's per-passkey
    role store, passed as ``passkey_role``; without it the answer is no.
    """
    if isinstance(session, LegacySession):
        return passkey_role == "operator"
    return session.role == "operator"
