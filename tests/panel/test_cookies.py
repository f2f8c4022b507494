"""Signed session cookies: MAC over every field, expiry, key rotation, sign-out-everywhere."""

from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
from hypothesis import given
from hypothesis import strategies as st

from recordseal.panel.cookies import (
    COOKIE_NAME,
    CookieKeyring,
    SigningKey,
    clear_cookie_header,
    set_cookie_header,
)
from recordseal.panel.sessions import (
    SUBJECT_MAX_CHARS,
    LegacySession,
    Session,
    TenantSession,
)

NOW = 1_800_000_000
EXP = NOW + 3600
K1 = SigningKey("k1", b"1" * 32)
K2 = SigningKey("k2", b"2" * 32)


def b64u(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64u(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.fixture
def keyring() -> CookieKeyring:
    return CookieKeyring(K1)


TENANT = TenantSession("alice@acme.example", "acme", "prod", EXP, "operator", 3)
LEGACY = LegacySession("dXNlci1oYW5kbGU", EXP, 2)


@pytest.mark.parametrize("session", [TENANT, LEGACY])
def test_issue_then_verify(keyring: CookieKeyring, session: Session) -> None:
    assert keyring.verify(keyring.issue(session), NOW) == session


def test_token_format_is_the_documented_one(keyring: CookieKeyring) -> None:
    token = keyring.issue(TENANT)
    encoded_payload, key_id, encoded_mac = token.split(".")
    payload = unb64u(encoded_payload)
    assert payload == b"alice@acme.example|acme|prod|1800003600|r=operator|g=3"
    assert key_id == "k1"
    expected = hmac.new(b"1" * 32, b"k1\x00" + payload, hashlib.sha256).digest()
    assert unb64u(encoded_mac) == expected
    assert "=" not in token


def test_verify_subject_of_both_shapes(keyring: CookieKeyring) -> None:
    assert keyring.verify_subject(keyring.issue(TENANT), NOW) == "alice@acme.example"
    assert keyring.verify_subject(keyring.issue(LEGACY), NOW) == "dXNlci1oYW5kbGU"
    assert keyring.verify_subject("garbage", NOW) is None


@pytest.mark.parametrize(
    "payload",
    [b"u|1800003600", b"s|acme|prod|1800003600", b"s|acme|prod|1800003600|g=0"],
)
def test_cookies_without_tags_keep_verifying(keyring: CookieKeyring, payload: bytes) -> None:
    assert keyring.verify(keyring.sign_payload(payload), NOW) is not None


def test_tenant_cookie_without_role_is_a_viewer(keyring: CookieKeyring) -> None:
    session = keyring.verify(keyring.sign_payload(b"s|acme|prod|1800003600"), NOW)
    assert session == TenantSession("s", "acme", "prod", EXP, "viewer", None)


def test_legacy_cookie_has_no_tenant(keyring: CookieKeyring) -> None:
    assert isinstance(keyring.verify(keyring.sign_payload(b"u|1800003600"), NOW), LegacySession)


TAMPERED_TENANT_FIELDS = [
    "mallory@acme.example|acme|prod|1800003600|r=operator|g=3",  # subject
    "alice@acme.example|globex|prod|1800003600|r=operator|g=3",  # tenant
    "alice@acme.example|acme|staging|1800003600|r=operator|g=3",  # organization
    "alice@acme.example|acme|prod|1900003600|r=operator|g=3",  # exp
    "alice@acme.example|acme|prod|1800003600|r=viewer|g=3",  # role
    "alice@acme.example|acme|prod|1800003600|g=3",  # role removed
    "alice@acme.example|acme|prod|1800003600|r=operator|g=4",  # epoch
    "alice@acme.example|acme|prod|1800003600|r=operator",  # epoch removed
]


@pytest.mark.parametrize("forged", TAMPERED_TENANT_FIELDS)
def test_editing_any_tenant_field_breaks_the_mac(keyring: CookieKeyring, forged: str) -> None:
    _, key_id, mac = keyring.issue(TENANT).split(".")
    assert keyring.verify(f"{b64u(forged.encode())}.{key_id}.{mac}", NOW) is None


@pytest.mark.parametrize(
    "forged",
    ["mallory|1800003600|g=2", "dXNlci1oYW5kbGU|1900003600|g=2", "dXNlci1oYW5kbGU|1800003600"],
)
def test_editing_any_legacy_field_breaks_the_mac(keyring: CookieKeyring, forged: str) -> None:
    _, key_id, mac = keyring.issue(LEGACY).split(".")
    assert keyring.verify(f"{b64u(forged.encode())}.{key_id}.{mac}", NOW) is None


def test_flipping_any_byte_of_the_token_breaks_it(keyring: CookieKeyring) -> None:
    token = keyring.issue(TENANT)
    for index in range(len(token)):
        flipped = "A" if token[index] != "A" else "B"
        assert keyring.verify(token[:index] + flipped + token[index + 1 :], NOW) is None


@pytest.mark.parametrize(
    "mangle",
    [
        lambda t: t + ".",
        lambda t: t + "A",
        lambda t: t[:-1],
        lambda t: t.replace(".", "", 1),
        lambda t: t + "==",
        lambda t: "." + t,
        lambda t: "",
        lambda t: "..",
    ],
)
def test_malformed_tokens_are_refused(keyring: CookieKeyring, mangle: object) -> None:
    assert callable(mangle)
    assert keyring.verify(mangle(keyring.issue(TENANT)), NOW) is None


def test_mac_of_another_key_id_is_refused() -> None:
    keyring = CookieKeyring(K1, [SigningKey("k0", b"1" * 32)])
    payload, _, mac = keyring.issue(TENANT).split(".")
    # Same secret, other key id: the id is bound into the MAC.
    assert keyring.verify(f"{payload}.k0.{mac}", NOW) is None


def test_non_canonical_base64_is_refused(keyring: CookieKeyring) -> None:
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    token = keyring.sign_payload(b"u|1800003600|g=1")  # 16 bytes: the last char has spare bits
    payload, key_id, mac = token.split(".")
    other = alphabet[alphabet.index(payload[-1]) ^ 1]
    assert unb64u(payload[:-1] + other) == unb64u(payload)
    assert keyring.verify(token, NOW) is not None
    assert keyring.verify(f"{payload[:-1]}{other}.{key_id}.{mac}", NOW) is None


def test_invalid_utf8_payload_is_refused(keyring: CookieKeyring) -> None:
    assert keyring.verify(keyring.sign_payload(b"\xff|1800003600"), NOW) is None


def test_expiry(keyring: CookieKeyring) -> None:
    token = keyring.issue(TENANT)
    assert keyring.verify(token, EXP - 1) is not None
    assert keyring.verify(token, EXP - 0.001) is not None
    assert keyring.verify(token, EXP) is None
    assert keyring.verify(token, EXP + 1) is None
    assert keyring.verify_subject(token, EXP) is None


def test_rotated_key_still_verifies_until_retired() -> None:
    keyring = CookieKeyring(K1)
    old = keyring.issue(TENANT)
    keyring.rotate(K2)
    new = keyring.issue(TENANT)
    assert keyring.active_key_id == "k2"
    assert new.split(".")[1] == "k2"
    assert keyring.verify(old, NOW) == TENANT
    assert keyring.verify(new, NOW) == TENANT
    keyring.retire("k1")
    assert keyring.key_ids == {"k2"}
    assert keyring.verify(old, NOW) is None
    assert keyring.verify(new, NOW) == TENANT


def test_verify_only_keys_at_construction() -> None:
    old = CookieKeyring(K1).issue(LEGACY)
    assert CookieKeyring(K2, [K1]).verify(old, NOW) == LEGACY
    assert CookieKeyring(K2).verify(old, NOW) is None


def test_unknown_key_is_refused() -> None:
    token = CookieKeyring(SigningKey("k9", b"9" * 32)).issue(TENANT)
    assert CookieKeyring(K1).verify(token, NOW) is None


def test_keyring_misuse_is_refused() -> None:
    keyring = CookieKeyring(K1, [K2])
    with pytest.raises(ValueError, match="active"):
        keyring.retire("k1")
    with pytest.raises(ValueError, match="not in the keyring"):
        keyring.retire("k7")
    with pytest.raises(ValueError, match="already"):
        keyring.rotate(SigningKey("k2", b"3" * 32))
    with pytest.raises(ValueError, match="twice"):
        CookieKeyring(K1, [SigningKey("k1", b"4" * 32)])


@pytest.mark.parametrize(
    ("key_id", "secret", "complaint"),
    [("", b"x" * 32, "key id"), ("a.b", b"x" * 32, "key id"), ("k", b"x" * 31, "31 secret")],
)
def test_signing_key_rules(key_id: str, secret: bytes, complaint: str) -> None:
    with pytest.raises(ValueError, match=complaint):
        SigningKey(key_id, secret)


def test_secret_stays_out_of_repr() -> None:
    assert "1111" not in repr(K1)


def test_sign_out_everywhere_epoch(keyring: CookieKeyring) -> None:
    tagged = keyring.issue(TENANT)  # g=3
    untagged = keyring.sign_payload(b"u|1800003600")
    assert keyring.verify(tagged, NOW, epoch=3) == TENANT
    assert keyring.verify(tagged, NOW, epoch=2) == TENANT
    assert keyring.verify(tagged, NOW, epoch=4) is None
    assert keyring.verify_subject(tagged, NOW, epoch=4) is None
    assert keyring.verify(untagged, NOW, epoch=0) is not None
    assert keyring.verify(untagged, NOW) is not None
    assert keyring.verify(untagged, NOW, epoch=1) is None


def test_issue_refuses_a_bad_subject(keyring: CookieKeyring) -> None:
    with pytest.raises(ValueError, match="256"):
        keyring.issue(LegacySession("x" * (SUBJECT_MAX_CHARS + 1), EXP))
    with pytest.raises(ValueError, match="separator"):
        keyring.issue(TenantSession("a|b", "acme", "prod", EXP))


def test_set_cookie_header(keyring: CookieKeyring) -> None:
    token = keyring.issue(TENANT)
    header = set_cookie_header(token, 3600)
    name_value, *attributes = header.split("; ")
    assert name_value == f"{COOKIE_NAME}={token}"
    assert COOKIE_NAME.startswith("__Host-")
    assert set(attributes) == {"Max-Age=3600", "Path=/", "Secure", "HttpOnly", "SameSite=Lax"}
    assert "domain" not in header.lower()


def test_clear_cookie_header() -> None:
    assert clear_cookie_header().startswith(f"{COOKIE_NAME}=; Max-Age=0;")


@pytest.mark.parametrize(("token", "max_age"), [("a;b", 1), ("a b", 1), ("a", -1), ("a", True)])
def test_set_cookie_header_refuses(token: str, max_age: int) -> None:
    with pytest.raises(ValueError):
        set_cookie_header(token, max_age)


subjects = st.text(min_size=1, max_size=SUBJECT_MAX_CHARS).filter(lambda s: "|" not in s)
identifiers = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", fullmatch=True)
times = st.integers(min_value=NOW + 1, max_value=10**19 - 1)
epochs = st.none() | st.integers(min_value=0, max_value=10**19 - 1)


@given(subjects, times, epochs)
def test_legacy_round_trip(subject: str, exp: int, epoch: int | None) -> None:
    session = LegacySession(subject, exp, epoch)
    assert CookieKeyring(K1).verify(CookieKeyring(K1).issue(session), NOW) == session


@given(subjects, identifiers, identifiers, times, st.sampled_from(["operator", "viewer"]), epochs)
def test_tenant_round_trip(
    subject: str, tenant: str, org: str, exp: int, role: str, epoch: int | None
) -> None:
    session = TenantSession(subject, tenant, org, exp, role, epoch)  # type: ignore[arg-type]
    keyring = CookieKeyring(K1)
    token = keyring.issue(session)
    assert keyring.verify(token, NOW) == session
    assert keyring.verify_subject(token, NOW) == subject
