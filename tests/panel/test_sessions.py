"""The cookie payload wire form of spec 2.8: both shapes, the g= and r= tags, field rules."""

from __future__ import annotations

import pytest

from recordseal.panel.sessions import (
    SUBJECT_MAX_CHARS,
    LegacySession,
    PayloadError,
    TenantSession,
    decode_payload,
    encode_payload,
)


@pytest.mark.parametrize(
    ("wire", "session"),
    [
        ("alice|100", LegacySession("alice", 100)),
        ("alice|100|g=3", LegacySession("alice", 100, 3)),
        ("s|acme|prod|100", TenantSession("s", "acme", "prod", 100, "viewer")),
        ("s|acme|prod|100|r=operator", TenantSession("s", "acme", "prod", 100, "operator")),
        ("s|acme|prod|100|r=viewer", TenantSession("s", "acme", "prod", 100, "viewer")),
        ("s|acme|prod|100|g=7", TenantSession("s", "acme", "prod", 100, "viewer", 7)),
        ("s|acme|prod|100|r=operator|g=7", TenantSession("s", "acme", "prod", 100, "operator", 7)),
        ("s|acme|prod|100|g=7|r=operator", TenantSession("s", "acme", "prod", 100, "operator", 7)),
        ("g=1|0", LegacySession("g=1", 0)),
        ("r=x|acme|prod|0", TenantSession("r=x", "acme", "prod", 0)),
    ],
)
def test_decode(wire: str, session: LegacySession | TenantSession) -> None:
    assert decode_payload(wire) == session


def test_tenant_cookie_without_role_is_a_viewer() -> None:
    session = decode_payload("s|acme|prod|100")
    assert isinstance(session, TenantSession)
    assert session.role == "viewer"


def test_unknown_role_is_reduced_to_viewer() -> None:
    session = decode_payload("s|acme|prod|100|r=admin")
    assert isinstance(session, TenantSession)
    assert session.role == "viewer"


def test_legacy_cookie_has_no_tenant() -> None:
    session = decode_payload("alice|100")
    assert isinstance(session, LegacySession)
    assert not hasattr(session, "tenant_id")


@pytest.mark.parametrize(
    ("wire", "complaint"),
    [
        ("", "2 or 4 fields"),
        ("alice", "2 or 4 fields"),
        ("a|b|100", "2 or 4 fields"),
        ("s|acme|prod|x|100", "2 or 4 fields"),
        ("g=1", "2 or 4 fields"),
        ("alice|100|r=operator", "no r= tag"),
        ("alice|100|g=1|g=2", "twice"),
        ("s|acme|prod|100|r=operator|r=viewer", "twice"),
        ("alice|-1", "exp"),
        ("alice|01", "exp"),
        ("alice|1.5", "exp"),
        ("alice|", "exp"),
        ("alice|١٢", "exp"),
        ("alice|1_000", "exp"),
        ("alice|100|g=x", "g"),
        ("alice|100|g=", "g"),
        ("|100", "user_id is empty"),
        ("|acme|prod|100", "subject is empty"),
        ("s|ac me|prod|100", "tenant_id"),
        ("s|acme||100", "org_id"),
        ("s|acme|prod|100|x=1", "2 or 4 fields"),
    ],
)
def test_decode_refuses(wire: str, complaint: str) -> None:
    with pytest.raises(PayloadError, match=complaint):
        decode_payload(wire)


def test_encode_writes_role_then_epoch() -> None:
    session = TenantSession("s", "acme", "prod", 100, "operator", 4)
    assert encode_payload(session) == "s|acme|prod|100|r=operator|g=4"
    assert encode_payload(LegacySession("u", 5)) == "u|5"
    assert encode_payload(LegacySession("u", 5, 0)) == "u|5|g=0"


@pytest.mark.parametrize("length", [1, SUBJECT_MAX_CHARS])
def test_subject_length_limits_accepted(length: int) -> None:
    subject = "x" * length
    for session in (LegacySession(subject, 1), TenantSession(subject, "a", "b", 1)):
        assert decode_payload(encode_payload(session)) == session


@pytest.mark.parametrize("subject", ["", "x" * (SUBJECT_MAX_CHARS + 1)])
def test_subject_length_limits_refused(subject: str) -> None:
    with pytest.raises(PayloadError, match="subject"):
        encode_payload(TenantSession(subject, "a", "b", 1))
    with pytest.raises(PayloadError, match="user_id"):
        encode_payload(LegacySession(subject, 1))
    with pytest.raises(PayloadError):
        decode_payload(f"{subject}|1")


def test_too_long_subject_error_names_the_limit() -> None:
    with pytest.raises(PayloadError, match="257 characters; the limit is 256"):
        encode_payload(LegacySession("x" * 257, 1))


def test_subject_with_separator_is_refused() -> None:
    with pytest.raises(PayloadError, match=r"'\|'"):
        encode_payload(TenantSession("a|b", "acme", "prod", 1))


@pytest.mark.parametrize(
    ("session", "field"),
    [
        (TenantSession("s", "ac|me", "prod", 1), "tenant_id"),
        (TenantSession("s", "acme", "", 1), "org_id"),
        (TenantSession("s", "acme", "prod", -1), "exp"),
        (TenantSession("s", "acme", "prod", 1, epoch=-2), "epoch"),
        (TenantSession("s", "acme", "prod", 1, "admin"), "role"),  # type: ignore[arg-type]
        (LegacySession("u", 10**19), "exp"),
        (LegacySession("u", True), "exp"),
    ],
)
def test_encode_refuses_bad_fields(session: LegacySession | TenantSession, field: str) -> None:
    with pytest.raises(PayloadError, match=field):
        encode_payload(session)


def test_subject_with_lone_surrogate_is_refused() -> None:
    with pytest.raises(PayloadError, match="surrogate"):
        encode_payload(LegacySession("a\ud800", 1))
