"""``PasskeyStore``: one-time links (single use, 15 minutes, stored hashed), challenges, roles;
on both backends of the panel's store."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from recordseal.panel.passkey_store import (
    CHALLENGE_LIFETIME,
    LINK_LIFETIME,
    LinkGone,
    PasskeyStore,
    hash_token,
)
from recordseal.settings import Settings
from recordseal.storage.base import Store
from recordseal.web.panel.passkeys import create_registration_link
from tests.backends import opened, query


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


Test = Callable[[PasskeyStore, Clock], Awaitable[None]]


def run(store: Store, test: Test) -> None:
    async def body() -> None:
        async with opened(store):
            await test(PasskeyStore(store.panel, clock := Clock()), clock)

    asyncio.run(body())


def test_a_link_is_single_use(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        token = await passkeys.create_link()
        assert await passkeys.link_status(token) == ("valid", "operator")
        role = await passkeys.register_with_link(
            hash_token(token), "operator-1", b"cred-1", b"key", 0
        )
        assert role == "operator"
        assert await passkeys.link_status(token) == ("used", "operator")
        with pytest.raises(LinkGone) as gone:
            await passkeys.register_with_link(hash_token(token), "operator-2", b"cred-2", b"k", 0)
        assert gone.value.status == "used"
        assert await passkeys.credential(b"cred-2") is None

    run(store, test)


def test_a_link_expires_after_15_minutes(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        token = await passkeys.create_link()
        clock.now += LINK_LIFETIME - 1
        assert (await passkeys.link_status(token))[0] == "valid"
        clock.now += 1
        assert (await passkeys.link_status(token))[0] == "expired"
        with pytest.raises(LinkGone) as gone:
            await passkeys.register_with_link(hash_token(token), "operator-1", b"cred-1", b"k", 0)
        assert gone.value.status == "expired"
        assert await passkeys.credential(b"cred-1") is None

    run(store, test)


def test_an_unknown_link_is_refused(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        assert await passkeys.link_status("no-such-token") == ("unknown", None)
        with pytest.raises(LinkGone) as gone:
            await passkeys.register_with_link(hash_token("no-such-token"), "u", b"c", b"k", 0)
        assert gone.value.status == "unknown"

    run(store, test)


def test_only_the_hash_of_a_token_is_stored(store: Store, store_settings: Settings) -> None:
    tokens = []

    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        tokens.append(await passkeys.create_link())

    run(store, test)
    (token,) = tokens
    assert len(token) >= 43  # 256 random bits, base64url
    assert query(store_settings, "SELECT token_hash FROM panel_links") == [(hash_token(token),)]
    if not store_settings.database_url:
        files = store_settings.data_dir.glob("recordseal.sqlite3*")
        assert token.encode() not in b"".join(path.read_bytes() for path in files)


def test_a_link_grants_its_role(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        token = await passkeys.create_link("viewer")
        assert (
            await passkeys.register_with_link(hash_token(token), "v-1", b"c", b"k", 3) == "viewer"
        )
        credential = await passkeys.credential(b"c")
        assert credential is not None
        assert (credential.user_id, credential.role, credential.sign_count) == ("v-1", "viewer", 3)
        await passkeys.update_sign_count(b"c", 4)
        assert (await passkeys.credential(b"c")).sign_count == 4  # type: ignore[union-attr]
        assert await passkeys.role("v-1") == "viewer"
        assert await passkeys.role("nobody") is None
        # A user with an operator passkey and a viewer one is an operator.
        other = await passkeys.create_link("operator")
        await passkeys.register_with_link(hash_token(other), "v-1", b"c2", b"k", 0)
        assert await passkeys.role("v-1") == "operator"
        with pytest.raises(ValueError, match="role"):
            await passkeys.create_link("admin")  # type: ignore[arg-type]

    run(store, test)


def test_a_challenge_is_single_use_and_short_lived(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        state = await passkeys.put_challenge("authenticate", b"challenge")
        pending = await passkeys.take_challenge(state, "authenticate")
        assert pending is not None and pending.challenge == b"challenge"
        assert await passkeys.take_challenge(state, "authenticate") is None

        late = await passkeys.put_challenge("authenticate", b"late")
        clock.now += CHALLENGE_LIFETIME
        assert await passkeys.take_challenge(late, "authenticate") is None

        other = await passkeys.put_challenge("register", b"r", user_id="u", token_hash=b"h")
        assert await passkeys.take_challenge(other, "authenticate") is None  # wrong, and gone
        assert await passkeys.take_challenge(other, "register") is None

    run(store, test)


def test_the_registration_url_carries_a_fresh_token(store: Store) -> None:
    async def test(passkeys: PasskeyStore, clock: Clock) -> None:
        url = await create_registration_link(passkeys, "operator", "http://localhost:9000/")
        prefix = "http://localhost:9000/login/register?token="
        assert url.startswith(prefix)
        assert await passkeys.link_status(url.removeprefix(prefix)) == ("valid", "operator")

    run(store, test)
