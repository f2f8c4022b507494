"""``recordseal backup`` (docs/operations.md, "Backup, restore and failover"): a consistent copy
of a SQLite data directory taken while a real ``serve`` ingests, its manifest, what it never
copies, its refusals, and a service started on the restored copy."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from recordseal import chain
from recordseal.crypto.signing import verify_header_signature
from recordseal.storage.backup import FORMAT, copy_database
from tests.servers import create_token, free_port, kill_service, start_service

STREAMS = ("alpha", "beta")
TRANSPARENCY_FILE = Path("2026-11-21/acme/default.log")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``recordseal ARGS`` with no RECORDSEAL_ variable of the shell (but ``env``)."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    return subprocess.run(
        [sys.executable, "-m", "recordseal.cli", *args],
        capture_output=True, text=True, env={**clean, **(env or {})}, timeout=300, check=False,
    )  # fmt: skip


def body(client: int, i: int) -> dict[str, Any]:
    return {
        "stream": STREAMS[i % 2],
        "record_type": "backup.test",
        "occurred_at": "2026-11-21T08:00:00Z",
        "subject_id": f"subject-{client}-{i % 5}",
        "payload": {"client": client, "i": i, "pad": "x" * 300},
    }


async def ingest_around_backup(port: int, token: str, target: Path, data: Path) -> dict[str, Any]:
    """Clients post single records and batches while ``recordseal backup`` runs as a process
    of its own, started once 300 records are acknowledged; ingest goes on until 200 more are
    acknowledged after it has ended."""
    acknowledged: list[dict[str, Any]] = []
    stop = asyncio.Event()
    headers = {"Authorization": f"Bearer {token}"}

    async def client(number: int) -> None:
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=30) as http:
            i = 0
            while not stop.is_set():
                i += 1
                if i % 3 == 0:
                    batch = [body(number, i * 100 + k) for k in range(20)]
                    answer = await http.post(
                        "/v1/records:batch", headers=headers, json={"records": batch}
                    )
                    assert answer.status_code == 200, answer.text
                    results = answer.json()["results"]
                    assert all("record" in r for r in results), results
                    acknowledged.extend(r["record"] for r in results)
                else:
                    answer = await http.post("/v1/records", headers=headers, json=body(number, i))
                    assert answer.status_code == 201, answer.text
                    acknowledged.append(answer.json())

    async def backup() -> dict[str, Any]:
        while len(acknowledged) < 300:
            await asyncio.sleep(0.01)
        before = list(acknowledged)  # acknowledged before the backup began
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "recordseal.cli", "backup", "--data-dir", str(data),
            "--to", str(target), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        out, err = await process.communicate()
        during = len(acknowledged) - len(before)
        after = len(acknowledged) + 200
        while len(acknowledged) < after:
            await asyncio.sleep(0.01)
        stop.set()
        return {
            "before": before,
            "during": during,
            "returncode": process.returncode,
            "stdout": out.decode(),
            "stderr": err.decode(),
        }

    outcome, *_ = await asyncio.gather(backup(), *(client(n) for n in range(8)))
    outcome["all"] = acknowledged
    return outcome


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_backup_taken_during_ingest_is_consistent_whole_and_restores(tmp_path: Path) -> None:
    data, target = tmp_path / "data", tmp_path / "backups" / "first"
    data.mkdir(mode=0o700)
    port = free_port()
    server = start_service(data, port, workers=2)
    try:
        token = create_token(data, "acme")
        headers = {"Authorization": f"Bearer {token}"}
        for name in STREAMS:
            created = httpx.post(
                f"http://127.0.0.1:{port}/v1/streams", json={"name": name}, headers=headers
            )
            assert created.status_code == 201
        # What a backup must leave behind, and a transparency file it must take.
        assert any((data / "journal").glob("*.jsonl"))  # the service's continuity journal
        (data / "transparency" / TRANSPARENCY_FILE).parent.mkdir(parents=True)
        (data / "transparency" / TRANSPARENCY_FILE).write_text('{"format": "x"}\n')
        outcome = asyncio.run(ingest_around_backup(port, token, target, data))
    finally:
        kill_service(server)

    assert outcome["returncode"] == 0, outcome["stderr"]
    lines = outcome["stdout"].splitlines()
    assert len(lines) == 1 and lines[0].startswith("recordseal: backed up recordseal.sqlite3")
    assert outcome["during"] > 0  # the service went on acknowledging while the copy ran

    # What DIR holds: the store, service.json, the transparency files, the manifest; no keys,
    # no journal, no rate-limit counters, no WAL left beside the copy.
    assert (data / "keys").is_dir() and (data / "ratelimit.sqlite3").is_file()
    assert sorted(p.name for p in target.iterdir()) == [
        "backup.json", "recordseal.sqlite3", "service.json", "transparency",
    ]  # fmt: skip
    assert (target / "transparency" / TRANSPARENCY_FILE).read_text() == '{"format": "x"}\n'
    assert (target / "service.json").read_bytes() == (data / "service.json").read_bytes()
    assert stat.S_IMODE((target / "recordseal.sqlite3").stat().st_mode) == 0o600

    copy = target / "recordseal.sqlite3"
    with sqlite3.connect(f"{copy.as_uri()}?mode=ro", uri=True) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        streams = db.execute(
            "SELECT id, tenant, name, next_seq, head FROM streams ORDER BY tenant, name"
        ).fetchall()
        stored = dict(db.execute("SELECT record_id, seq FROM records").fetchall())
        keys = dict(db.execute("SELECT key_id, public_key FROM signing_keys").fetchall())
        # A log of no tenant (the aggregate) is stored under '' and named null in the manifest.
        logs = db.execute(
            "SELECT nullif(tenant, ''), fleet, origin, size FROM logs"
            " ORDER BY ifnull(tenant, ''), fleet"
        ).fetchall()
        version = db.execute("SELECT max(version) FROM schema_version").fetchone()[0]
        # Every stream dense from 1 to next_seq - 1, every link and signature verifies, and
        # the stream's head is its last chain leaf.
        for stream_id, tenant, name, next_seq, head in streams:
            rows = db.execute(
                "SELECT seq, header, signature, chain_leaf FROM records WHERE stream_id = ?"
                " ORDER BY seq",
                (stream_id,),
            ).fetchall()
            assert [seq for seq, *_ in rows] == list(range(1, next_seq))
            chain.verify_links(tenant, name, [header for _, header, _, _ in rows])
            for _, header, signature, leaf in rows:
                assert leaf == chain.chain_leaf(header)
                assert verify_header_signature(
                    keys[json.loads(header)["key_id"]], header, signature
                )
            assert head == rows[-1][3]
    assert {name for _, _, name, _, _ in streams} == set(STREAMS)

    # Every record acknowledged before the backup began is in the copy, at its sequence number.
    assert len(outcome["before"]) >= 300
    for record in outcome["before"]:
        assert stored.get(record["record_id"]) == record["seq"]
    assert len(stored) < len(outcome["all"])  # ingest went on past the copy's snapshot

    manifest = json.loads((target / "backup.json").read_text())
    assert manifest["format"] == FORMAT
    assert manifest["source"] == str(data.resolve())
    assert manifest["schema_version"] == version
    assert manifest["databases"] == [
        {
            "file": "recordseal.sqlite3",
            "sha256": sha256(copy),
            "bytes": copy.stat().st_size,
            "pages": manifest["databases"][0]["pages"],
        }
    ]
    assert manifest["streams"] == [
        {"tenant": tenant, "name": name, "next_seq": next_seq}
        for _, tenant, name, next_seq, _ in streams
    ]
    assert manifest["logs"] == [
        {"tenant": tenant, "fleet": fleet, "origin": origin, "size": size}
        for tenant, fleet, origin, size in logs
    ]
    assert set(manifest["not_copied"]) == {"keys", "journal"}
    assert set(manifest["skipped"]) == {"ratelimit.sqlite3"}
    assert manifest["transparency"]["files"] == 1

    # Restored as docs/operations.md says: a data directory with the keys (from their own
    # backup) and the backup's database; the service serves every record the copy holds.
    restored = tmp_path / "restored"
    restored.mkdir(mode=0o700)
    shutil.copytree(data / "keys", restored / "keys")
    shutil.copy2(copy, restored / "recordseal.sqlite3")
    port = free_port()
    server = start_service(restored, port, workers=1)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers) as http:
            for record in outcome["before"]:
                view = http.get(f"/v1/records/{record['record_id']}")
                assert view.status_code == 200
                assert view.json()["header"] == record["header"]
            later = [r for r in outcome["all"] if r["record_id"] not in stored]
            assert http.get(f"/v1/records/{later[0]['record_id']}").status_code == 404
    finally:
        kill_service(server)


def make_store(data: Path) -> None:
    """A data directory with its record store, as ``token create`` leaves it."""
    done = run("token", "create", "--data-dir", str(data), "--tenant", "acme", "--create-data-dir")
    assert done.returncode == 0, done.stderr


def legacy_database(path: Path, rows: int = 500) -> None:
    """A SQLite file as earlier versions left in the data directory (``panel.sqlite3``)."""
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE credentials (credential_id TEXT, pad TEXT)")
        db.execute("CREATE INDEX by_id ON credentials (credential_id)")
        db.executemany(
            "INSERT INTO credentials VALUES (?, ?)", [(f"c{i:05d}", "p" * 50) for i in range(rows)]
        )
    sqlite3.connect(path).close()


def test_every_database_of_the_data_directory_is_copied_but_counters_keys_and_journal(
    tmp_path: Path,
) -> None:
    data, target = tmp_path / "data", tmp_path / "target"
    make_store(data)
    legacy_database(data / "panel.sqlite3")  # not imported yet: its rows are state
    legacy_database(data / "ratelimit.sqlite3")  # counters of the current window
    (data / "notes.sqlite3").write_text("not a database")
    (data / "panel-sso.sqlite3.imported").write_bytes((data / "panel.sqlite3").read_bytes())
    for part in ("keys", "journal"):
        (data / part).mkdir()
        (data / part / "secret").write_text(part)
    target.mkdir()  # an empty directory is used as it is
    done = run("backup", "--data-dir", str(data), "--to", str(target), "--json")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert sorted(p.name for p in target.iterdir()) == [
        "backup.json", "panel.sqlite3", "recordseal.sqlite3",
    ]  # fmt: skip
    manifest = json.loads((target / "backup.json").read_text())
    assert printed == {"target": str(target), **manifest}
    assert [d["file"] for d in manifest["databases"]] == ["recordseal.sqlite3", "panel.sqlite3"]
    for described in manifest["databases"]:
        assert described["sha256"] == sha256(target / described["file"])
    with sqlite3.connect(target / "panel.sqlite3") as db:
        assert db.execute("SELECT count(*) FROM credentials").fetchone() == (500,)
    assert manifest["streams"] == [] and manifest["files"] == []


def test_a_non_empty_target_or_one_inside_the_data_directory_is_refused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_store(data)
    used = tmp_path / "used"
    used.mkdir()
    (used / "something").write_text("kept")
    refused = run("backup", "--data-dir", str(data), "--to", str(used))
    assert refused.returncode == 2
    assert f"backup target {used} is not empty" in refused.stderr
    assert [p.name for p in used.iterdir()] == ["something"]
    for inside in (data / "backups", data):
        refused = run("backup", "--data-dir", str(data), "--to", str(inside))
        assert refused.returncode == 2
        assert f"backup target {inside} is inside the data directory" in refused.stderr
    assert not (data / "backups").exists()
    missing = run("backup", "--data-dir", str(tmp_path / "nowhere"), "--to", str(tmp_path / "b"))
    assert missing.returncode == 2 and "no record store to back up" in missing.stderr
    assert not (tmp_path / "b").exists()


@pytest.mark.parametrize("how", ["option", "environment"])
def test_postgresql_is_refused_with_the_way_to_back_it_up(tmp_path: Path, how: str) -> None:
    url = "postgresql://recordseal@db.invalid:5432/recordseal"
    target = tmp_path / "target"
    if how == "option":
        done = run("backup", "--database-url", url, "--to", str(target))
    else:
        done = run("backup", "--to", str(target), env={"RECORDSEAL_DATABASE_URL": url})
    assert done.returncode == 2
    assert done.stdout == "" and len(done.stderr.splitlines()) == 1
    for words in ("pg_basebackup", "pgBackRest", "WAL archiving", "docs/operations.md"):
        assert words in done.stderr
    assert "db.invalid" not in done.stderr  # a URL may carry a password: never echoed
    assert not target.exists()


def test_a_copy_that_fails_its_integrity_check_is_removed_exit_1(tmp_path: Path) -> None:
    data, target = tmp_path / "data", tmp_path / "target"
    make_store(data)
    damaged = data / "panel.sqlite3"
    legacy_database(damaged)
    with sqlite3.connect(damaged) as db:
        page_size = db.execute("PRAGMA page_size").fetchone()[0]
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'by_id'").fetchone()[0]
        leaf = db.execute(
            "SELECT pageno FROM dbstat WHERE name = 'by_id' AND pagetype = 'leaf' LIMIT 1"
        ).fetchone()
    page = leaf[0] if leaf else root
    raw = bytearray(damaged.read_bytes())
    end = page * page_size  # the cells sit at the end of their page: scramble the last 200 bytes
    raw[end - 200 : end] = bytes(200 * [0x01])
    damaged.write_bytes(bytes(raw))
    done = run("backup", "--data-dir", str(data), "--to", str(target))
    assert done.returncode == 1, done.stdout + done.stderr
    assert "panel.sqlite3" in done.stderr and done.stdout == ""
    assert not target.exists()  # made by the backup, removed with what it held


def test_the_copy_is_one_snapshot_while_another_connection_commits_between_its_steps(
    tmp_path: Path,
) -> None:
    """A stepped backup starts over whenever another connection commits between two steps (and
    under steady ingest may never end); the copy runs inside one read transaction instead, so
    it never starts over and holds exactly the rows of its snapshot."""
    source = tmp_path / "source.sqlite3"
    with sqlite3.connect(source, isolation_level=None) as db:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("CREATE TABLE t (n INTEGER PRIMARY KEY, pad BLOB)")
        db.executemany("INSERT INTO t VALUES (?, randomblob(4000))", [(i,) for i in range(1, 2001)])
    writer = sqlite3.connect(source, isolation_level=None, timeout=30)
    steps: list[tuple[int, int]] = []

    def commit_between_steps(remaining: int, total: int) -> None:
        steps.append((remaining, total))
        if len(steps) <= 1000:  # a bound, so that a copy that starts over still ends
            writer.execute("INSERT INTO t (pad) VALUES (randomblob(100))")

    try:
        pages = copy_database(source, tmp_path / "copy.sqlite3", 16, commit_between_steps)
    finally:
        writer.close()
    assert len(steps) > 100  # many steps, a commit after each
    remaining = [r for r, _ in steps]
    assert remaining == sorted(remaining, reverse=True) and remaining[-1] == 0  # never restarted
    assert pages == steps[-1][1]
    with sqlite3.connect(tmp_path / "copy.sqlite3") as copy:
        assert copy.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert copy.execute("SELECT count(*), max(n) FROM t").fetchone() == (2000, 2000)
    with sqlite3.connect(source) as db:  # the commits happened, after the snapshot
        assert db.execute("SELECT count(*) FROM t").fetchone()[0] == 2000 + len(steps)
