"""Upgrading: the panel files of earlier versions are imported into the database once, at
start and by ``recordseal migrate``, on both backends (docs/panel.md, "Upgrading")."""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import multiprocessing
import sqlite3
import time
from pathlib import Path

import msgspec
import pytest

from recordseal.cli import main
from recordseal.logs import Formatter
from recordseal.panel.legacy_import import import_panel_files
from recordseal.panel.passkey_store import PasskeyStore, hash_token
from recordseal.panel.sso.nonces import PendingLogins, seal_stash
from recordseal.panel.sso.oidc import OidcCodeConfig
from recordseal.panel.sso.outbound import OutboundPolicy
from recordseal.panel.sso.provider_store import ProviderFile, SecretBox
from recordseal.panel.sso.registry import ProviderRegistry
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from tests.backends import opened, query

KEK = b"k" * 32
#: The layout the versions before the database kept (panel/passkey_store.py, sso/nonces.py).
OLD_PASSKEYS = """
CREATE TABLE credentials (credential_id BLOB PRIMARY KEY, user_id TEXT NOT NULL,
    public_key BLOB NOT NULL, sign_count INTEGER NOT NULL, role TEXT NOT NULL,
    created_at REAL NOT NULL);
CREATE TABLE links (token_hash BLOB PRIMARY KEY, role TEXT NOT NULL, created_at REAL NOT NULL,
    expires_at REAL NOT NULL, used_at REAL);
CREATE TABLE challenges (state_id TEXT PRIMARY KEY, kind TEXT NOT NULL, challenge BLOB NOT NULL,
    user_id TEXT, token_hash BLOB, expires_at REAL NOT NULL);
"""
OLD_PENDING = """
CREATE TABLE pending_logins (nonce_hash BLOB PRIMARY KEY, provider_ref TEXT NOT NULL,
    return_url TEXT NOT NULL, stash BLOB, binding BLOB, expires_at REAL NOT NULL);
"""
NONCE = "a-pending-nonce-" + "n" * 30
LINK = "an-unused-link-token"
SECRET = "s3cr+t/with=equals:colon"


def provider(provider_id: str) -> OidcCodeConfig:
    return OidcCodeConfig(
        id=provider_id,
        tenant_id="acme",
        organization_id="eng",
        issuer="https://idp.example",
        client_id="panel",
        client_secret=SECRET,
        redirect_uri=f"https://panel.example/sso/{provider_id}/callback",
        authorization_endpoint="https://idp.example/authorize",
        token_endpoint="https://idp.example/token",
        jwks_uri="https://idp.example/jwks",
        algorithms=["RS256"],
    )


def write_old_files(data_dir: Path, providers: Path) -> None:
    """The files an earlier version left: two passkeys, a used and an unused link, a pending
    sign-in, epoch 4, an audit file with a line two workers both wrote, a provider file."""
    data_dir.mkdir(parents=True, exist_ok=True)
    now = time.time()
    with sqlite3.connect(data_dir / "panel.sqlite3") as db:
        db.executescript(OLD_PASSKEYS)
        db.executemany(
            "INSERT INTO credentials VALUES (?, ?, ?, ?, ?, ?)",
            [(b"cred-op", "operator-1", b"key", 5, "operator", now - 100),
             (b"cred-view", "viewer-1", b"key", 0, "viewer", now - 50)],
        )  # fmt: skip
        db.executemany(
            "INSERT INTO links VALUES (?, ?, ?, ?, ?)",
            [(hash_token("used"), "operator", now - 200, now + 700, now - 100),
             (hash_token(LINK), "viewer", now, now + 900, None)],
        )  # fmt: skip
    db.close()
    with sqlite3.connect(data_dir / "panel-sso.sqlite3") as db:
        db.executescript(OLD_PENDING)
        db.execute(
            "INSERT INTO pending_logins VALUES (?, ?, ?, ?, ?, ?)",
            (hashlib.sha256(NONCE.encode()).digest(), "acme-okta", "/tenants",
             seal_stash(NONCE, "the-verifier"), b"b" * 32, now + 600),
        )  # fmt: skip
        db.execute(
            "INSERT INTO pending_logins VALUES (?, ?, ?, ?, ?, ?)",
            (b"old" * 11, "acme-okta", "/", None, None, now - 1),  # expired: not imported
        )
    db.close()
    (data_dir / "panel-signout-epoch").write_text("4")
    bound = {"event": "fleet.bound", "fleet": "f1", "at": "2026-11-20T10:00:00.000000Z",
             "tenant": "acme", "details": {"preset": None}}  # fmt: skip
    sealed = {**bound, "event": "anchor.sealed", "details": {"size": 1}}
    lines = [json.dumps(bound), json.dumps(bound), json.dumps(sealed), "not json"]
    (data_dir / "audit.jsonl").write_text("\n".join(lines) + "\n")
    content = ProviderFile(1, [provider("acme-okta"), provider("acme-two")])
    providers.write_bytes(msgspec.json.encode(content))
    providers.chmod(0o644)


async def imported_state(store: Store) -> dict[str, object]:
    panel = store.panel
    passkeys = PasskeyStore(panel)
    registry = ProviderRegistry(OutboundPolicy(), panel, SecretBox(KEK))
    okta = await registry.resolve("acme-okta")
    status, login = await PendingLogins(panel).take(NONCE)
    return {
        "roles": (await passkeys.role("operator-1"), await passkeys.role("viewer-1")),
        "sign_count": (await passkeys.credential(b"cred-op")).sign_count,  # type: ignore[union-attr]
        "links": (await passkeys.link_status(LINK), (await passkeys.link_status("used"))[0]),
        "pending": (status, login.stash if login else None),
        "epoch": await panel.signout_epochs([""]),
        "audit": [(e.event, e.fleet, e.tenant) for _, e in await panel.audit_entries()],
        "providers": [row.provider_id for row in await panel.providers()],
        "secret": okta.config.client_secret if okta else None,  # type: ignore[attr-defined]
    }


EXPECTED = {
    "roles": ("operator", "viewer"),
    "sign_count": 5,
    "links": (("valid", "viewer"), "used"),
    "pending": ("ok", "the-verifier"),
    "epoch": {"": 4},
    "audit": [("fleet.bound", "f1", "acme")] * 2 + [("anchor.sealed", "f1", "acme")],
    "providers": ["acme-okta", "acme-two"],
    "secret": SECRET,
}


def test_the_files_of_an_earlier_version_are_imported_once(
    store: Store, store_settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir, providers = store_settings.data_dir, tmp_path / "providers.json"
    write_old_files(data_dir, providers)

    async def run() -> tuple[dict[str, object], list[str]]:
        async with opened(store):
            box = SecretBox(KEK)
            first = await import_panel_files(store.panel, data_dir, box, providers)
            again = await import_panel_files(store.panel, data_dir, box, providers)
            assert not again  # nothing left to import, no provider new
            assert await store.panel.remove_provider("acme-two", time.time())
            assert not await import_panel_files(store.panel, data_dir, box, providers)
            return await imported_state(store), first.files

    with caplog.at_level(logging.WARNING):
        state, files = asyncio.run(run())
    assert state == {**EXPECTED, "providers": ["acme-okta"]}  # a removed one stays removed
    assert sorted(files) == sorted(
        ["panel.sqlite3", "panel-sso.sqlite3", "panel-signout-epoch", "audit.jsonl"]
    )
    for name in files:
        assert not (data_dir / name).exists() and (data_dir / f"{name}.imported").exists()
    assert providers.exists()  # the operator's file stays where it is
    messages = [Formatter().format(record) for record in caplog.records]
    assert any(  # the file is world-readable
        "sso.provider_store_readable_by_others" in line and "mode=644" in line for line in messages
    )
    assert any("panel.import_line_skipped" in line and "line_number=4" in line for line in messages)
    assert any("panel.imported" in line and "audit_events=3" in line for line in messages)
    assert SECRET not in " ".join(messages)
    sealed = query(store_settings, "SELECT config, secret FROM panel_providers")
    assert all(SECRET.encode() not in bytes(c) + bytes(s) for c, s in sealed)


def test_an_import_interrupted_before_the_rename_adds_nothing_twice(
    store: Store, store_settings: Settings, tmp_path: Path
) -> None:
    data_dir, providers = store_settings.data_dir, tmp_path / "providers.json"
    write_old_files(data_dir, providers)
    copies = {p.name: p.read_bytes() for p in data_dir.iterdir() if p.is_file()}

    async def run() -> dict[str, object]:
        async with opened(store):
            await import_panel_files(store.panel, data_dir, SecretBox(KEK), providers)
            for name, content in copies.items():  # as if the renames never happened
                (data_dir / name).write_bytes(content)
            await import_panel_files(store.panel, data_dir, SecretBox(KEK), providers)
            return await imported_state(store)

    assert asyncio.run(run()) == EXPECTED


def _start_and_import(data_dir: str, providers: str, barrier: object, out: object) -> None:
    barrier.wait()  # type: ignore[attr-defined]

    async def run() -> None:
        async with opened(open_store(Settings(data_dir=Path(data_dir)))) as store:
            await import_panel_files(store.panel, Path(data_dir), SecretBox(KEK), Path(providers))

    try:
        asyncio.run(run())
        out.put("ok")  # type: ignore[attr-defined]
    except Exception as error:  # reported to the test, which fails on it
        out.put(repr(error))  # type: ignore[attr-defined]


def test_workers_starting_together_import_once(tmp_path: Path) -> None:
    data_dir, providers = tmp_path / "data", tmp_path / "providers.json"
    write_old_files(data_dir, providers)
    context = multiprocessing.get_context("fork")
    barrier, out = context.Barrier(4), context.Queue()
    workers = [
        context.Process(
            target=_start_and_import, args=(str(data_dir), str(providers), barrier, out)
        )
        for _ in range(4)
    ]
    for worker in workers:
        worker.start()
    assert [out.get(timeout=60) for _ in workers] == ["ok"] * 4
    for worker in workers:
        worker.join(60)

    async def state() -> dict[str, object]:
        async with opened(open_store(Settings(data_dir=data_dir))) as store:
            return await imported_state(store)

    assert asyncio.run(state()) == EXPECTED


def test_recordseal_migrate_imports_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir, providers = tmp_path / "data", tmp_path / "providers.json"
    write_old_files(data_dir, providers)
    (data_dir / "keys").mkdir()
    (data_dir / "keys" / "kek.key").write_bytes(KEK)
    monkeypatch.setenv("RECORDSEAL_PANEL_PROVIDER_STORE_PATH", str(providers))
    monkeypatch.delenv("RECORDSEAL_DATABASE_URL", raising=False)
    assert main(["migrate", "--data-dir", str(data_dir)]) == 0
    assert "up to date" in capsys.readouterr().out

    async def state() -> dict[str, object]:
        async with opened(open_store(Settings(data_dir=data_dir))) as store:
            return await imported_state(store)

    assert asyncio.run(state()) == EXPECTED
