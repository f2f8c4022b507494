"""SQLite backend: the embedded default (stdlib ``sqlite3``, WAL, no server).

Writes are committed in groups (one writer task per process, on its event loop): every write
waiting when a transaction starts joins it, and none is acknowledged before the COMMIT (with
``synchronous=FULL``) has returned. Several processes may share one database file: each takes
a lock file before ``BEGIN IMMEDIATE``, and sequence numbers and chain heads are read inside
that transaction, so chains never fork. Reads use a separate connection; WAL lets them run
beside the writer.
"""

from __future__ import annotations

import asyncio
import fcntl
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from recordseal.core import leaf_hash
from recordseal.ledger import tree
from recordseal.storage.base import (
    CheckpointRow,
    Conflict,
    Erasure,
    NewRecord,
    RecordBuilder,
    RecordRow,
    SealedBatch,
    SealRequest,
    SigningKeyRow,
    StoreError,
    StreamRow,
    SubjectClaim,
    SubjectErased,
    SubjectRace,
    SubjectRow,
)

T = TypeVar("T")

MIGRATIONS: list[str] = [
    """
    CREATE TABLE tokens (
        token_hash  BLOB PRIMARY KEY,
        tenant      TEXT NOT NULL,
        label       TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        revoked_at  TEXT
    );
    CREATE TABLE signing_keys (
        key_id      TEXT PRIMARY KEY,
        algorithm   TEXT NOT NULL,
        public_key  BLOB NOT NULL,
        not_before  TEXT NOT NULL,
        not_after   TEXT,
        revoked_at  TEXT
    );
    CREATE TABLE streams (
        id            INTEGER PRIMARY KEY,
        tenant        TEXT NOT NULL,
        name          TEXT NOT NULL,
        declarations  TEXT NOT NULL,
        strict        INTEGER NOT NULL,
        next_seq      INTEGER NOT NULL,
        head          BLOB NOT NULL,
        created_at    TEXT NOT NULL,
        UNIQUE (tenant, name)
    );
    CREATE TABLE subjects (
        tenant         TEXT NOT NULL,
        subject_index  BLOB NOT NULL,
        subject_ref    TEXT NOT NULL UNIQUE,
        wrapped_key    BLOB,
        created_at     TEXT NOT NULL,
        erased_at      TEXT,
        PRIMARY KEY (tenant, subject_index)
    ) WITHOUT ROWID;
    CREATE TABLE records (
        record_id    TEXT PRIMARY KEY,
        tenant       TEXT NOT NULL,
        stream_id    INTEGER NOT NULL REFERENCES streams (id),
        seq          INTEGER NOT NULL,
        subject_ref  TEXT NOT NULL,
        header       BLOB NOT NULL,
        signature    BLOB NOT NULL,
        chain_leaf   BLOB NOT NULL,
        UNIQUE (stream_id, seq)
    );
    CREATE TABLE payloads (
        record_id    TEXT PRIMARY KEY REFERENCES records (record_id),
        subject_ref  TEXT NOT NULL,
        sealed       BLOB NOT NULL
    );
    CREATE INDEX payloads_by_subject ON payloads (subject_ref);
    """,
    # 2: sealed batches. Each (tenant, fleet) has one RFC 6962 log of chain leaves, kept as
    # complete-subtree nodes (recordseal.ledger.tree); checkpoints are its signed heads.
    """
    ALTER TABLE streams ADD COLUMN fleet TEXT NOT NULL DEFAULT 'default';
    ALTER TABLE records ADD COLUMN log_id INTEGER;
    ALTER TABLE records ADD COLUMN log_index INTEGER;
    CREATE INDEX records_unsealed ON records (stream_id) WHERE log_index IS NULL;
    CREATE TABLE logs (
        id      INTEGER PRIMARY KEY,
        tenant  TEXT NOT NULL,
        fleet   TEXT NOT NULL,
        origin  TEXT NOT NULL UNIQUE,
        size    INTEGER NOT NULL,
        root    BLOB NOT NULL,
        UNIQUE (tenant, fleet)
    );
    CREATE TABLE log_nodes (
        log_id  INTEGER NOT NULL REFERENCES logs (id),
        level   INTEGER NOT NULL,
        idx     INTEGER NOT NULL,
        hash    BLOB NOT NULL,
        PRIMARY KEY (log_id, level, idx)
    ) WITHOUT ROWID;
    CREATE TABLE checkpoints (
        log_id      INTEGER NOT NULL REFERENCES logs (id),
        size        INTEGER NOT NULL,
        root        BLOB NOT NULL,
        note        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (log_id, size)
    ) WITHOUT ROWID;
    CREATE TABLE cosignatures (
        log_id   INTEGER NOT NULL,
        size     INTEGER NOT NULL,
        witness  TEXT NOT NULL,
        line     TEXT NOT NULL,
        PRIMARY KEY (log_id, size, witness),
        FOREIGN KEY (log_id, size) REFERENCES checkpoints (log_id, size)
    ) WITHOUT ROWID;
    """,
    # 3: RFC 3161 time-stamp tokens over checkpoint roots.
    """
    CREATE TABLE timestamps (
        log_id     INTEGER NOT NULL,
        size       INTEGER NOT NULL,
        authority  TEXT NOT NULL,
        token      BLOB NOT NULL,
        PRIMARY KEY (log_id, size, authority),
        FOREIGN KEY (log_id, size) REFERENCES checkpoints (log_id, size)
    ) WITHOUT ROWID;
    """,
]


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Freed pages are overwritten with zeros, so erased payloads and keys leave no trace.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def _migrate(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        current = row[0] or 0
        for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise


class _Batch:
    """State shared by the jobs of one transaction: the stream heads they advanced, the
    subjects already checked, and record rows not yet written.

    Appends defer their INSERTs so a batch writes them with one ``executemany``; every other
    job sees them written first (``flush_rows`` runs before it), so an erasure later in the
    same batch deletes a payload appended earlier in it.
    """

    __slots__ = ("heads", "payloads", "records", "subjects")

    def __init__(self) -> None:
        self.heads: dict[int, tuple[int, bytes]] = {}
        self.subjects: dict[tuple[str, bytes], tuple[str, bool]] = {}
        self.records: list[tuple[Any, ...]] = []
        self.payloads: list[tuple[Any, ...]] = []

    def flush_rows(self, conn: sqlite3.Connection) -> None:
        if self.records:
            conn.executemany(
                "INSERT INTO records (record_id, tenant, stream_id, seq, subject_ref, header,"
                " signature, chain_leaf) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                self.records,
            )
            conn.executemany(
                "INSERT INTO payloads (record_id, subject_ref, sealed) VALUES (?, ?, ?)",
                self.payloads,
            )
            self.records.clear()
            self.payloads.clear()
        # Whatever the next job is, it may change subjects: check them again after it.
        self.subjects.clear()

    def head(self, conn: sqlite3.Connection, stream_id: int) -> tuple[int, bytes]:
        head = self.heads.get(stream_id)
        if head is None:
            row = conn.execute(
                "SELECT next_seq, head FROM streams WHERE id = ?", (stream_id,)
            ).fetchone()
            head = (row[0], row[1])
        return head

    def flush(self, conn: sqlite3.Connection) -> None:
        self.flush_rows(conn)
        conn.executemany(
            "UPDATE streams SET next_seq = ?, head = ? WHERE id = ?",
            [(seq, head, stream_id) for stream_id, (seq, head) in self.heads.items()],
        )


Job = Callable[[sqlite3.Connection, _Batch], T]


class _GroupCommitWriter:
    """Group commit on the event loop: every write waiting when a batch starts joins it.

    A batch runs on the event loop's own thread: handing work to a thread and back costs up to
    a GIL switch interval (5 ms) whenever the loop is busy, which is far more than the work
    (the fsync of COMMIT releases the GIL anyway). While it waits for the cross-process lock,
    the loop keeps accepting requests, which form the next batch.
    """

    MAX_BATCH = 512

    def __init__(self, path: Path) -> None:
        self._path = path
        self._pending: list[tuple[Job[Any], asyncio.Future[Any]]] = []
        self._wakeup = asyncio.Event()
        self._closing = False
        self._checkpoint_requested = False
        self._conn = _connect(path)
        # Writers of every process on this database take this lock before BEGIN, so SQLite's
        # busy handler (which sleeps up to 100 ms between tries) never comes into play.
        self._lock_file = open(path.with_name(path.name + ".lock"), "a+b")  # noqa: SIM115
        self._task = asyncio.get_running_loop().create_task(self._run())

    def request_checkpoint(self) -> None:
        """Called from a job: truncate the WAL once this transaction has committed."""
        self._checkpoint_requested = True

    def submit(self, job: Job[T]) -> asyncio.Future[T]:
        """Run ``job`` in the next transaction. A job refuses (raises a StoreError) only
        before it writes; any other error fails the whole transaction."""
        if self._closing:
            raise RuntimeError("the store is closed")
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending.append((job, future))
        self._wakeup.set()
        return future

    async def stop(self) -> None:
        self._closing = True
        self._wakeup.set()
        await self._task
        self._conn.close()
        self._lock_file.close()

    async def _run(self) -> None:
        while True:
            await self._wakeup.wait()
            self._wakeup.clear()
            if not self._pending:
                if self._closing:
                    return
                continue
            batch = self._pending[: self.MAX_BATCH]
            del self._pending[: self.MAX_BATCH]
            if self._pending:
                self._wakeup.set()
            try:
                await self._lock()
                try:
                    outcomes = self._transaction(batch)
                finally:
                    fcntl.flock(self._lock_file, fcntl.LOCK_UN)
            except Exception as exc:  # e.g. the lock file vanished: refuse, never hang
                outcomes = [(False, exc)] * len(batch)
            for (_, future), (ok, value) in zip(batch, outcomes, strict=True):
                _settle(future, ok, value)
            # Let the answered requests go out, and other processes take the lock, first.
            await asyncio.sleep(0)

    async def _lock(self) -> None:
        """Take the cross-process write lock from the loop's own thread.

        Waiting in a helper thread would leave the lock taken but idle until the busy loop
        resumes this task; polling keeps the time between taking it and using it at zero.
        """
        delay = 0.0001
        while True:
            try:
                fcntl.flock(self._lock_file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.002)

    def _transaction(self, batch: list[Any]) -> list[tuple[bool, Any]]:
        """One transaction for the batch, committed (and fsynced) before anyone is answered.

        It runs on the loop's thread: a hand-off to a thread and back costs up to a GIL
        switch interval while the loop is busy, far more than the fsync (which releases the
        GIL anyway).
        """
        conn = self._conn
        outcomes: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            state = _Batch()
            for job, _ in batch:
                if not getattr(job, "defers_rows", False):
                    state.flush_rows(conn)
                try:
                    outcomes.append((True, job(conn, state)))
                except StoreError as refusal:  # raised before the job wrote anything
                    outcomes.append((False, refusal))
            state.flush(conn)
            self._commit()
        except Exception as exc:  # the transaction as a whole failed: nobody is acknowledged
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            self._checkpoint_requested = False
            return [(False, exc)] * len(batch)
        return outcomes

    def _commit(self) -> None:
        self._conn.execute("COMMIT")
        if self._checkpoint_requested:
            self._checkpoint_requested = False
            # Moves the WAL into the database and truncates it, so pages that held erased
            # payloads and keys are gone from the WAL as well (secure_delete zeroed them in
            # the database file).
            self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _settle(future: asyncio.Future[Any], ok: bool, value: Any) -> None:
    """Resolve a write's future (its caller may have gone away meanwhile)."""
    if future.cancelled():
        return
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)


class SQLiteStore:
    """The Store interface on one SQLite database file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._writer: _GroupCommitWriter | None = None
        self._reader: sqlite3.Connection | None = None

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = _connect(self.path)
        try:
            _migrate(conn)
        finally:
            conn.close()
        self._reader = _connect(self.path)
        self._writer = _GroupCommitWriter(self.path)

    @property
    def _write(self) -> _GroupCommitWriter:
        assert self._writer is not None, "store is not open"
        return self._writer

    async def close(self) -> None:
        if self._writer is not None:
            await self._writer.stop()
            self._writer = None
        if self._reader is not None:
            self._reader.close()
            self._reader = None

    def _read(self, sql: str, params: tuple[Any, ...]) -> list[Any]:
        assert self._reader is not None, "store is not open"
        return self._reader.execute(sql, params).fetchall()

    # --- tokens -------------------------------------------------------------------------

    async def add_token(self, token_hash: bytes, tenant: str, label: str, now: str) -> None:
        def job(conn: sqlite3.Connection, batch: _Batch) -> None:
            conn.execute(
                "INSERT INTO tokens (token_hash, tenant, label, created_at) VALUES (?, ?, ?, ?)",
                (token_hash, tenant, label, now),
            )

        await self._write.submit(job)

    async def tenant_for_token(self, token_hash: bytes) -> str | None:
        rows = self._read(
            "SELECT tenant FROM tokens WHERE token_hash = ? AND revoked_at IS NULL", (token_hash,)
        )
        return rows[0][0] if rows else None

    # --- signing keys -------------------------------------------------------------------

    async def register_signing_key(self, key: SigningKeyRow) -> None:
        def job(conn: sqlite3.Connection, batch: _Batch) -> None:
            conn.execute(
                "INSERT OR IGNORE INTO signing_keys"
                " (key_id, algorithm, public_key, not_before, not_after, revoked_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (
                    key.key_id,
                    key.algorithm,
                    key.public_key,
                    key.not_before,
                    key.not_after,
                    key.revoked_at,
                ),
            )

        await self._write.submit(job)

    async def signing_keys(self) -> list[SigningKeyRow]:
        rows = self._read(
            "SELECT key_id, algorithm, public_key, not_before, not_after, revoked_at"
            " FROM signing_keys ORDER BY not_before, key_id",
            (),
        )
        return [SigningKeyRow(*row) for row in rows]

    # --- streams ------------------------------------------------------------------------

    async def create_stream(
        self,
        tenant: str,
        name: str,
        declarations: dict[str, str],
        strict: bool,
        genesis: bytes,
        now: str,
    ) -> StreamRow:
        def job(conn: sqlite3.Connection, batch: _Batch) -> StreamRow:
            try:
                cursor = conn.execute(
                    "INSERT INTO streams"
                    " (tenant, name, declarations, strict, next_seq, head, created_at)"
                    " VALUES (?, ?, ?, ?, 1, ?, ?)",
                    (tenant, name, json.dumps(declarations), int(strict), genesis, now),
                )
            except sqlite3.IntegrityError as exc:
                raise Conflict(f"stream {name!r} exists") from exc
            assert cursor.lastrowid is not None
            return StreamRow(cursor.lastrowid, tenant, name, declarations, strict, 1, now)

        return await self._write.submit(job)

    async def get_stream(self, tenant: str, name: str) -> StreamRow | None:
        rows = self._read(
            "SELECT id, tenant, name, declarations, strict, next_seq, created_at"
            " FROM streams WHERE tenant = ? AND name = ?",
            (tenant, name),
        )
        if not rows:
            return None
        id_, tenant_, name_, declarations, strict, next_seq, created_at = rows[0]
        return StreamRow(
            id_, tenant_, name_, json.loads(declarations), bool(strict), next_seq, created_at
        )

    # --- subjects -----------------------------------------------------------------------

    async def get_subject(self, tenant: str, subject_index: bytes) -> SubjectRow | None:
        rows = self._read(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = ? AND subject_index = ?",
            (tenant, subject_index),
        )
        return SubjectRow(*rows[0]) if rows else None

    async def get_subject_by_ref(self, tenant: str, subject_ref: str) -> SubjectRow | None:
        rows = self._read(
            "SELECT tenant, subject_ref, wrapped_key, erased_at FROM subjects"
            " WHERE tenant = ? AND subject_ref = ?",
            (tenant, subject_ref),
        )
        return SubjectRow(*rows[0]) if rows else None

    # --- records ------------------------------------------------------------------------

    async def append_record(
        self, tenant: str, stream_id: int, subject: SubjectClaim, build: RecordBuilder, now: str
    ) -> NewRecord:
        subject_ref = subject.subject_ref

        def job(conn: sqlite3.Connection, batch: _Batch) -> NewRecord:
            if subject.new_wrapped_key is not None:
                conn.execute(
                    "INSERT OR IGNORE INTO subjects"
                    " (tenant, subject_index, subject_ref, wrapped_key, created_at)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (tenant, subject.index, subject_ref, subject.new_wrapped_key, now),
                )
            stored = batch.subjects.get((tenant, subject.index))
            if stored is None:
                row = conn.execute(
                    "SELECT subject_ref, wrapped_key IS NOT NULL FROM subjects"
                    " WHERE tenant = ? AND subject_index = ?",
                    (tenant, subject.index),
                ).fetchone()
                if row is not None:
                    stored = batch.subjects[(tenant, subject.index)] = (row[0], bool(row[1]))
            if stored is None or stored[0] != subject_ref:
                raise SubjectRace(subject_ref)
            if not stored[1]:
                raise SubjectErased(subject_ref)
            seq, head = batch.head(conn, stream_id)
            record = build(seq, head)
            batch.records.append(
                (
                    record.record_id,
                    tenant,
                    stream_id,
                    seq,
                    subject_ref,
                    record.header,
                    record.signature,
                    record.chain_leaf,
                )
            )
            batch.payloads.append((record.record_id, subject_ref, record.sealed_payload))
            batch.heads[stream_id] = (seq + 1, record.chain_leaf)
            return record

        job.defers_rows = True  # type: ignore[attr-defined]
        return await self._write.submit(job)

    _RECORD_COLUMNS = (
        "r.record_id, r.tenant, s.name, r.seq, r.subject_ref, r.header, r.signature, r.chain_leaf"
    )

    async def get_record(self, tenant: str, record_id: str) -> RecordRow | None:
        rows = self._read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE r.record_id = ? AND r.tenant = ?",
            (record_id, tenant),
        )
        return RecordRow(*rows[0]) if rows else None

    # --- sealed batches ------------------------------------------------------------------

    async def unsealed_logs(self) -> list[tuple[str, str]]:
        """The (tenant, fleet) pairs that have records not yet in a sealed batch."""
        rows = self._read(
            "SELECT DISTINCT s.tenant, s.fleet FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE r.log_index IS NULL",
            (),
        )
        return [(tenant, fleet) for tenant, fleet in rows]

    async def seal(self, request: SealRequest) -> SealedBatch | None:
        """Append the pending chain leaves of one (tenant, fleet) to its log and store the
        signed checkpoint, in one transaction: a crash seals all of them or none."""
        return await self._write.submit(lambda conn, batch: _seal(conn, request))

    async def checkpoints(self, tenant: str, fleet: str) -> list[CheckpointRow]:
        rows = self._read(
            "SELECT l.origin, c.size, c.root, c.note, c.created_at FROM checkpoints c"
            " JOIN logs l ON l.id = c.log_id WHERE l.tenant = ? AND l.fleet = ? ORDER BY c.size",
            (tenant, fleet),
        )
        return [CheckpointRow(*row) for row in rows]

    async def log_nodes(
        self, origin: str, ids: set[tuple[int, int]]
    ) -> dict[tuple[int, int], bytes]:
        nodes: dict[tuple[int, int], bytes] = {}
        for level, index in ids:
            rows = self._read(
                "SELECT n.hash FROM log_nodes n JOIN logs l ON l.id = n.log_id"
                " WHERE l.origin = ? AND n.level = ? AND n.idx = ?",
                (origin, level, index),
            )
            if rows:
                nodes[(level, index)] = rows[0][0]
        return nodes

    async def log_origins(self) -> list[str]:
        return [origin for (origin,) in self._read("SELECT origin FROM logs ORDER BY id", ())]

    async def record_seal(self, tenant: str, record_id: str) -> tuple[str, int] | None:
        """The log origin and index of a sealed record, or None while it is pending."""
        rows = self._read(
            "SELECT l.origin, r.log_index FROM records r JOIN logs l ON l.id = r.log_id"
            " WHERE r.record_id = ? AND r.tenant = ?",
            (record_id, tenant),
        )
        return (rows[0][0], rows[0][1]) if rows else None

    async def add_cosignature(self, origin: str, size: int, witness: str, line: str) -> None:
        def job(conn: sqlite3.Connection, batch: _Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO cosignatures (log_id, size, witness, line)"
                " SELECT id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, witness, line, origin),
            )

        await self._write.submit(job)

    async def add_timestamp(self, origin: str, size: int, authority: str, token: bytes) -> None:
        def job(conn: sqlite3.Connection, batch: _Batch) -> None:
            conn.execute(
                "INSERT OR REPLACE INTO timestamps (log_id, size, authority, token)"
                " SELECT id, ?, ?, ? FROM logs WHERE origin = ?",
                (size, authority, token, origin),
            )

        await self._write.submit(job)

    async def timestamps(self, origin: str, size: int) -> list[tuple[str, bytes]]:
        rows = self._read(
            "SELECT t.authority, t.token FROM timestamps t JOIN logs l ON l.id = t.log_id"
            " WHERE l.origin = ? AND t.size = ? ORDER BY t.authority",
            (origin, size),
        )
        return [(authority, token) for authority, token in rows]

    async def cosignatures(self, origin: str, size: int) -> list[str]:
        rows = self._read(
            "SELECT c.line FROM cosignatures c JOIN logs l ON l.id = c.log_id"
            " WHERE l.origin = ? AND c.size = ? ORDER BY c.witness",
            (origin, size),
        )
        return [line for (line,) in rows]

    async def stream_records(self, tenant: str, stream: str) -> list[RecordRow]:
        rows = self._read(
            f"SELECT {self._RECORD_COLUMNS} FROM records r JOIN streams s ON s.id = r.stream_id"
            " WHERE s.tenant = ? AND s.name = ? ORDER BY r.seq",
            (tenant, stream),
        )
        return [RecordRow(*row) for row in rows]

    async def get_sealed_payload(self, tenant: str, record_id: str) -> bytes | None:
        rows = self._read(
            "SELECT p.sealed FROM payloads p JOIN records r ON r.record_id = p.record_id"
            " WHERE p.record_id = ? AND r.tenant = ?",
            (record_id, tenant),
        )
        return rows[0][0] if rows else None

    async def erase_subject(self, tenant: str, subject_ref: str, now: str) -> Erasure:
        def job(conn: sqlite3.Connection, batch: _Batch) -> Erasure:
            erased_at = conn.execute(
                "SELECT erased_at FROM subjects WHERE tenant = ? AND subject_ref = ?",
                (tenant, subject_ref),
            ).fetchone()[0]
            if erased_at is not None:
                return Erasure(False, erased_at, 0)
            conn.execute(
                "UPDATE subjects SET wrapped_key = NULL, erased_at = ? WHERE subject_ref = ?",
                (now, subject_ref),
            )
            deleted = conn.execute(
                "DELETE FROM payloads WHERE subject_ref = ?", (subject_ref,)
            ).rowcount
            self._write.request_checkpoint()
            return Erasure(True, now, deleted)

        return await self._write.submit(job)


SEAL_LIMIT = 50_000  # chain leaves per sealed batch; the rest wait for the next one


def _seal(conn: sqlite3.Connection, request: SealRequest) -> SealedBatch | None:
    row = conn.execute(
        "SELECT id, size FROM logs WHERE tenant = ? AND fleet = ?", (request.tenant, request.fleet)
    ).fetchone()
    created: dict[tuple[int, int], bytes] = {}

    def node(level: int, index: int) -> bytes:
        found = created.get((level, index))
        if found is None:
            found = conn.execute(
                "SELECT hash FROM log_nodes WHERE log_id = ? AND level = ? AND idx = ?",
                (log_id, level, index),
            ).fetchone()[0]
        return found

    def append(size: int, leaf: bytes) -> None:
        for level, index, digest in tree.nodes_completed_by_append(size, leaf, node):
            created[(level, index)] = digest

    if row is None:
        cursor = conn.execute(
            "INSERT INTO logs (tenant, fleet, origin, size, root) VALUES (?, ?, ?, 0, ?)",
            (request.tenant, request.fleet, request.origin, b""),
        )
        assert cursor.lastrowid is not None
        log_id, size = cursor.lastrowid, 0
        append(0, leaf_hash(request.genesis))  # leaf 0: the tenant genesis root
        size = 1
    else:
        log_id, size = row
    pending = conn.execute(
        "SELECT r.record_id, r.chain_leaf FROM records r JOIN streams s ON s.id = r.stream_id"
        " WHERE r.log_index IS NULL AND s.tenant = ? AND s.fleet = ? ORDER BY r.rowid LIMIT ?",
        (request.tenant, request.fleet, SEAL_LIMIT),
    ).fetchall()
    if not pending and row is not None:
        return None
    first_index = size
    for record_id, chain_leaf in pending:
        append(size, chain_leaf)
        conn.execute(
            "UPDATE records SET log_id = ?, log_index = ? WHERE record_id = ?",
            (log_id, size, record_id),
        )
        size += 1
    conn.executemany(
        "INSERT INTO log_nodes (log_id, level, idx, hash) VALUES (?, ?, ?, ?)",
        [(log_id, level, index, digest) for (level, index), digest in created.items()],
    )
    root = tree.root(size, node)
    note = request.sign(size, root)
    conn.execute("UPDATE logs SET size = ?, root = ? WHERE id = ?", (size, root, log_id))
    conn.execute(
        "INSERT INTO checkpoints (log_id, size, root, note, created_at) VALUES (?, ?, ?, ?, ?)",
        (log_id, size, root, note, request.now),
    )
    return SealedBatch(request.origin, first_index, size, root, note)
