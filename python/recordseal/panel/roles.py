"""Roles of panel sessions (docs/panel.md, "Sessions"): operator groups from the settings, fail
closed."""

from __future__ import annotations

from collections.abc import Collection, Iterable

from recordseal.panel.sessions import LegacySession, Role, Session


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
