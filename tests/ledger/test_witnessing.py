"""Offering each log's newest checkpoint to the witnesses until they vouch for it (issue 19).

The witnesses are real ``recordseal witness serve`` processes; a witness that is down is a
port nothing listens on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path

import pytest

from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.offering import Head, Offers
from recordseal.ledger.sealer import Sealer, Witness
from recordseal.ledger.witnessed import WitnessPolicy, newest_witnessed
from recordseal.logs import fields_of
from recordseal.network.witness_client import WitnessClient
from recordseal.services.records import RecordService
from recordseal.storage import rows
from recordseal.storage.base import Store
from recordseal.storage.rows import CheckpointRow, LatestCheckpoint
from recordseal.tlog import CosignatureVerifier
from tests.backends import opened
from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest as post
from tests.servers import free_port, witness_key, witness_server

SEED = bytes(range(32))
SERVICE = "test.local"
ORIGIN = f"{SERVICE}/acme/default"
WITNESS = "witness.test"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def witness_of(url: str, vkey: str) -> Witness:
    return Witness(WITNESS, WitnessClient(url, CosignatureVerifier.from_vkey(vkey), attempts=1))


async def ingest(store: Store, count: int) -> None:
    records = RecordService(
        store,
        KeyWrapper(bytes(32)),
        HeaderSigner.from_seed(bytes(32)),
        continuity=fresh_continuity(),
    )
    if await store.records.get_stream("acme", "orders") is None:
        await records.create_stream("acme", "orders", None, False)
    for i in range(count):
        await post(records, "acme", "orders", "t", "2026-01-01T00:00:00Z", f"s{i}", b'{"i":1}')


def test_a_quiet_logs_newest_checkpoint_is_cosigned_once_a_witness_is_configured(
    store: Store, tmp_path: Path
) -> None:
    plain = Sealer(store.logs, SEED, SERVICE, continuity=fresh_continuity())
    vkey = witness_key(tmp_path / "w", WITNESS)
    log_key = plain.signer(ORIGIN).verifier().vkey

    async def scenario() -> None:
        async with opened(store):
            for count in (2, 2, 1):  # three checkpoints, sealed with no witness configured
                await ingest(store, count)
                await plain.seal_pending()
            sizes = [row.size for row in await store.logs.checkpoints("acme", "default")]
            assert sizes == [3, 5, 6]
            with witness_server(tmp_path / "w", WITNESS, {ORIGIN: log_key}) as url:
                # The service starts again with the witness configured, and no new record.
                sealer = Sealer(
                    store.logs,
                    SEED,
                    SERVICE,
                    [witness_of(url, vkey)],
                    continuity=fresh_continuity(),
                )
                await sealer.load_offers()
                assert sealer.pending_offers() == {ORIGIN: {WITNESS}}
                await sealer.offer_due()
            assert sealer.pending_offers() == {}
            assert [len(await store.logs.cosignatures(ORIGIN, size)) for size in sizes] == [0, 0, 1]
            # Bundles of every record now prove against the cosigned checkpoint.
            policy = WitnessPolicy((WITNESS,))
            for index in range(1, 6):
                found = await newest_witnessed(store.logs, ORIGIN, index, policy)
                assert found is not None and found.size == 6
            # Another start finds the newest checkpoint cosigned: nothing to offer.
            again = Sealer(
                store.logs,
                SEED,
                SERVICE,
                [witness_of("http://127.0.0.1:9", vkey)],
                continuity=fresh_continuity(),
            )
            await again.load_offers()
            assert again.pending_offers() == {}

    asyncio.run(scenario())


def test_a_down_witness_gets_the_newest_checkpoint_again_with_backoff_logged_once(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="recordseal.sealer")
    vkey = witness_key(tmp_path / "w", WITNESS)
    port = free_port()  # nothing listens there yet: the witness is down
    clock = Clock()
    sealer = Sealer(
        store.logs,
        SEED,
        SERVICE,
        [witness_of(f"http://127.0.0.1:{port}", vkey)],
        retry_delays=(1.0, 8.0),
        clock=clock,
        continuity=fresh_continuity(),
    )
    log_key = sealer.signer(ORIGIN).verifier().vkey

    async def scenario() -> None:
        async with opened(store):
            await ingest(store, 2)
            await sealer.seal_pending()
            await sealer.offer_due()
            assert sealer.offer_failures() == {(ORIGIN, WITNESS): (1, "witness_unavailable")}
            await sealer.offer_due()  # within the backoff: not offered again
            assert sealer.offer_failures()[(ORIGIN, WITNESS)][0] == 1
            clock.now += 1.0
            await sealer.offer_due()
            assert sealer.offer_failures()[(ORIGIN, WITNESS)][0] == 2
            clock.now += 1.0  # the second delay is 2 s
            await sealer.offer_due()
            assert sealer.offer_failures()[(ORIGIN, WITNESS)][0] == 2
            await ingest(store, 3)  # a new newest checkpoint keeps the backoff
            await sealer.seal_pending()
            await sealer.offer_due()
            assert sealer.offer_failures()[(ORIGIN, WITNESS)][0] == 2
            with witness_server(tmp_path / "w", WITNESS, {ORIGIN: log_key}, port=port):
                clock.now += 1.0
                await sealer.offer_due()
            assert sealer.offer_failures() == {}
            assert sealer.pending_offers() == {}
            assert await store.logs.cosignatures(ORIGIN, 3) == []
            (line,) = await store.logs.cosignatures(ORIGIN, 6)  # the newest, with a proof from 0
            assert line.startswith(f"— {WITNESS} ")

    asyncio.run(scenario())
    records = [r for r in caplog.records if r.name == "recordseal.sealer"]
    assert [(r.levelno, r.getMessage(), fields_of(r)["size"]) for r in records] == [
        (logging.WARNING, "voucher.failing", 3),
        (logging.INFO, "voucher.vouching_again", 6),
    ]
    assert fields_of(records[0])["voucher"] == WITNESS
    assert fields_of(records[0])["origin"] == ORIGIN
    assert fields_of(records[0])["code"] == "witness_unavailable"
    assert fields_of(records[1])["failed_offers"] == 2


def test_a_witness_that_does_not_know_the_log_is_logged_once_while_the_sealer_runs(
    store: Store, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    vkey = witness_key(tmp_path / "w", WITNESS)
    plain = Sealer(store.logs, SEED, SERVICE, continuity=fresh_continuity())
    other = {f"{SERVICE}/globex/default": plain.signer(f"{SERVICE}/globex/default").verifier().vkey}

    async def scenario(url: str) -> None:
        async with opened(store):
            await ingest(store, 1)
            sealer = Sealer(
                store.logs,
                SEED,
                SERVICE,
                [witness_of(url, vkey)],
                retry_delays=(0.02, 0.1),
                continuity=fresh_continuity(),
            )
            running = asyncio.create_task(sealer.run(0.01))
            deadline = time.monotonic() + 60
            while sealer.offer_failures().get((ORIGIN, WITNESS), (0, ""))[0] < 5:
                assert time.monotonic() < deadline, sealer.offer_failures()
                await asyncio.sleep(0.02)
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)
            assert sealer.offer_failures()[(ORIGIN, WITNESS)][1] == "witness_refused"

    with witness_server(tmp_path / "w", WITNESS, other) as url:
        asyncio.run(scenario(url))
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]
    assert warnings[0].name == "recordseal.sealer"
    assert fields_of(warnings[0])["code"] == "witness_refused"
    # httpx reports each request at INFO: not the sealer's offers (one line per attempt),
    # and only while the sealer runs (other requests keep their lines).
    assert not [r for r in caplog.records if "add-checkpoint" in r.getMessage()]
    assert [r for r in caplog.records if r.name == "httpx" and "/health" in r.getMessage()]
    assert not logging.getLogger("httpx").filters


# --- the offering rules alone --------------------------------------------------------------


def _row(size: int, origin: str = ORIGIN) -> CheckpointRow:
    return CheckpointRow(origin, size, bytes(32), f"note {size}\n", "")


def test_offers_back_off_doubling_to_a_cap_and_report_changes_only() -> None:
    clock = Clock()
    offers = Offers(("a", "b"), first_delay=1.0, max_delay=4.0, clock=clock)
    offers.load([LatestCheckpoint(_row(5), frozenset({"b"}))])
    assert offers.due() == [(Head.of(_row(5)), "a")]
    assert offers.due() == []  # in flight
    head = Head.of(_row(5))
    first = offers.failed(head, "a", "witness_unavailable")
    assert first is not None and first.retry_in == 1.0
    delays = []
    for _ in range(4):
        clock.now += 100
        assert offers.due() == [(head, "a")]
        change = offers.failed(head, "a", "witness_unavailable")
        assert change is None  # the same failure again: nothing to report
        delays.append(offers._health[(ORIGIN, "a")].retry_at - clock.now)
    assert delays == [2.0, 4.0, 4.0, 4.0]
    clock.now += 100
    offers.due()
    assert offers.failed(head, "a", "witness_refused") is not None  # a new code is reported
    offers.sealed(_row(6))  # a newer checkpoint: both vouchers again, the backoff kept
    assert offers.due() == [(Head.of(_row(6)), "b")]
    clock.now += 100
    assert offers.due() == [(Head.of(_row(6)), "a")]
    recovered = offers.vouched(Head.of(_row(6)), "a")
    assert recovered is not None and recovered.failures == 6
    assert offers.vouched(Head.of(_row(5)), "b") is None  # an older head clears nothing
    assert offers.pending() == {ORIGIN: {"b"}}


def test_the_policy_refuses_a_quorum_no_configuration_can_meet() -> None:
    assert not WitnessPolicy().met_by({"a"})
    assert WitnessPolicy(("a", "b"), 2).met_by({"a", "b", "x"})
    assert not WitnessPolicy(("a", "b"), 2).met_by({"a", "x"})
    with pytest.raises(ValueError, match="quorum 3"):
        WitnessPolicy(("a", "b"), 3)
    with pytest.raises(ValueError, match="share a name"):
        WitnessPolicy(("a", "a"))


def test_the_newest_witnessed_checkpoint_is_found_across_pages(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rows, "RECEIPT_PAGE", 4)
    sealer = Sealer(store.logs, SEED, SERVICE, continuity=fresh_continuity())

    async def scenario() -> None:
        async with opened(store):
            for _ in range(8):
                await ingest(store, 1)
                await sealer.seal_pending()
            sizes = [row.size for row in await store.logs.checkpoints("acme", "default")]
            assert sizes == list(range(2, 10))
            # Receipts: a and b (a quorum of 2) on 3 and 5; one each on the newer ones.
            for size, name in [(3, "a"), (3, "b"), (5, "a"), (5, "tsa")]:
                if name == "tsa":
                    await store.logs.add_timestamp(ORIGIN, size, name, b"token")
                else:
                    await store.logs.add_cosignature(ORIGIN, size, name, f"— {name} x\n")
            for size in range(6, 10):
                await store.logs.add_cosignature(ORIGIN, size, "a", "— a x\n")
                await store.logs.add_cosignature(ORIGIN, size, "stranger", "— s x\n")
            two = WitnessPolicy(("a", "b", "tsa"), 2)
            found = [await newest_witnessed(store.logs, ORIGIN, i, two) for i in (1, 3, 4, 5)]
            assert [row and row.size for row in found] == [5, 5, 5, None]
            one = WitnessPolicy(("b",), 1)
            assert (await newest_witnessed(store.logs, ORIGIN, 1, one)).size == 3  # type: ignore[union-attr]
            assert await newest_witnessed(store.logs, ORIGIN, 3, one) is None
            latest = await store.logs.latest_checkpoints()
            assert [(c.checkpoint.size, c.vouched_by) for c in latest] == [
                (9, frozenset({"a", "stranger"}))
            ]

    asyncio.run(scenario())


def test_a_witness_with_both_algorithms_leaves_a_line_per_configured_key(
    store: Store, tmp_path: Path
) -> None:
    """``RECORDSEAL_WITNESSES`` names a witness by one key or by the list of its keys: a
    ``witness serve --algorithm both`` answers an Ed25519 and an ML-DSA-44 line, and the sealer
    keeps the lines of the keys it was given (the witness counts once toward the quorum)."""
    from recordseal.ledger.log_keys import LogKeyring
    from recordseal.ledger.sealer import configured_witnesses
    from recordseal.settings import WitnessSetting
    from recordseal.tlog import NoteSignature, cosigner_verifier, verify_cosignatures

    keys = LogKeyring.of_seed(SEED, bytes(range(32, 64)))
    ed25519 = witness_key(tmp_path / "w", WITNESS, "ed25519")
    mldsa = witness_key(tmp_path / "w", WITNESS, "both")  # its last line: the ML-DSA-44 key
    family = keys.every(SERVICE)[1].verifier().vkey  # the ML-DSA-44 family alone

    async def scenario() -> list[list[str]]:
        found = []
        async with opened(store):
            with witness_server(
                tmp_path / "w", WITNESS, {}, algorithm="both", families=[family]
            ) as url:
                for configured in ([ed25519, mldsa], [mldsa]):
                    name = f"w{len(found)}"
                    setting = WitnessSetting(name, url, tuple(configured))
                    sealer = Sealer(
                        store.logs, keys, SERVICE, configured_witnesses([setting]),
                        continuity=fresh_continuity(),
                    )  # fmt: skip
                    await ingest(store, 1)
                    (batch,) = await sealer.seal_pending()
                    await sealer.offer_due()
                    assert sealer.pending_offers() == {}
                    stored = await store.logs.cosignatures(ORIGIN, batch.size)
                    assert len(stored) == 1  # one value per witness name
                    lines = stored[0].splitlines()
                    signatures = [NoteSignature.parse_line(line) for line in lines]
                    text = batch.note.split("\n\n")[0] + "\n"
                    verifiers = [cosigner_verifier(vkey) for vkey in configured]
                    assert len(verify_cosignatures(text, signatures, verifiers)) == len(lines)
                    found.append(lines)
        return found

    both, pq_only = asyncio.run(scenario())
    assert len(both) == 2 and len(pq_only) == 1
