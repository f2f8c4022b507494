"""The SQLite schema, its migrations, and how connections are opened."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from recordseal.storage.schema_version import refuse_newer
from recordseal.storage.sqlite.locks import enable_wal

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
    # complete-subtree nodes (recordseal.merkle.tree); checkpoints are its signed heads.
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
    # 4: idempotency keys of ingest (docs/records.md, "Retries").
    """
    CREATE TABLE idempotency_keys (
        tenant        TEXT NOT NULL,
        key           TEXT NOT NULL,
        request_hash  BLOB NOT NULL,
        record_id     TEXT NOT NULL REFERENCES records (record_id),
        created_at    TEXT NOT NULL,
        PRIMARY KEY (tenant, key)
    ) WITHOUT ROWID;
    CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
    """,
    # 5: anchors with an optional tenant (docs/fleets.md, "Audit events"). logs.tenant becomes
    # nullable
    # (NULL: a legacy fleet with no tenant), which SQLite can only do by rebuilding the table.
    # Ids are kept, so log_nodes, checkpoints and records still point at their log (migrate
    # checks every foreign key before COMMIT). UNIQUE (tenant, fleet) would let two NULL-tenant
    # rows in, so uniqueness is an index over ifnull(tenant, '') (no tenant id is empty).
    """
    CREATE TABLE logs_v5 (
        id      INTEGER PRIMARY KEY,
        tenant  TEXT,
        fleet   TEXT NOT NULL,
        origin  TEXT NOT NULL UNIQUE,
        size    INTEGER NOT NULL,
        root    BLOB NOT NULL
    );
    INSERT INTO logs_v5 (id, tenant, fleet, origin, size, root)
        SELECT id, tenant, fleet, origin, size, root FROM logs;
    DROP TABLE logs;
    ALTER TABLE logs_v5 RENAME TO logs;
    CREATE UNIQUE INDEX logs_scope ON logs (ifnull(tenant, ''), fleet);
    """,
    # 6: log positions assigned at insert (docs/records.md, "Sealing"). A record takes the
    # next position of its stream's (tenant, fleet) log in its insert transaction (counter:
    # log_positions), so sealing never rewrites a record row. A log row now exists from its
    # first stream on, unnamed (origin NULL) until the sealer first seals it: ``logs`` is
    # rebuilt with a nullable origin (ids kept). Pending records get the positions after the
    # sealed size, in insertion order, as the sealer would have given them.
    """
    CREATE TABLE logs_v6 (
        id      INTEGER PRIMARY KEY,
        tenant  TEXT,
        fleet   TEXT NOT NULL,
        origin  TEXT UNIQUE,
        size    INTEGER NOT NULL,
        root    BLOB NOT NULL
    );
    INSERT INTO logs_v6 (id, tenant, fleet, origin, size, root)
        SELECT id, tenant, fleet, origin, size, root FROM logs;
    DROP TABLE logs;
    ALTER TABLE logs_v6 RENAME TO logs;
    CREATE UNIQUE INDEX logs_scope ON logs (ifnull(tenant, ''), fleet);
    INSERT INTO logs (tenant, fleet, origin, size, root)
        SELECT DISTINCT s.tenant, s.fleet, NULL, 0, x'' FROM streams s
        WHERE NOT EXISTS (SELECT 1 FROM logs l WHERE l.tenant IS s.tenant AND l.fleet = s.fleet);
    CREATE TABLE log_positions (
        log_id      INTEGER PRIMARY KEY REFERENCES logs (id),
        next_index  INTEGER NOT NULL
    );
    ALTER TABLE streams ADD COLUMN log_id INTEGER REFERENCES logs (id);
    UPDATE streams SET log_id = (
        SELECT l.id FROM logs l WHERE l.tenant IS streams.tenant AND l.fleet = streams.fleet);
    UPDATE records SET log_id = p.log_id, log_index = p.position FROM (
        SELECT r.record_id, s.log_id, max(l.size, 1) - 1
            + row_number() OVER (PARTITION BY s.log_id ORDER BY r.rowid) AS position
        FROM records r JOIN streams s ON s.id = r.stream_id JOIN logs l ON l.id = s.log_id
        WHERE r.log_index IS NULL) AS p
    WHERE records.record_id = p.record_id;
    INSERT INTO log_positions (log_id, next_index)
        SELECT l.id, max(
            max(l.size, 1),
            ifnull((SELECT max(r.log_index) + 1 FROM records r WHERE r.log_id = l.id), 0))
        FROM logs l;
    DROP INDEX records_unsealed;
    CREATE UNIQUE INDEX records_by_log ON records (log_id, log_index);
    """,
    # 7: the operator panel's state (storage/panel.py, docs/panel.md): passkeys, links,
    # ceremonies, pending sso sign-ins, providers, sign-out epochs, and the fleet audit
    # stream with the manifest head its events are recorded against.
    """
    CREATE TABLE panel_passkeys (
        credential_id  BLOB PRIMARY KEY,
        user_id        TEXT NOT NULL,
        public_key     BLOB NOT NULL,
        sign_count     INTEGER NOT NULL,
        role           TEXT NOT NULL CHECK (role IN ('operator', 'viewer')),
        created_at     REAL NOT NULL
    );
    CREATE INDEX panel_passkeys_by_user ON panel_passkeys (user_id);
    CREATE TABLE panel_links (
        token_hash  BLOB PRIMARY KEY,
        role        TEXT NOT NULL CHECK (role IN ('operator', 'viewer')),
        created_at  REAL NOT NULL,
        expires_at  REAL NOT NULL,
        used_at     REAL
    );
    CREATE TABLE panel_ceremonies (
        state_id    TEXT PRIMARY KEY,
        kind        TEXT NOT NULL CHECK (kind IN ('register', 'authenticate')),
        challenge   BLOB NOT NULL,
        user_id     TEXT,
        token_hash  BLOB,
        expires_at  REAL NOT NULL
    );
    CREATE INDEX panel_ceremonies_by_expiry ON panel_ceremonies (expires_at);
    CREATE TABLE panel_pending_logins (
        nonce_hash    BLOB PRIMARY KEY,
        provider_ref  TEXT NOT NULL,
        return_url    TEXT NOT NULL,
        stash         BLOB,
        binding       BLOB,
        expires_at    REAL NOT NULL
    );
    CREATE INDEX panel_pending_logins_by_expiry ON panel_pending_logins (expires_at);
    CREATE TABLE panel_providers (
        id             TEXT PRIMARY KEY,
        tenant         TEXT NOT NULL,
        organization   TEXT NOT NULL,
        config         BLOB NOT NULL,
        secret         BLOB,
        registered_at  REAL NOT NULL,
        removed_at     REAL
    );
    CREATE TABLE panel_signout (
        scope  TEXT PRIMARY KEY,
        epoch  INTEGER NOT NULL
    );
    CREATE TABLE fleet_audit (
        id      INTEGER PRIMARY KEY,
        key     TEXT UNIQUE,
        at      TEXT NOT NULL,
        event   TEXT NOT NULL,
        tenant  TEXT,
        fleet   TEXT NOT NULL,
        line    TEXT NOT NULL
    );
    CREATE INDEX fleet_audit_by_tenant ON fleet_audit (tenant, id);
    CREATE TABLE fleet_manifest_head (
        id       INTEGER PRIMARY KEY CHECK (id = 1),
        digest   TEXT,
        refused  TEXT
    );
    INSERT INTO fleet_manifest_head (id, digest, refused) VALUES (1, NULL, NULL);
    """,
    # 8: when each API token was last used (``recordseal token list``), to within a minute.
    """
    ALTER TABLE tokens ADD COLUMN last_used_at TEXT;
    """,
    # 9: successor logs (docs/continuity.md, "Recover"). ``recordseal recover`` retires a log
    # the store lost part of (``retired_at``) and starts its successor, a new row of the same
    # (tenant, fleet) whose leaf 0 commits to the predecessor's last signed checkpoint
    # (``predecessor``, ``predecessor_size``, ``predecessor_root``). One live log per scope.
    """
    ALTER TABLE logs ADD COLUMN retired_at TEXT;
    ALTER TABLE logs ADD COLUMN predecessor TEXT;
    ALTER TABLE logs ADD COLUMN predecessor_size INTEGER;
    ALTER TABLE logs ADD COLUMN predecessor_root BLOB;
    DROP INDEX logs_scope;
    CREATE UNIQUE INDEX logs_scope ON logs (ifnull(tenant, ''), fleet) WHERE retired_at IS NULL;
    """,
    # 10: header-signing keys that rotate and can be revoked as compromised (docs/operations.md,
    # "Keys"): where each private half lives, and from when it is known compromised.
    """
    ALTER TABLE signing_keys ADD COLUMN compromised_at TEXT;
    ALTER TABLE signing_keys ADD COLUMN location TEXT;
    """,
    # 11: how many sequence numbers of each stream a gap header declared lost (docs/records.md,
    # "Listing streams and records"), so a stream's record count is read from its row:
    # next_seq - 1 - lost_seqs, never counted over its records. Every seq below next_seq is
    # a stored record or declared lost, so the records already stored give the start value.
    """
    ALTER TABLE streams ADD COLUMN lost_seqs INTEGER NOT NULL DEFAULT 0;
    UPDATE streams SET lost_seqs = next_seq - 1
        - (SELECT count(*) FROM records r WHERE r.stream_id = streams.id);
    """,
    # 12: tenants, organizations and fleet references in the database (storage/hierarchy.py,
    # docs/panel.md), created at run time or loaded from the seed file. Every tenant already
    # holding tokens or streams is registered (source 'implicit', its id as its name), so it
    # appears in the panel.
    """
    CREATE TABLE tenants (
        id             TEXT PRIMARY KEY,
        display_name   TEXT NOT NULL,
        contact_email  TEXT,
        active         INTEGER NOT NULL CHECK (active IN (0, 1)),
        source         TEXT NOT NULL CHECK (source IN ('seed', 'operator', 'implicit')),
        created_at     TEXT NOT NULL
    ) WITHOUT ROWID;
    CREATE TABLE organizations (
        tenant_id         TEXT NOT NULL REFERENCES tenants (id),
        id                TEXT NOT NULL,
        display_name      TEXT NOT NULL,
        sso_provider_ref  TEXT,
        source            TEXT NOT NULL CHECK (source IN ('seed', 'operator')),
        created_at        TEXT NOT NULL,
        PRIMARY KEY (tenant_id, id)
    ) WITHOUT ROWID;
    CREATE TABLE fleet_refs (
        fleet_id         TEXT PRIMARY KEY,
        tenant_id        TEXT NOT NULL,
        organization_id  TEXT NOT NULL,
        FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
    ) WITHOUT ROWID;
    CREATE INDEX fleet_refs_by_organization ON fleet_refs (tenant_id, organization_id);
    INSERT INTO tenants (id, display_name, contact_email, active, source, created_at)
        SELECT tenant, tenant, NULL, 1, 'implicit', min(created_at) FROM (
            SELECT tenant, created_at FROM tokens
            UNION ALL SELECT tenant, created_at FROM streams)
        GROUP BY tenant;
    """,
    # 13: the operator's live view (storage/activity.py, docs/panel.md, "Live view"), read
    # from rows kept as records arrive, never by counting records: each stream's last ingest
    # time; per log, records appended per UTC minute (ingest rate, and with the checkpoints the
    # sealing lag over time); each witness's last cosignature and its current failures; and
    # indexes for a log's checkpoints by time, a tenant's erasures and its tokens.
    """
    ALTER TABLE streams ADD COLUMN last_ingest_at TEXT;
    CREATE TABLE ingest_minutes (
        log_id   INTEGER NOT NULL REFERENCES logs (id),
        minute   INTEGER NOT NULL,
        records  INTEGER NOT NULL,
        PRIMARY KEY (log_id, minute)
    ) WITHOUT ROWID;
    CREATE TABLE witness_health (
        log_id         INTEGER NOT NULL REFERENCES logs (id),
        witness        TEXT NOT NULL,
        cosigned_size  INTEGER,
        cosigned_at    TEXT,
        failures       INTEGER NOT NULL DEFAULT 0,
        code           TEXT,
        reason         TEXT,
        failed_at      TEXT,
        PRIMARY KEY (log_id, witness)
    ) WITHOUT ROWID;
    CREATE INDEX checkpoints_by_time ON checkpoints (log_id, created_at);
    CREATE INDEX subjects_erased ON subjects (tenant, erased_at) WHERE erased_at IS NOT NULL;
    CREATE INDEX tokens_by_tenant ON tokens (tenant);
    """,
    # 14: the deployment's aggregate log (docs/tlog.md, "The aggregate log"): a ``logs`` row of
    # no tenant and the empty fleet (no fleet id is empty), whose entries commit to the tenant
    # logs' checkpoints. ``aggregate_entries`` maps each entry's position to its checkpoint
    # (no foreign key: the aggregate spans tenants); ``logs.aggregated_size`` is each log's
    # largest checkpoint taken, so the checkpoints still to take are found by the key.
    """
    ALTER TABLE logs ADD COLUMN aggregated_size INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE aggregate_entries (
        idx     INTEGER PRIMARY KEY,
        log_id  INTEGER NOT NULL,
        size    INTEGER NOT NULL,
        entry   BLOB NOT NULL,
        UNIQUE (log_id, size)
    );
    """,
    # 15: the tenant leads every key of tenant data (docs/records.md, "Distributing by
    # tenant"), so tenants can be spread over servers by ``tenant``. A log of no tenant (a
    # legacy fleet's, and the aggregate log) keeps its rows under the tenant '' (no tenant id
    # is empty; the store reads it back as None). Tables keyed by a log, a record or a
    # checkpoint get the column, filled from the row they belong to; every foreign key between
    # tenant tables includes it. ``aggregate_entries`` is the aggregate log's, so under ''
    # too; each entry names the checkpoint it commits to by (``log_tenant``, ``log_id``,
    # ``size``). ``streams`` and ``logs`` keep their ids (the store gives the next one:
    # max + 1, under the write lock), read from an index on the id alone. SQLite changes a key
    # only by rebuilding its table: each is copied into its new shape, its indexes made anew.
    """
    CREATE TABLE logs_v15 (
        id                INTEGER NOT NULL,
        tenant            TEXT NOT NULL,
        fleet             TEXT NOT NULL,
        origin            TEXT,
        size              INTEGER NOT NULL,
        root              BLOB NOT NULL,
        retired_at        TEXT,
        predecessor       TEXT,
        predecessor_size  INTEGER,
        predecessor_root  BLOB,
        aggregated_size   INTEGER NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant, id),
        UNIQUE (tenant, origin)
    ) WITHOUT ROWID;
    INSERT INTO logs_v15 (id, tenant, fleet, origin, size, root, retired_at, predecessor,
            predecessor_size, predecessor_root, aggregated_size)
        SELECT id, ifnull(tenant, ''), fleet, origin, size, root, retired_at, predecessor,
            predecessor_size, predecessor_root, aggregated_size FROM logs;
    DROP TABLE logs;
    ALTER TABLE logs_v15 RENAME TO logs;
    CREATE UNIQUE INDEX logs_scope ON logs (tenant, fleet) WHERE retired_at IS NULL;
    CREATE INDEX logs_by_origin ON logs (origin);
    CREATE INDEX logs_by_id ON logs (id);
    CREATE TABLE log_positions_v15 (
        tenant      TEXT NOT NULL,
        log_id      INTEGER NOT NULL,
        next_index  INTEGER NOT NULL,
        PRIMARY KEY (tenant, log_id),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO log_positions_v15 (tenant, log_id, next_index)
        SELECT l.tenant, p.log_id, p.next_index FROM log_positions p JOIN logs l ON l.id = p.log_id;
    DROP TABLE log_positions;
    ALTER TABLE log_positions_v15 RENAME TO log_positions;
    CREATE TABLE aggregate_entries_v15 (
        tenant      TEXT NOT NULL,
        idx         INTEGER NOT NULL,
        log_tenant  TEXT NOT NULL,
        log_id      INTEGER NOT NULL,
        size        INTEGER NOT NULL,
        entry       BLOB NOT NULL,
        PRIMARY KEY (tenant, idx),
        UNIQUE (tenant, log_tenant, log_id, size)
    ) WITHOUT ROWID;
    INSERT INTO aggregate_entries_v15 (tenant, idx, log_tenant, log_id, size, entry)
        SELECT '', a.idx, l.tenant, a.log_id, a.size, a.entry FROM aggregate_entries a
        JOIN logs l ON l.id = a.log_id;
    DROP TABLE aggregate_entries;
    ALTER TABLE aggregate_entries_v15 RENAME TO aggregate_entries;
    CREATE TABLE log_nodes_v15 (
        tenant  TEXT NOT NULL,
        log_id  INTEGER NOT NULL,
        level   INTEGER NOT NULL,
        idx     INTEGER NOT NULL,
        hash    BLOB NOT NULL,
        PRIMARY KEY (tenant, log_id, level, idx),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO log_nodes_v15 (tenant, log_id, level, idx, hash)
        SELECT l.tenant, n.log_id, n.level, n.idx, n.hash FROM log_nodes n
        JOIN logs l ON l.id = n.log_id;
    DROP TABLE log_nodes;
    ALTER TABLE log_nodes_v15 RENAME TO log_nodes;
    CREATE TABLE checkpoints_v15 (
        tenant      TEXT NOT NULL,
        log_id      INTEGER NOT NULL,
        size        INTEGER NOT NULL,
        root        BLOB NOT NULL,
        note        TEXT NOT NULL,
        created_at  TEXT NOT NULL,
        PRIMARY KEY (tenant, log_id, size),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO checkpoints_v15 (tenant, log_id, size, root, note, created_at)
        SELECT l.tenant, c.log_id, c.size, c.root, c.note, c.created_at FROM checkpoints c
        JOIN logs l ON l.id = c.log_id;
    DROP TABLE checkpoints;
    ALTER TABLE checkpoints_v15 RENAME TO checkpoints;
    CREATE INDEX checkpoints_by_time ON checkpoints (tenant, log_id, created_at);
    CREATE TABLE cosignatures_v15 (
        tenant   TEXT NOT NULL,
        log_id   INTEGER NOT NULL,
        size     INTEGER NOT NULL,
        witness  TEXT NOT NULL,
        line     TEXT NOT NULL,
        PRIMARY KEY (tenant, log_id, size, witness),
        FOREIGN KEY (tenant, log_id, size) REFERENCES checkpoints (tenant, log_id, size)
    ) WITHOUT ROWID;
    INSERT INTO cosignatures_v15 (tenant, log_id, size, witness, line)
        SELECT l.tenant, c.log_id, c.size, c.witness, c.line FROM cosignatures c
        JOIN logs l ON l.id = c.log_id;
    DROP TABLE cosignatures;
    ALTER TABLE cosignatures_v15 RENAME TO cosignatures;
    CREATE TABLE timestamps_v15 (
        tenant     TEXT NOT NULL,
        log_id     INTEGER NOT NULL,
        size       INTEGER NOT NULL,
        authority  TEXT NOT NULL,
        token      BLOB NOT NULL,
        PRIMARY KEY (tenant, log_id, size, authority),
        FOREIGN KEY (tenant, log_id, size) REFERENCES checkpoints (tenant, log_id, size)
    ) WITHOUT ROWID;
    INSERT INTO timestamps_v15 (tenant, log_id, size, authority, token)
        SELECT l.tenant, t.log_id, t.size, t.authority, t.token FROM timestamps t
        JOIN logs l ON l.id = t.log_id;
    DROP TABLE timestamps;
    ALTER TABLE timestamps_v15 RENAME TO timestamps;
    CREATE TABLE ingest_minutes_v15 (
        tenant   TEXT NOT NULL,
        log_id   INTEGER NOT NULL,
        minute   INTEGER NOT NULL,
        records  INTEGER NOT NULL,
        PRIMARY KEY (tenant, log_id, minute),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO ingest_minutes_v15 (tenant, log_id, minute, records)
        SELECT l.tenant, m.log_id, m.minute, m.records FROM ingest_minutes m
        JOIN logs l ON l.id = m.log_id;
    DROP TABLE ingest_minutes;
    ALTER TABLE ingest_minutes_v15 RENAME TO ingest_minutes;
    CREATE TABLE witness_health_v15 (
        tenant         TEXT NOT NULL,
        log_id         INTEGER NOT NULL,
        witness        TEXT NOT NULL,
        cosigned_size  INTEGER,
        cosigned_at    TEXT,
        failures       INTEGER NOT NULL DEFAULT 0,
        code           TEXT,
        reason         TEXT,
        failed_at      TEXT,
        PRIMARY KEY (tenant, log_id, witness),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    ) WITHOUT ROWID;
    INSERT INTO witness_health_v15 (tenant, log_id, witness, cosigned_size, cosigned_at,
            failures, code, reason, failed_at)
        SELECT l.tenant, w.log_id, w.witness, w.cosigned_size, w.cosigned_at, w.failures,
            w.code, w.reason, w.failed_at FROM witness_health w JOIN logs l ON l.id = w.log_id;
    DROP TABLE witness_health;
    ALTER TABLE witness_health_v15 RENAME TO witness_health;
    CREATE TABLE streams_v15 (
        id              INTEGER NOT NULL,
        tenant          TEXT NOT NULL,
        name            TEXT NOT NULL,
        declarations    TEXT NOT NULL,
        strict          INTEGER NOT NULL,
        next_seq        INTEGER NOT NULL,
        head            BLOB NOT NULL,
        created_at      TEXT NOT NULL,
        fleet           TEXT NOT NULL DEFAULT 'default',
        log_id          INTEGER,
        lost_seqs       INTEGER NOT NULL DEFAULT 0,
        last_ingest_at  TEXT,
        PRIMARY KEY (tenant, id),
        UNIQUE (tenant, name),
        FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id)
    );
    INSERT INTO streams_v15 (id, tenant, name, declarations, strict, next_seq, head, created_at,
            fleet, log_id, lost_seqs, last_ingest_at)
        SELECT id, tenant, name, declarations, strict, next_seq, head, created_at, fleet,
            log_id, lost_seqs, last_ingest_at FROM streams ORDER BY id;
    DROP TABLE streams;
    ALTER TABLE streams_v15 RENAME TO streams;
    CREATE INDEX streams_by_id ON streams (id);
    CREATE TABLE subjects_v15 (
        tenant         TEXT NOT NULL,
        subject_index  BLOB NOT NULL,
        subject_ref    TEXT NOT NULL,
        wrapped_key    BLOB,
        created_at     TEXT NOT NULL,
        erased_at      TEXT,
        PRIMARY KEY (tenant, subject_index),
        UNIQUE (tenant, subject_ref)
    ) WITHOUT ROWID;
    INSERT INTO subjects_v15 (tenant, subject_index, subject_ref, wrapped_key, created_at,
            erased_at)
        SELECT tenant, subject_index, subject_ref, wrapped_key, created_at, erased_at
        FROM subjects;
    DROP TABLE subjects;
    ALTER TABLE subjects_v15 RENAME TO subjects;
    CREATE INDEX subjects_erased ON subjects (tenant, erased_at) WHERE erased_at IS NOT NULL;
    CREATE TABLE records_v15 (
        record_id    TEXT NOT NULL,
        tenant       TEXT NOT NULL,
        stream_id    INTEGER NOT NULL,
        seq          INTEGER NOT NULL,
        subject_ref  TEXT NOT NULL,
        header       BLOB NOT NULL,
        signature    BLOB NOT NULL,
        chain_leaf   BLOB NOT NULL,
        log_id       INTEGER,
        log_index    INTEGER,
        PRIMARY KEY (tenant, record_id),
        UNIQUE (tenant, stream_id, seq),
        FOREIGN KEY (tenant, stream_id) REFERENCES streams (tenant, id)
    );
    INSERT INTO records_v15 (record_id, tenant, stream_id, seq, subject_ref, header, signature,
            chain_leaf, log_id, log_index)
        SELECT record_id, tenant, stream_id, seq, subject_ref, header, signature, chain_leaf,
            log_id, log_index FROM records ORDER BY rowid;
    DROP TABLE records;
    ALTER TABLE records_v15 RENAME TO records;
    CREATE UNIQUE INDEX records_by_log ON records (tenant, log_id, log_index);
    CREATE TABLE payloads_v15 (
        tenant       TEXT NOT NULL,
        record_id    TEXT NOT NULL,
        subject_ref  TEXT NOT NULL,
        sealed       BLOB NOT NULL,
        PRIMARY KEY (tenant, record_id),
        FOREIGN KEY (tenant, record_id) REFERENCES records (tenant, record_id)
    );
    INSERT INTO payloads_v15 (tenant, record_id, subject_ref, sealed)
        SELECT r.tenant, p.record_id, p.subject_ref, p.sealed FROM payloads p
        JOIN records r ON r.record_id = p.record_id ORDER BY p.rowid;
    DROP TABLE payloads;
    ALTER TABLE payloads_v15 RENAME TO payloads;
    CREATE INDEX payloads_by_subject ON payloads (tenant, subject_ref);
    CREATE TABLE idempotency_keys_v15 (
        tenant        TEXT NOT NULL,
        key           TEXT NOT NULL,
        request_hash  BLOB NOT NULL,
        record_id     TEXT NOT NULL,
        created_at    TEXT NOT NULL,
        PRIMARY KEY (tenant, key),
        FOREIGN KEY (tenant, record_id) REFERENCES records (tenant, record_id)
    ) WITHOUT ROWID;
    INSERT INTO idempotency_keys_v15 (tenant, key, request_hash, record_id, created_at)
        SELECT tenant, key, request_hash, record_id, created_at FROM idempotency_keys;
    DROP TABLE idempotency_keys;
    ALTER TABLE idempotency_keys_v15 RENAME TO idempotency_keys;
    CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
    """,
]


def connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA busy_timeout = 30000")
    enable_wal(conn)
    conn.execute("PRAGMA synchronous = FULL")
    conn.execute("PRAGMA foreign_keys = ON")
    # Freed pages are overwritten with zeros, so erased payloads and keys leave no trace.
    conn.execute("PRAGMA secure_delete = ON")
    return conn


def schema_version(path: Path) -> int:
    """The newest migration applied to the database at ``path`` (0: none, or no file); reads
    only, and creates nothing."""
    if not path.exists():
        return 0
    conn = sqlite3.connect(path)
    try:
        conn.execute("PRAGMA busy_timeout = 30000")
        known = conn.execute(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'"
        ).fetchone()
        if known is None:
            return 0
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        return int(row[0] or 0)
    finally:
        conn.close()


def migrate(conn: sqlite3.Connection) -> None:
    """Apply the missing migrations in one transaction.

    Foreign keys are off meanwhile (SQLite's procedure for rebuilding a table that others
    reference; the pragma is a no-op inside a transaction) and every one is checked before
    COMMIT, so a migration can never leave a dangling reference.
    """
    conn.execute("PRAGMA foreign_keys = OFF")
    conn.execute("BEGIN IMMEDIATE")
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        row = conn.execute("SELECT max(version) FROM schema_version").fetchone()
        current = row[0] or 0
        refuse_newer(current, len(MIGRATIONS))
        for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute("INSERT INTO schema_version (version) VALUES (?)", (version,))
        dangling = conn.execute("PRAGMA foreign_key_check").fetchall()
        if dangling:
            raise sqlite3.IntegrityError(f"migration left dangling references: {dangling[:5]}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
