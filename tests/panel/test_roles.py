"""Operator groups and roles of spec 3: fail closed when the list is unset."""

from __future__ import annotations

import pytest

from recordseal.panel.roles import can_mutate, role_for
from recordseal.panel.sessions import LegacySession, TenantSession
from recordseal.settings import from_env


@pytest.mark.parametrize(
    ("raw", "groups"),
    [
        ("ops", {"ops"}),
        ("ops,admins", {"ops", "admins"}),
        ("ops;admins", {"ops", "admins"}),
        (" ops ; admins , sre ", {"ops", "admins", "sre"}),
        ("ops,,;admins,", {"ops", "admins"}),
        ("Panel Operators", {"Panel Operators"}),
        ("", set()),
        (" ,; ", set()),
    ],
)
def test_operator_groups_parsing(raw: str, groups: set[str]) -> None:
    settings = from_env({"RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS": raw})
    assert set(settings.panel_sso_operator_groups) == groups


def test_unset_means_no_operator_groups() -> None:
    groups = from_env({}).panel_sso_operator_groups
    assert groups == ()
    assert role_for(["ops", "admins"], groups) == "viewer"


@pytest.mark.parametrize(
    ("groups", "role"),
    [
        (["ops"], "operator"),
        (["staff", "ops"], "operator"),
        (["staff"], "viewer"),
        ([], "viewer"),
        (["OPS"], "viewer"),
        ([" ops"], "viewer"),
    ],
)
def test_role_for(groups: list[str], role: str) -> None:
    assert role_for(groups, frozenset({"ops", "admins"})) == role


def test_can_mutate_tenant_sessions() -> None:
    assert can_mutate(TenantSession("s", "acme", "prod", 1, "operator"))
    assert not can_mutate(TenantSession("s", "acme", "prod", 1, "viewer"))
    assert not can_mutate(TenantSession("s", "acme", "prod", 1))


def test_can_mutate_legacy_sessions_uses_the_passkey_role() -> None:
    session = LegacySession("u", 1)
    assert not can_mutate(session)
    assert not can_mutate(session, "viewer")
    assert can_mutate(session, "operator")


def test_tenant_session_ignores_a_passkey_role() -> None:
    assert not can_mutate(TenantSession("s", "acme", "prod", 1, "viewer"), "operator")
