"""The store's transactions on both backends: group commit, erasure against appends,
idempotency keys, sealing leadership."""

from __future__ import annotations

import asyncio
import time

import asyncpg
import pytest

from recordseal.storage.backends import open_store
from recordseal.storage.records import AppendOutcome, KeyReused, Replayed, SubjectErased
from recordseal.storage.requests import Append, IdempotencyClaim, NewRecord, SubjectClaim
from tests.backends import count, opened, query


def build_each(appends, slots, heads) -> list[NewRecord]:
    """The batch builder of these tests: each append's ``prepared`` is a function of its
    sequence number and link that makes its record."""
    records = []
    for append, slot in zip(appends, slots, strict=True):
        seq, prev = heads[slot]
        record = append.prepared(seq, prev)
        heads[slot] = (seq + 1, record.chain_leaf)
        records.append(record)
    return records


def appending(stream_id, subject, build, claim=None) -> Append:
    return Append(stream_id, subject, getattr(build, "record_id", f"r-{id(build)}"), build, claim)


async def append_outcome(
    store, tenant, stream_id, subject, build, now, claim=None
) -> AppendOutcome:
    """One append through ``append_records``: its record or its refusal."""
    (outcome,) = await store.records.append_records(
        tenant, [appending(stream_id, subject, build, claim)], now, build_each
    )
    return outcome


async def append_one(store, tenant, stream_id, subject, build, now, claim=None) -> NewRecord:
    """One append that must be placed."""
    outcome = await append_outcome(store, tenant, stream_id, subject, build, now, claim)
    assert isinstance(outcome, NewRecord), outcome
    return outcome


class builder:
    """Makes the record ``record_id`` at whatever place it is given."""

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id

    def __call__(self, seq: int, prev: bytes) -> NewRecord:
        header = f'{{"seq":{seq}}}'.encode()
        sealed = b"sealed-" + self.record_id.encode()
        return NewRecord(self.record_id, seq, header, b"sig", bytes(32), sealed)


async def stream_with_subject(store, first: str = "r1"):
    """Stream "s" of tenant "t" with one record (``first``) of subject "ref" (index b"i"):
    the stream, and the claim of that now stored subject."""
    stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
    await append_one(store, "t", stream.id, SubjectClaim(b"i", "ref", b"w"), builder(first), "now")
    return stream, SubjectClaim(b"i", "ref", None)


def test_an_erasure_together_with_an_append_deletes_the_payload_appended(store, store_settings):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            new = SubjectClaim(b"index", "ref", b"wrapped")
            await append_one(store, "t", stream.id, new, builder("r1"), "now")
            existing = SubjectClaim(b"index", "ref", None)
            # Queued in one tick: whichever commits first, the append's payload never
            # outlives the erasure (on PostgreSQL the erasure waits for the append's share
            # lock on the subject, and an append after it finds the key gone).
            appended, erased = await asyncio.gather(
                append_outcome(store, "t", stream.id, existing, builder("r2"), "now"),
                store.records.erase_subject("t", "ref", "later"),
            )
            if isinstance(appended, NewRecord):
                assert appended.seq == 2
                assert erased.payloads_deleted == 2
            else:
                assert appended == SubjectErased("ref")
                assert erased.payloads_deleted == 1

    asyncio.run(scenario())
    assert count(store_settings, "payloads") == 0


def test_appends_after_an_erasure_are_refused(store):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            await append_one(
                store, "t", stream.id, SubjectClaim(b"i", "ref", b"w"), builder("r1"), "now"
            )
            existing = SubjectClaim(b"i", "ref", None)
            first = await append_one(store, "t", stream.id, existing, builder("r2"), "now")
            await store.records.erase_subject("t", "ref", "later")
            refused = await append_outcome(store, "t", stream.id, existing, builder("r3"), "now")
            assert refused == SubjectErased("ref")
            assert first.seq == 2
            assert [r.seq for r in await store.records.stream_records("t", "s")] == [1, 2]

    asyncio.run(scenario())


def test_concurrent_appends_get_dense_sequence_numbers_and_linked_heads(store):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, b"\x00" * 32, "now")
            claim = SubjectClaim(b"i", "ref", b"w")
            await append_one(store, "t", stream.id, claim, builder("r0"), "now")
            claim = SubjectClaim(b"i", "ref", None)
            seen: list[tuple[int, bytes]] = []

            def linking(record_id: str):
                def build(seq: int, prev: bytes) -> NewRecord:
                    seen.append((seq, prev))
                    leaf = seq.to_bytes(32, "big")
                    return NewRecord(record_id, seq, b"{}", b"sig", leaf, b"sealed")

                return build

            results = await asyncio.gather(
                *(
                    append_one(store, "t", stream.id, claim, linking(f"r{i}"), "now")
                    for i in range(1, 201)
                )
            )
            assert sorted(r.seq for r in results) == list(range(2, 202))
            # Each record was built on the leaf of the one before it.
            for seq, prev in seen:
                if seq > 2:
                    assert prev == (seq - 1).to_bytes(32, "big")

    asyncio.run(scenario())


def test_an_idempotency_key_replays_its_record_and_refuses_another_request(store, store_settings):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            claim = IdempotencyClaim("key-1", b"h" * 32)
            subject = SubjectClaim(b"i", "ref", b"w")
            first = await append_one(
                store, "t", stream.id, subject, builder("r1"), "2026-01-01T00:00:00Z", claim
            )
            subject = SubjectClaim(b"i", "ref", None)
            replayed = await append_outcome(
                store, "t", stream.id, subject, builder("r2"), "now", claim
            )
            assert replayed == Replayed(first.record_id) == Replayed("r1")
            other = IdempotencyClaim("key-1", b"x" * 32)
            reused = await append_outcome(
                store, "t", stream.id, subject, builder("r3"), "now", other
            )
            assert reused == KeyReused("key-1")
            # The same key in another tenant is another key.
            stream_u = await store.records.create_stream("u", "s", {}, False, bytes(32), "now")
            await append_one(
                store,
                "u",
                stream_u.id,
                SubjectClaim(b"i", "ref-u", b"w"),
                builder("r4"),
                "now",
                claim,
            )
            assert await store.records.idempotent_records("t", ["key-1", "key-2"]) == {
                "key-1": (b"h" * 32, "r1")
            }
            # Old keys are forgotten by the purge, and the key can then be used again.
            assert await store.records.purge_idempotency_keys("2026-06-01T00:00:00Z") == 1
            assert await store.records.idempotent_records("t", ["key-1"]) == {}

    asyncio.run(scenario())
    assert count(store_settings, "records") == 2


def test_twins_with_one_idempotency_key_in_one_batch_store_one_record(store, store_settings):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            await append_one(
                store, "t", stream.id, SubjectClaim(b"i", "ref", b"w"), builder("r0"), "now"
            )
            subject = SubjectClaim(b"i", "ref", None)
            claim = IdempotencyClaim("twin", b"h" * 32)
            results = await asyncio.gather(
                *(
                    append_outcome(store, "t", stream.id, subject, builder(f"r{i}"), "now", claim)
                    for i in range(1, 6)
                )
            )
            stored = [r for r in results if isinstance(r, NewRecord)]
            replays = [r for r in results if isinstance(r, Replayed)]
            assert len(stored) == 1 and len(replays) == 4
            assert {r.record_id for r in replays} == {stored[0].record_id}

    asyncio.run(scenario())
    assert count(store_settings, "records") == 2


def test_subjects_are_looked_up_many_at_once_within_their_tenant(store):
    """One query for a batch's subjects: stored and erased ones by index, unknown ones absent,
    another tenant's never, and more than one SQLite statement's worth of parameters."""

    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            other = await store.records.create_stream("u", "s", {}, False, bytes(32), "now")
            appends = [
                appending(stream.id, SubjectClaim(b"i%04d" % n, f"ref-{n}", b"w"), builder(f"r{n}"))
                for n in range(600)
            ]
            assert all(
                isinstance(o, NewRecord)
                for o in await store.records.append_records("t", appends, "now", build_each)
            )
            await append_one(store, "u", other.id, SubjectClaim(b"shared", "ref-u", b"w"),
                             builder("u1"), "now")  # fmt: skip
            await append_one(store, "t", stream.id, SubjectClaim(b"gone", "ref-gone", b"w"),
                             builder("g1"), "now")  # fmt: skip
            await store.records.erase_subject("t", "ref-gone", "later")

            # The same 600 subjects again, now stored (the append checks them 500 at a time),
            # plus the erased one, refused on its own.
            again = [
                appending(stream.id, SubjectClaim(b"i%04d" % n, f"ref-{n}", None), builder(f"s{n}"))
                for n in range(600)
            ] + [appending(stream.id, SubjectClaim(b"gone", "ref-gone", None), builder("g2"))]
            outcomes = await store.records.append_records("t", again, "now", build_each)
            assert [o.seq for o in outcomes[:600] if isinstance(o, NewRecord)] == list(
                range(602, 1202)
            )
            assert isinstance(outcomes[600], SubjectErased)

            wanted = [b"i%04d" % n for n in range(0, 600, 2)] + [b"nobody", b"shared", b"gone"]
            found = await store.records.get_subjects("t", wanted + wanted[:10])  # repeats are fine
            assert set(found) == {b"i%04d" % n for n in range(0, 600, 2)} | {b"gone"}
            assert found[b"i0598"].subject_ref == "ref-598"
            assert (found[b"i0598"].tenant, found[b"i0598"].wrapped_key) == ("t", b"w")
            assert (found[b"gone"].wrapped_key, found[b"gone"].erased_at) == (None, "later")
            assert set(await store.records.get_subjects("u", wanted)) == {b"shared"}
            assert await store.records.get_subjects("t", []) == {}

    asyncio.run(scenario())


def test_one_sealer_at_a_time_and_takeover_when_it_closes(store_settings):
    async def scenario() -> None:
        async with (
            opened(open_store(store_settings)) as first,
            opened(open_store(store_settings)) as second,
        ):
            assert await first.logs.claim_sealing()
            assert await first.logs.claim_sealing()  # still held
            # The sealer and the daily job may ask at the same moment.
            assert all(await asyncio.gather(*(first.logs.claim_sealing() for _ in range(8))))
            assert not any(await asyncio.gather(*(second.logs.claim_sealing() for _ in range(8))))
            await first.close()
            assert await second.logs.claim_sealing()

    asyncio.run(scenario())


def test_the_purge_forgets_keys_older_than_the_retention_period(store):
    from recordseal.services.retention import cutoff

    assert cutoff(3600, now=1_800_000_000) == "2027-01-15T07:00:00.000000Z"

    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            subject = SubjectClaim(b"i", "ref", b"w")
            for n, created in enumerate(["2027-01-15T06:59:59.999999Z", "2027-01-15T07:00:01Z"]):
                await append_one(store,
                    "t", stream.id, subject, builder(f"r{n}"), created,
                    IdempotencyClaim(f"k{n}", b"h" * 32),
                )  # fmt: skip
                subject = SubjectClaim(b"i", "ref", None)
            assert await store.records.purge_idempotency_keys(cutoff(3600, now=1_800_000_000)) == 1
            assert list(await store.records.idempotent_records("t", ["k0", "k1"])) == ["k1"]

    asyncio.run(scenario())


def test_one_call_appends_in_order_and_refuses_items_alone(store, store_settings):
    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            await append_one(
                store, "t", stream.id, SubjectClaim(b"e", "gone", b"w"), builder("e0"), "now"
            )
            await store.records.erase_subject("t", "gone", "later")
            claim = IdempotencyClaim("dup", b"h" * 32)
            outcomes = await store.records.append_records(
                "t",
                [
                    appending(stream.id, SubjectClaim(b"a", "ref-a", b"w"), builder("a1"), claim),
                    appending(stream.id, SubjectClaim(b"e", "gone", None), builder("e1")),
                    appending(stream.id, SubjectClaim(b"a", "ref-a", b"w"), builder("a2")),
                    appending(stream.id, SubjectClaim(b"a", "ref-a", None), builder("a3"), claim),
                    appending(stream.id, SubjectClaim(b"a", "other-ref", b"w2"), builder("a4")),
                ],
                "now",
                build_each,
            )
            kinds = [type(o).__name__ for o in outcomes]
            assert kinds == ["NewRecord", "SubjectErased", "NewRecord", "Replayed", "SubjectRace"]
            assert [o.seq for o in outcomes if isinstance(o, NewRecord)] == [2, 3]
            assert outcomes[3].record_id == "a1"

    asyncio.run(scenario())
    assert count(store_settings, "records") == 3
    assert count(store_settings, "subjects") == 2


def test_a_new_subject_whose_only_append_is_refused_by_its_key_is_not_stored(store, store_settings):
    """A refused append stores nothing: not the subject it would have created either (an
    idempotency key already stored, or used earlier in the same call, with another request)."""

    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            claim = IdempotencyClaim("k", b"h" * 32)
            await append_one(
                store,
                "t",
                stream.id,
                SubjectClaim(b"a", "ref-a", b"w"),
                builder("a1"),
                "now",
                claim,
            )
            other = IdempotencyClaim("k", b"x" * 32)
            reused = await append_outcome(
                store,
                "t",
                stream.id,
                SubjectClaim(b"b", "ref-b", b"w"),
                builder("b1"),
                "now",
                other,
            )
            assert reused == KeyReused("k")
            replayed = await append_outcome(
                store,
                "t",
                stream.id,
                SubjectClaim(b"c", "ref-c", b"w"),
                builder("c1"),
                "now",
                claim,
            )
            assert replayed == Replayed("a1")
            twin, twin_other = IdempotencyClaim("j", b"h" * 32), IdempotencyClaim("j", b"x" * 32)
            outcomes = await store.records.append_records(
                "t",
                [
                    appending(stream.id, SubjectClaim(b"d", "ref-d", b"w"), builder("d1"), twin),
                    appending(
                        stream.id, SubjectClaim(b"e", "ref-e", b"w"), builder("e1"), twin_other
                    ),
                    appending(stream.id, SubjectClaim(b"f", "ref-f", b"w"), builder("f1"), twin),
                ],
                "now",
                build_each,
            )
            assert [type(o).__name__ for o in outcomes] == ["NewRecord", "KeyReused", "Replayed"]
            assert await store.records.get_subjects("t", [b"b", b"c", b"e", b"f"]) == {}

    asyncio.run(scenario())
    assert count(store_settings, "records") == 2
    assert sorted(r[0] for r in query(store_settings, "SELECT subject_ref FROM subjects")) == [
        "ref-a",
        "ref-d",
    ]


@pytest.mark.parametrize("store_settings", ["postgres"], indirect=True)
def test_postgres_reclaims_erased_rows_in_the_background(store, store_settings):
    """After an erasure the two tables are vacuumed (PostgreSQL has no secure_delete): the
    erased rows' dead versions do not wait for autovacuum."""

    async def scenario() -> None:
        async with opened(store):
            stream = await store.records.create_stream("t", "s", {}, False, bytes(32), "now")
            subject = SubjectClaim(b"i", "ref", b"wrapped-key-bytes")
            await append_one(store, "t", stream.id, subject, builder("r1"), "now")
            erased = await store.records.erase_subject("t", "ref", "later")
            assert erased.erased_now
        # closing waits for the reclaim under way

    asyncio.run(scenario())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rows = query(
            store_settings,
            "SELECT relname, vacuum_count FROM pg_stat_user_tables"
            " WHERE relname IN ('subjects', 'payloads') AND schemaname = current_schema()",
        )
        if len(rows) == 2 and all(count >= 1 for _, count in rows):
            break
        time.sleep(0.2)
    assert sorted(rows) == [("payloads", 1), ("subjects", 1)]


@pytest.mark.parametrize("store_settings", ["postgres"], indirect=True)
def test_postgres_commits_the_appends_of_one_call_in_one_transaction(store, store_settings):
    """The writer takes whole calls into a transaction: a call of 1,000 appends queued behind
    another of 100 is not split at the group's limit (part committed, part failing alone)."""

    async def scenario() -> None:
        async with opened(store):
            stream, subject = await stream_with_subject(store, first="r0")

            def call(prefix: str, n: int):
                appends = [appending(stream.id, subject, builder(f"{prefix}{i}")) for i in range(n)]
                return store.records.append_records("t", appends, "now", build_each)

            first, second = await asyncio.gather(call("a", 100), call("b", 1000))
            assert all(isinstance(o, NewRecord) for o in first + second)

    asyncio.run(scenario())
    for prefix in ("a", "b"):
        (transactions,) = query(
            store_settings,
            f"SELECT count(DISTINCT xmin::text) FROM records WHERE record_id LIKE '{prefix}%'",
        )[0]
        assert transactions == 1, prefix


@pytest.mark.parametrize("store_settings", ["postgres"], indirect=True)
def test_postgres_appends_survive_the_writer_connection_dying_mid_transaction(
    store, store_settings
):
    """The writer's server process is terminated while its transaction waits for a stream lock
    (what a failover or an administrator does): nothing was committed, so the writer opens a
    new connection and runs the batch again; the caller gets its record, once."""
    url = store_settings.database_url

    async def scenario() -> None:
        async with opened(store):
            stream, subject = await stream_with_subject(store)
            blocker = await asyncpg.connect(url)
            try:
                lock = blocker.transaction()
                await lock.start()
                await blocker.execute("SELECT 1 FROM streams WHERE id = $1 FOR UPDATE", stream.id)
                pending = asyncio.ensure_future(
                    append_one(store, "t", stream.id, subject, builder("r2"), "now")
                )
                waiting = None
                for _ in range(100):
                    waiting = await blocker.fetchval(
                        "SELECT pid FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                        " AND datname = current_database() AND pid <> pg_backend_pid()"
                    )
                    if waiting:
                        break
                    await asyncio.sleep(0.05)
                assert waiting, "the writer never waited for the stream lock"
                assert await blocker.fetchval("SELECT pg_terminate_backend($1)", waiting)
                await lock.rollback()
            finally:
                await blocker.close()
            placed = await asyncio.wait_for(pending, 30)
            assert (placed.record_id, placed.seq) == ("r2", 2)
            after = await append_one(store, "t", stream.id, subject, builder("r3"), "now")
            assert after.seq == 3

    asyncio.run(scenario())
    assert query(store_settings, "SELECT record_id, seq FROM records ORDER BY seq") == [
        ("r1", 1),
        ("r2", 2),
        ("r3", 3),
    ]


@pytest.mark.parametrize("store_settings", ["postgres"], indirect=True)
def test_postgres_a_commit_whose_connection_dies_is_found_and_answered(store, store_settings):
    """COMMIT waits for a synchronous standby that never answers (synchronous_standby_names
    names one that does not exist) and the writer's server process is terminated there: the
    transaction has committed locally, but the writer never heard so. It finds the records
    stored and answers them: nothing is stored twice and the caller is not told it failed."""
    url = store_settings.database_url

    async def waiting_at_commit(admin: asyncpg.Connection) -> int | None:
        for _ in range(40):
            pid = await admin.fetchval(
                "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND wait_event = 'SyncRep'"
            )
            if pid:
                return int(pid)
            await asyncio.sleep(0.05)
        return None

    async def scenario() -> list[str]:
        stored = ["r1"]
        async with opened(store):
            stream, subject = await stream_with_subject(store)
            admin = await asyncpg.connect(url)
            builds = 0

            def counted(seq: int, prev: bytes) -> NewRecord:
                nonlocal builds
                builds += 1
                return builder(f"r{len(stored) + 1}")(seq, prev)

            try:
                await admin.execute("SET synchronous_commit = local")  # this one never waits
                await admin.execute("ALTER SYSTEM SET synchronous_standby_names = 'nobody'")
                await admin.execute("SELECT pg_reload_conf()")
                # The writer's server process applies the reload when it next reads a
                # command; until it has, its commits do not wait: try again.
                for _ in range(20):
                    builds = 0
                    pending = asyncio.ensure_future(
                        append_one(store, "t", stream.id, subject, counted, "now")
                    )
                    writer = await waiting_at_commit(admin)
                    if writer is not None:
                        break
                    stored.append((await pending).record_id)
                else:
                    raise AssertionError("the writer's commit never waited for the standby")
                assert await admin.fetchval("SELECT pg_terminate_backend($1)", writer)
            finally:
                await admin.execute("ALTER SYSTEM RESET synchronous_standby_names")
                await admin.execute("SELECT pg_reload_conf()")
                await admin.close()
            placed = await asyncio.wait_for(pending, 30)
            assert (placed.record_id, placed.seq) == (f"r{len(stored) + 1}", len(stored) + 1)
            assert builds == 1  # answered from the commit that happened, not run again
            stored.append(placed.record_id)
            after = await append_one(store, "t", stream.id, subject, builder("last"), "now")
            assert after.seq == len(stored) + 1
            stored.append("last")
        return stored

    stored = asyncio.run(scenario())
    assert query(store_settings, "SELECT record_id, seq FROM records ORDER BY seq") == [
        (record_id, seq) for seq, record_id in enumerate(stored, start=1)
    ]


def test_after_a_subject_race_the_calls_later_appends_of_that_stream_are_deferred(store):
    """A call's appends keep their order per stream: once one is refused because another
    writer created its new subject first, the later ones of that stream are not placed
    (Deferred, nothing written) so they can follow it; other streams carry on."""

    async def scenario() -> None:
        async with opened(store):
            orders = await store.records.create_stream("t", "orders", {}, False, bytes(32), "now")
            audit = await store.records.create_stream("t", "audit", {}, False, bytes(32), "now")
            existing = SubjectClaim(b"e", "ref-e", b"w")
            await append_one(store, "t", orders.id, existing, builder("r0"), "now")
            existing = SubjectClaim(b"e", "ref-e", None)
            # The other writer's new subject x, committed first.
            await append_one(store, "t", audit.id, SubjectClaim(b"x", "ref-x0", b"w"),
                             builder("a0"), "now")  # fmt: skip
            outcomes = await store.records.append_records(
                "t",
                [
                    appending(orders.id, existing, builder("r1")),
                    appending(orders.id, SubjectClaim(b"x", "ref-x1", b"w1"), builder("r2")),
                    appending(orders.id, existing, builder("r3")),
                    appending(audit.id, existing, builder("a1")),
                    appending(orders.id, existing, builder("r4")),
                ],
                "now",
                build_each,
            )
            assert [type(o).__name__ for o in outcomes] == [
                "NewRecord", "SubjectRace", "Deferred", "NewRecord", "Deferred"
            ]  # fmt: skip
            assert isinstance(outcomes[0], NewRecord) and outcomes[0].seq == 2
            assert isinstance(outcomes[3], NewRecord) and outcomes[3].seq == 2
            # The stream goes on from where the race stopped it.
            again = await append_one(store, "t", orders.id, existing, builder("r2"), "now")
            assert again.seq == 3
            stored = await store.records.stream_records("t", "orders")
            assert [(r.record_id, r.seq) for r in stored] == [("r0", 1), ("r1", 2), ("r2", 3)]

    asyncio.run(scenario())
