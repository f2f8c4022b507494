"""``PasskeyStore``: one-time links (single use, 15 minutes, stored hashed), challenges, roles."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from recordseal.panel.passkey_store import (
    CHALLENGE_LIFETIME,
    LINK_LIFETIME,
    LinkGone,
    PasskeyStore,
    hash_token,
    passkey_context,
)
from recordseal.web.panel.passkeys import create_registration_link


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(tmp_path: Path, clock: Clock) -> PasskeyStore:
    return PasskeyStore(tmp_path / "panel.sqlite3", clock=clock)


def test_the_database_is_created_on_first_use_in_wal_mode(tmp_path: Path) -> None:
    store = passkey_context(tmp_path / "data")
    assert store.path == tmp_path / "data" / "panel.sqlite3"
    assert store.path.exists()
    with sqlite3.connect(store.path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_a_link_is_single_use(store: PasskeyStore) -> None:
    token = store.create_link()
    assert store.link_status(token) == ("valid", "operator")
    role = store.register_with_link(hash_token(token), "operator-1", b"cred-1", b"key", 0)
    assert role == "operator"
    assert store.link_status(token) == ("used", "operator")
    with pytest.raises(LinkGone) as gone:
        store.register_with_link(hash_token(token), "operator-2", b"cred-2", b"key", 0)
    assert gone.value.status == "used"
    assert store.credential(b"cred-2") is None


def test_a_link_expires_after_15_minutes(store: PasskeyStore, clock: Clock) -> None:
    token = store.create_link()
    clock.now += LINK_LIFETIME - 1
    assert store.link_status(token)[0] == "valid"
    clock.now += 1
    assert store.link_status(token)[0] == "expired"
    with pytest.raises(LinkGone) as gone:
        store.register_with_link(hash_token(token), "operator-1", b"cred-1", b"key", 0)
    assert gone.value.status == "expired"
    assert store.credential(b"cred-1") is None


def test_an_unknown_link_is_refused(store: PasskeyStore) -> None:
    assert store.link_status("no-such-token") == ("unknown", None)
    with pytest.raises(LinkGone) as gone:
        store.register_with_link(hash_token("no-such-token"), "u", b"c", b"k", 0)
    assert gone.value.status == "unknown"


def test_only_the_hash_of_a_token_is_stored(store: PasskeyStore) -> None:
    token = store.create_link()
    assert len(token) >= 43  # 256 random bits, base64url
    raw = b"".join(path.read_bytes() for path in store.path.parent.glob("panel.sqlite3*"))
    assert token.encode() not in raw
    with sqlite3.connect(store.path) as db:
        hashes = [row[0] for row in db.execute("SELECT token_hash FROM links")]
    assert hashes == [hash_token(token)]


def test_a_link_grants_its_role(store: PasskeyStore) -> None:
    token = store.create_link("viewer")
    assert store.register_with_link(hash_token(token), "viewer-1", b"c", b"k", 3) == "viewer"
    credential = store.credential(b"c")
    assert credential is not None
    assert (credential.user_id, credential.role, credential.sign_count) == ("viewer-1", "viewer", 3)
    store.update_sign_count(b"c", 4)
    assert store.credential(b"c").sign_count == 4  # type: ignore[union-attr]
    assert store.roles() == {"viewer-1": "viewer"}
    with pytest.raises(ValueError, match="role"):
        store.create_link("admin")  # type: ignore[arg-type]


def test_a_challenge_is_single_use_and_short_lived(store: PasskeyStore, clock: Clock) -> None:
    state = store.put_challenge("authenticate", b"challenge")
    pending = store.take_challenge(state, "authenticate")
    assert pending is not None and pending.challenge == b"challenge"
    assert store.take_challenge(state, "authenticate") is None

    late = store.put_challenge("authenticate", b"late")
    clock.now += CHALLENGE_LIFETIME
    assert store.take_challenge(late, "authenticate") is None

    other = store.put_challenge("register", b"r", user_id="u", token_hash=b"h")
    assert store.take_challenge(other, "authenticate") is None  # wrong ceremony, and gone
    assert store.take_challenge(other, "register") is None


def test_the_registration_url_carries_a_fresh_token(store: PasskeyStore) -> None:
    url = create_registration_link(store, base_url="http://localhost:9000/")
    prefix = "http://localhost:9000/login/register?token="
    assert url.startswith(prefix)
    assert store.link_status(url.removeprefix(prefix)) == ("valid", "operator")
