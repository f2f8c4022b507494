"""The daily transparency log files (spec panel 6.3): both layouts, and replay of a day's
file back to the genesis root by the standalone replayer, which refuses tampered files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from recordseal.core import leaf_hash
from recordseal.fleet.transparency import day_file, log_file_path, write_day
from recordseal.merkle.genesis import tenant_genesis
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.storage.base import Store
from recordseal.tlog import CosignatureSigner, Ed25519Signer
from recordseal.verify.transparency import LogFileName, TransparencyLogError, replay_log_file

from .support import LOG_SEED, SERVICE, ingest, log_signer, seal, using

DAY1, DAY2, DAY3 = date(2026, 11, 20), date(2026, 11, 21), date(2026, 11, 22)
WITNESS = CosignatureSigner.from_seed("witness.test/w1", bytes(32))
AFTER_MIDNIGHT = datetime(2026, 11, 21, 0, 10, tzinfo=UTC)  # DAY2, once DAY1 has settled


async def history(store: Store) -> dict[str, Any]:
    """acme/default: anchors 3 (day 1), 6 and 7 (day 2, 7 cosigned); a legacy fleet f1 and
    globex's f1 hold their genesis anchor only (day 1)."""
    await ingest(store, "acme", 2)
    first = await seal(store, "acme", "default", "2026-11-20T10:00:00.000000Z")
    await ingest(store, "acme", 3)
    second = await seal(store, "acme", "default", "2026-11-21T09:00:00.000000Z")
    await ingest(store, "acme", 1)
    third = await seal(store, "acme", "default", "2026-11-21T23:59:59.999999Z")
    assert first and second and third
    cosignature = WITNESS.cosign(third.note.split("\n\n")[0] + "\n", 1_790_000_000)
    await store.logs.add_cosignature(third.origin, third.size, WITNESS.name, cosignature.line)
    await seal(store, None, "f1", "2026-11-20T11:00:00.000000Z")
    await seal(store, "globex", "f1", "2026-11-20T12:00:00.000000Z")
    return {"first": first, "second": second, "third": third}


def written(store: Store, root: Path, day: date) -> list[Path]:
    async def body(store: Store) -> list[Path]:
        await history(store)
        return await write_day(store.logs, root, day)

    return using(store, body)


def test_the_two_layouts(store: Store, tmp_path: Path) -> None:
    paths = written(store, tmp_path, DAY1)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in paths) == [
        "2026-11-20/acme/default.log",
        "2026-11-20/f1.log",  # no tenant: legacy or single-tenant layout
        "2026-11-20/globex/f1.log",
    ]
    assert log_file_path(tmp_path, DAY1, None, "f1") == tmp_path / "2026-11-20" / "f1.log"
    assert log_file_path(tmp_path, DAY1, "acme", "f1") == tmp_path / "2026-11-20/acme/f1.log"


def acme_verifier() -> Any:
    return log_signer("acme", "default").verifier()


def test_a_days_file_replays_to_the_genesis_root(store: Store, tmp_path: Path) -> None:
    written(store, tmp_path, DAY2)
    data = (tmp_path / "2026-11-21/acme/default.log").read_bytes()
    replayed = replay_log_file(
        data, log_verifiers=[acme_verifier()], witness_verifiers=[WITNESS.verifier()]
    )
    assert replayed.genesis == tenant_genesis("acme", "default")
    assert (replayed.tenant, replayed.fleet, replayed.date) == ("acme", "default", "2026-11-21")
    assert replayed.origin == f"{SERVICE}/acme/default"
    assert replayed.previous is not None and replayed.previous[0] == 3
    assert [(a.size, a.cosigned_by) for a in replayed.anchors] == [(6, ()), (7, (WITNESS.name,))]
    header = json.loads(data.split(b"\n")[0])
    assert header["format"] == "recordseal-transparency-log/v1"


def test_the_first_day_replays_from_size_one(store: Store, tmp_path: Path) -> None:
    written(store, tmp_path, DAY1)
    replayed = replay_log_file((tmp_path / "2026-11-20/acme/default.log").read_bytes())
    assert replayed.previous is None and [a.size for a in replayed.anchors] == [3]
    legacy = replay_log_file((tmp_path / "2026-11-20/f1.log").read_bytes())
    assert legacy.tenant is None
    assert [(a.size, a.root) for a in legacy.anchors] == [
        (1, leaf_hash(tenant_genesis(None, "f1")))
    ]


def test_a_day_without_anchors_still_has_its_file(store: Store, tmp_path: Path) -> None:
    written(store, tmp_path, DAY3)
    replayed = replay_log_file((tmp_path / "2026-11-22/acme/default.log").read_bytes())
    assert replayed.anchors == () and replayed.latest is not None and replayed.latest[0] == 7


def test_no_file_before_a_logs_first_anchor(store: Store, tmp_path: Path) -> None:
    assert written(store, tmp_path, date(2026, 11, 19)) == []


def test_the_job_keeps_existing_files_unless_asked_to_replace(store: Store, tmp_path: Path) -> None:
    async def body(store: Store) -> tuple[list[Path], list[Path]]:
        await history(store)
        await write_day(store.logs, tmp_path, DAY1)
        kept = await write_day(store.logs, tmp_path, DAY1, replace=False)
        return kept, await write_day(store.logs, tmp_path, DAY1)

    kept, replaced = using(store, body)
    assert kept == [] and len(replaced) == 3


# --- tampering -----------------------------------------------------------------------------


@pytest.fixture
def day2(store: Store, tmp_path: Path) -> list[dict[str, Any]]:
    written(store, tmp_path, DAY2)
    data = (tmp_path / "2026-11-21/acme/default.log").read_bytes()
    return [json.loads(line) for line in data.splitlines()]


def encode(lines: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(line).encode() + b"\n" for line in lines)


def refused(lines: list[dict[str, Any]], code: str, line: int, **keys: Any) -> None:
    with pytest.raises(TransparencyLogError) as caught:
        replay_log_file(encode(lines), **keys)
    assert (caught.value.code, caught.value.line) == (code, line), str(caught.value)


def flip(b64text: str) -> str:
    import base64

    raw = bytearray(base64.b64decode(b64text))
    raw[0] ^= 1
    return base64.b64encode(bytes(raw)).decode()


def test_the_untouched_file_replays(day2: list[dict[str, Any]]) -> None:
    replay_log_file(encode(day2), log_verifiers=[acme_verifier()])


def test_a_changed_anchor_root_fails(day2: list[dict[str, Any]]) -> None:
    day2[1]["root"] = flip(day2[1]["root"])
    refused(day2, "proof_invalid", 2)


def test_a_changed_proof_hash_fails(day2: list[dict[str, Any]]) -> None:
    day2[2]["proof"][0] = flip(day2[2]["proof"][0])
    refused(day2, "proof_invalid", 3)


def test_a_dropped_anchor_fails(day2: list[dict[str, Any]]) -> None:
    del day2[1]
    refused(day2, "proof_invalid", 2)


def test_swapped_anchors_fail(day2: list[dict[str, Any]]) -> None:
    day2[1], day2[2] = day2[2], day2[1]
    refused(day2, "proof_invalid", 2)


def test_another_tenant_in_the_header_fails(day2: list[dict[str, Any]]) -> None:
    day2[0]["tenant"] = "globex"
    refused(day2, "genesis_mismatch", 1)


def test_a_forged_genesis_fails(day2: list[dict[str, Any]]) -> None:
    day2[0]["genesis"] = flip(day2[0]["genesis"])
    refused(day2, "genesis_mismatch", 1)


def test_a_changed_previous_anchor_fails(day2: list[dict[str, Any]]) -> None:
    day2[0]["previous"]["root"] = flip(day2[0]["previous"]["root"])
    refused(day2, "proof_invalid", 1)


def test_an_anchor_moved_to_another_day_fails(day2: list[dict[str, Any]]) -> None:
    day2[2]["created_at"] = "2026-11-22T00:00:00.000000Z"
    refused(day2, "date_mismatch", 3)


def test_a_checkpoint_of_another_anchor_fails(day2: list[dict[str, Any]]) -> None:
    day2[2]["checkpoint"] = day2[1]["checkpoint"]
    refused(day2, "checkpoint_mismatch", 3)


def test_a_checkpoint_signed_by_another_key_fails_when_the_log_key_is_given(
    day2: list[dict[str, Any]],
) -> None:
    other = Ed25519Signer.from_seed(f"{SERVICE}/acme/default", bytes(32))
    assert bytes(32) != LOG_SEED
    refused(day2, "checkpoint_invalid", 2, log_verifiers=[other.verifier()])


def test_a_tampered_checkpoint_signature_fails(day2: list[dict[str, Any]]) -> None:
    text, signature = day2[1]["checkpoint"].split("\n\n")
    prefix, encoded = signature.rstrip("\n").rsplit(" ", 1)
    day2[1]["checkpoint"] = f"{text}\n\n{prefix} {flip(encoded)}\n"
    refused(day2, "checkpoint_invalid", 2, log_verifiers=[acme_verifier()])


@pytest.mark.parametrize(
    ("data", "code", "line"),
    [
        (b"", "file_malformed", 0),
        (b'{"format": 1}', "file_malformed", 0),
        (b"not json\n", "line_malformed", 1),
    ],
)
def test_malformed_files_fail(data: bytes, code: str, line: int) -> None:
    with pytest.raises(TransparencyLogError) as caught:
        replay_log_file(data)
    assert (caught.value.code, caught.value.line) == (code, line)


def test_a_truncated_or_extended_file_fails(day2: list[dict[str, Any]]) -> None:
    data = encode(day2)
    with pytest.raises(TransparencyLogError, match="final newline"):
        replay_log_file(data[:-1])
    with pytest.raises(TransparencyLogError) as caught:
        replay_log_file(data + b"garbage\n")
    assert (caught.value.code, caught.value.line) == ("line_malformed", 4)
    day2[1]["extra"] = 1
    refused(day2, "line_malformed", 2)


def test_the_replayer_imports_neither_storage_nor_the_web_layer() -> None:
    code = (
        "import sys, recordseal.verify.transparency\n"
        "bad = [m for m in sys.modules if m.startswith(('recordseal.storage', 'recordseal.web',"
        " 'recordseal.fleet', 'recordseal.ledger.sealer', 'litestar'))]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_day_file_is_none_for_an_unknown_scope(store: Store) -> None:
    async def body(store: Store) -> None:
        await history(store)
        logs = {(log.tenant, log.fleet): log for log in await store.logs.anchor_logs()}
        assert await day_file(store.logs, logs[("globex", "f1")], date(2026, 11, 1)) is None

    using(store, body)


def leadership(answer: bool) -> tuple[Callable[[], Awaitable[bool]], asyncio.Event]:
    """The in-service job's leadership check, always ``answer``, and the event set when it is
    asked a second time: the job has then finished a whole round."""
    asked = asyncio.Event()
    rounds = 0

    async def is_leader() -> bool:
        nonlocal rounds
        rounds += 1
        if rounds == 2:
            asked.set()
        return answer

    return is_leader, asked


def test_the_in_service_job_writes_yesterday_once_and_only_as_leader(
    store: Store, tmp_path: Path
) -> None:
    from recordseal.fleet.transparency import run_daily

    async def body(store: Store) -> None:
        await history(store)
        never, follower_done = leadership(False)
        always, leader_done = leadership(True)
        follower = asyncio.create_task(
            run_daily(store.logs, tmp_path / "f", never, 0.01, now=lambda: AFTER_MIDNIGHT)
        )
        leader = asyncio.create_task(
            run_daily(store.logs, tmp_path / "l", always, 0.01, now=lambda: AFTER_MIDNIGHT)
        )
        await asyncio.wait_for(asyncio.gather(follower_done.wait(), leader_done.wait()), 120)
        follower.cancel()
        leader.cancel()

    using(store, body)
    assert not (tmp_path / "f").exists()
    files = sorted(
        p.relative_to(tmp_path / "l").as_posix() for p in (tmp_path / "l").rglob("*.log")
    )
    assert files == ["2026-11-20/acme/default.log", "2026-11-20/f1.log", "2026-11-20/globex/f1.log"]


def test_the_in_service_job_waits_for_the_day_to_settle(store: Store, tmp_path: Path) -> None:
    """At 00:02 UTC an anchor stamped 23:59:59 may still be committing, and a written file is
    kept: the day is written only once it has settled (SETTLE after midnight)."""
    from recordseal.fleet.transparency import SETTLE, run_daily

    async def round_at(store: Store, at: datetime, folder: str) -> None:
        """One whole round of the job at ``at``: it has finished once it asks again."""
        leader, asked = leadership(True)
        job = asyncio.create_task(
            run_daily(store.logs, tmp_path / folder, leader, 0, now=lambda: at)
        )
        await asyncio.wait_for(asked.wait(), 120)
        job.cancel()

    async def body(store: Store) -> None:
        await history(store)
        midnight = datetime(2026, 11, 21, tzinfo=UTC)
        await round_at(store, midnight + timedelta(minutes=2), "early")
        await round_at(store, midnight + SETTLE, "settled")

    using(store, body)
    assert not (tmp_path / "early").exists()
    assert (tmp_path / "settled/2026-11-20/acme/default.log").exists()


def test_replay_is_exported_by_the_verify_package() -> None:
    import recordseal.verify as verify

    assert verify.replay_log_file is replay_log_file


def test_the_write_command_reads_the_configured_backend(
    store_settings: Settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``recordseal transparency write`` reads the store the service uses: PostgreSQL when a
    database URL is set, not an empty SQLite file beside it."""
    from recordseal.cli import main

    monkeypatch.delenv("RECORDSEAL_DATABASE_URL", raising=False)
    written(open_store(store_settings), tmp_path / "unused", DAY1)
    root = tmp_path / "public"
    url = ["--database-url", store_settings.database_url] if store_settings.database_url else []
    args = ["transparency", "write", "--data-dir", str(store_settings.data_dir), *url]
    assert main([*args, "--root", str(root), "--date", DAY2.isoformat()]) == 0
    replayed = replay_log_file((root / "2026-11-21/acme/default.log").read_bytes())
    assert [a.size for a in replayed.anchors] == [6, 7]
    assert (root / "2026-11-21/f1.log").exists() and (root / "2026-11-21/globex/f1.log").exists()


# --- a valid file of another fleet or day --------------------------------------------------


def test_a_file_of_another_fleet_or_day_fails_against_the_name_it_was_fetched_under(
    store: Store, tmp_path: Path
) -> None:
    """Each of these files replays on its own; served under another name it must not pass."""
    written(store, tmp_path, DAY1)
    acme = (tmp_path / "2026-11-20/acme/default.log").read_bytes()
    globex = (tmp_path / "2026-11-20/globex/f1.log").read_bytes()
    legacy = (tmp_path / "2026-11-20/f1.log").read_bytes()
    name = LogFileName.parse
    assert replay_log_file(acme, expected=name("2026-11-20/acme/default.log")).fleet == "default"
    assert replay_log_file(legacy, expected=name("/srv/t/2026-11-20/f1.log")).tenant is None
    for data, fetched in [
        (globex, "2026-11-20/acme/default.log"),  # another tenant's fleet
        (globex, "2026-11-20/globex/default.log"),  # another fleet of the tenant
        (legacy, "2026-11-20/globex/f1.log"),  # the legacy log of the same fleet id
        (globex, "2026-11-20/f1.log"),  # a tenant's log as the legacy one
        (acme, "2026-11-21/acme/default.log"),  # another day
    ]:
        expected = name(fetched)
        assert expected is not None
        with pytest.raises(TransparencyLogError) as caught:
            replay_log_file(data, expected=expected)
        assert (caught.value.code, caught.value.line) == ("scope_mismatch", 1), fetched


@pytest.mark.parametrize(
    ("path", "parsed"),
    [
        ("2026-11-20/f1.log", LogFileName("2026-11-20", None, "f1")),
        ("/t/2026-11-20/acme/f1.log", LogFileName("2026-11-20", "acme", "f1")),
        ("/transparency/2026-11-20/acme/f1.log", LogFileName("2026-11-20", "acme", "f1")),
        ("f1.log", None),
        ("/tmp/x/tampered.log", None),
        ("2026-11-20/acme/f1.txt", None),
        ("2026-02-30/f1.log", None),
        ("2026-11-20/../f1.log", None),
        ("2026-11-20/acme/.log", None),
    ],
)
def test_log_file_names(path: str, parsed: LogFileName | None) -> None:
    assert LogFileName.parse(path) == parsed
    if parsed is not None:
        assert path.endswith(parsed.path)


def test_a_header_rewritten_for_another_fleet_with_its_genesis_fails(
    day2: list[dict[str, Any]],
) -> None:
    import base64

    day2[0]["fleet"] = "f1"
    day2[0]["genesis"] = base64.b64encode(tenant_genesis("acme", "f1")).decode()
    refused(day2, "proof_invalid", 1)


def test_a_duplicated_anchor_line_fails(day2: list[dict[str, Any]]) -> None:
    day2.insert(2, dict(day2[1]))
    refused(day2, "size_not_increasing", 3)


def test_anchor_times_are_ordered_whatever_their_precision(
    day2: list[dict[str, Any]],
) -> None:
    day2[1]["created_at"] = "2026-11-21T23:59:59.9999999Z"  # after line 3's .999999
    refused(day2, "date_mismatch", 3)
    day2[1]["created_at"] = "2026-11-21T23:59:59Z"  # no fraction: before line 3's .999999
    assert [a.size for a in replay_log_file(encode(day2)).anchors] == [6, 7]


def test_a_deployment_with_one_tenant_still_writes_its_fleets_under_the_tenant(
    store: Store, tmp_path: Path
) -> None:
    """Spec 2.5.3: a fleet that has a tenant writes under the tenant-scoped path, however many
    tenants exist; "single-tenant" (6.3) is a fleet with no tenant. So a file's path never
    moves when a second tenant appears."""

    async def body(store: Store) -> tuple[list[Path], list[Path]]:
        await seal(store, "acme", "edge", "2026-11-20T10:00:00.000000Z")
        alone = await write_day(store.logs, tmp_path / "one", DAY1)
        await seal(store, "globex", "edge", "2026-11-20T11:00:00.000000Z")
        await seal(store, None, "solo", "2026-11-20T12:00:00.000000Z")
        return alone, await write_day(store.logs, tmp_path / "more", DAY1)

    alone, more = using(store, body)
    assert [p.relative_to(tmp_path / "one").as_posix() for p in alone] == [
        "2026-11-20/acme/edge.log"
    ]
    assert sorted(p.relative_to(tmp_path / "more").as_posix() for p in more) == [
        "2026-11-20/acme/edge.log",
        "2026-11-20/globex/edge.log",
        "2026-11-20/solo.log",
    ]
    assert (tmp_path / "one/2026-11-20/acme/edge.log").read_bytes() == (
        tmp_path / "more/2026-11-20/acme/edge.log"
    ).read_bytes()


def test_a_day_replays_without_the_native_core(day2: list[dict[str, Any]], tmp_path: Path) -> None:
    """Anyone can replay: the replayer runs on the pure-Python reference core as well."""
    path = tmp_path / "2026-11-21" / "acme" / "default.log"
    path.write_bytes(encode(day2))
    code = (
        "import sys\n"
        "sys.modules['recordseal._native'] = None  # as on a machine without the wheel\n"
        "from recordseal import core\n"
        "from recordseal.verify.transparency import LogFileName, replay_log_file\n"
        "assert core.BACKEND == 'reference', core.BACKEND\n"
        f"data = open({str(path)!r}, 'rb').read()\n"
        f"replayed = replay_log_file(data, expected=LogFileName.parse({str(path)!r}))\n"
        "assert [a.size for a in replayed.anchors] == [6, 7]\n"
        "lines = data.split(b'\\n')\n"
        "try:\n"
        "    replay_log_file(b'\\n'.join([lines[0], lines[2], lines[1], *lines[3:]]))\n"
        "except ValueError as error:\n"
        "    assert error.code == 'size_not_increasing' or error.code == 'proof_invalid'\n"
        "else:\n"
        "    raise AssertionError('reordered lines replayed')\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_a_dropped_tail_shows_against_the_next_days_file(store: Store, tmp_path: Path) -> None:
    """A file cut after a complete line still replays alone; the next day's ``previous``
    names the day's true last anchor, so the two files no longer link."""
    from recordseal.verify.transparency import check_days_link

    async def body(store: Store) -> None:
        await history(store)
        for day in (DAY1, DAY2, DAY3):
            await write_day(store.logs, tmp_path, day)

    using(store, body)
    days = [
        replay_log_file((tmp_path / d.isoformat() / "acme/default.log").read_bytes())
        for d in (DAY1, DAY2, DAY3)
    ]
    check_days_link(days[0], days[1])
    check_days_link(days[1], days[2])
    data = (tmp_path / "2026-11-21/acme/default.log").read_bytes()
    cut = replay_log_file(b"".join(data.splitlines(keepends=True)[:-1]))  # line of size 7 gone
    assert cut.latest is not None and cut.latest[0] == 6
    globex = replay_log_file((tmp_path / "2026-11-20/globex/f1.log").read_bytes())
    for earlier, later, needle in [
        (cut, days[2], "ends at size 6"),
        (days[0], days[2], "not of consecutive days"),
        (days[1], days[0], "not of consecutive days"),
        (globex, days[1], "different logs"),
    ]:
        with pytest.raises(TransparencyLogError, match=needle) as caught:
            check_days_link(earlier, later)
        assert caught.value.code == "days_do_not_link"
