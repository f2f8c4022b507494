"""The PostgreSQL schema and its migrations (the same tables as SQLite's, in PostgreSQL types).

Migrations are applied in order at start (and by ``recordseal migrate``), each in its own
transaction, under an advisory lock so processes starting together apply each one once.
Timestamps stay RFC 3339 text, as on SQLite, so rows read back identically on both backends.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeAlias

import asyncpg

from recordseal.storage.schema_version import refuse_newer

if TYPE_CHECKING:
    from asyncpg.pool import PoolConnectionProxy

    #: A connection of its own or one lent by the pool.
    Connection: TypeAlias = asyncpg.Connection[Any] | PoolConnectionProxy[Any]

#: Any constant shared by every recordseal process: the key of the migration advisory lock.
MIGRATION_LOCK = 0x7265636F7264  # "record"

MIGRATIONS: list[str] = [
    """
    CREATE TABLE tokens (
        token_hash  bytea PRIMARY KEY,
        tenant      text NOT NULL,
        label       text NOT NULL,
        created_at  text NOT NULL,
        revoked_at  text
    );
    CREATE TABLE signing_keys (
        key_id      text PRIMARY KEY,
        algorithm   text NOT NULL,
        public_key  bytea NOT NULL,
        not_before  text NOT NULL,
        not_after   text,
        revoked_at  text
    );
    CREATE TABLE streams (
        id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant        text NOT NULL,
        name          text NOT NULL,
        fleet         text NOT NULL DEFAULT 'default',
        declarations  text NOT NULL,
        strict        boolean NOT NULL,
        next_seq      bigint NOT NULL,
        head          bytea NOT NULL,
        created_at    text NOT NULL,
        UNIQUE (tenant, name)
    );
    CREATE TABLE subjects (
        tenant         text NOT NULL,
        subject_index  bytea NOT NULL,
        subject_ref    text NOT NULL UNIQUE,
        wrapped_key    bytea,
        created_at     text NOT NULL,
        erased_at      text,
        PRIMARY KEY (tenant, subject_index)
    );
    CREATE TABLE logs (
        id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant  text NOT NULL,
        fleet   text NOT NULL,
        origin  text NOT NULL UNIQUE,
        size    bigint NOT NULL,
        root    bytea NOT NULL,
        UNIQUE (tenant, fleet)
    );
    -- ``id`` orders records as they were committed, for sealing.
    CREATE TABLE records (
        id           bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
        record_id    text PRIMARY KEY,
        tenant       text NOT NULL,
        stream_id    bigint NOT NULL REFERENCES streams (id),
        seq          bigint NOT NULL,
        subject_ref  text NOT NULL,
        header       bytea NOT NULL,
        signature    bytea NOT NULL,
        chain_leaf   bytea NOT NULL,
        log_id       bigint REFERENCES logs (id),
        log_index    bigint,
        UNIQUE (stream_id, seq)
    );
    CREATE INDEX records_unsealed ON records (stream_id, id) WHERE log_index IS NULL;
    CREATE TABLE payloads (
        record_id    text PRIMARY KEY REFERENCES records (record_id),
        subject_ref  text NOT NULL,
        sealed       bytea NOT NULL
    );
    CREATE INDEX payloads_by_subject ON payloads (subject_ref);
    CREATE TABLE log_nodes (
        log_id  bigint NOT NULL REFERENCES logs (id),
        level   integer NOT NULL,
        idx     bigint NOT NULL,
        hash    bytea NOT NULL,
        PRIMARY KEY (log_id, level, idx)
    );
    CREATE TABLE checkpoints (
        log_id      bigint NOT NULL REFERENCES logs (id),
        size        bigint NOT NULL,
        root        bytea NOT NULL,
        note        text NOT NULL,
        created_at  text NOT NULL,
        PRIMARY KEY (log_id, size)
    );
    CREATE TABLE cosignatures (
        log_id   bigint NOT NULL,
        size     bigint NOT NULL,
        witness  text NOT NULL,
        line     text NOT NULL,
        PRIMARY KEY (log_id, size, witness),
        FOREIGN KEY (log_id, size) REFERENCES checkpoints (log_id, size)
    );
    CREATE TABLE timestamps (
        log_id     bigint NOT NULL,
        size       bigint NOT NULL,
        authority  text NOT NULL,
        token      bytea NOT NULL,
        PRIMARY KEY (log_id, size, authority),
        FOREIGN KEY (log_id, size) REFERENCES checkpoints (log_id, size)
    );
    """,
    # 2: idempotency keys of ingest (docs/records.md, "Retries").
    """
    CREATE TABLE idempotency_keys (
        tenant        text NOT NULL,
        key           text NOT NULL,
        request_hash  bytea NOT NULL,
        record_id     text NOT NULL REFERENCES records (record_id),
        created_at    text NOT NULL,
        PRIMARY KEY (tenant, key)
    );
    CREATE INDEX idempotency_keys_by_age ON idempotency_keys (created_at);
    """,
    # 3: anchors with an optional tenant (docs/fleets.md): NULL is a legacy fleet's log.
    # UNIQUE (tenant, fleet) would admit two NULL-tenant rows of one fleet, so uniqueness is an
    # index over coalesce(tenant, '') (no tenant id is empty).
    """
    ALTER TABLE logs ALTER COLUMN tenant DROP NOT NULL;
    ALTER TABLE logs DROP CONSTRAINT logs_tenant_fleet_key;
    CREATE UNIQUE INDEX logs_scope ON logs ((coalesce(tenant, '')), fleet);
    """,
    # 4: log positions assigned at insert (docs/records.md, "Sealing"): as SQLite's migration
    # 6. The counter lives in a table of its own, so the appends that take positions and the
    # sealer that updates a log's size and root never wait for each other's row lock.
    """
    ALTER TABLE logs ALTER COLUMN origin DROP NOT NULL;
    INSERT INTO logs (tenant, fleet, origin, size, root)
        SELECT DISTINCT s.tenant, s.fleet, NULL::text, 0, ''::bytea FROM streams s
        WHERE NOT EXISTS (SELECT 1 FROM logs l
                          WHERE l.tenant IS NOT DISTINCT FROM s.tenant AND l.fleet = s.fleet);
    CREATE TABLE log_positions (
        log_id      bigint PRIMARY KEY REFERENCES logs (id),
        next_index  bigint NOT NULL
    );
    ALTER TABLE streams ADD COLUMN log_id bigint REFERENCES logs (id);
    UPDATE streams s SET log_id = l.id FROM logs l WHERE l.tenant = s.tenant AND l.fleet = s.fleet;
    ALTER TABLE streams ALTER COLUMN log_id SET NOT NULL;
    UPDATE records r SET log_id = p.log_id, log_index = p.position FROM (
        SELECT r2.record_id, s.log_id, greatest(l.size, 1) - 1
            + row_number() OVER (PARTITION BY s.log_id ORDER BY r2.id) AS position
        FROM records r2 JOIN streams s ON s.id = r2.stream_id JOIN logs l ON l.id = s.log_id
        WHERE r2.log_index IS NULL) AS p
    WHERE r.record_id = p.record_id;
    INSERT INTO log_positions (log_id, next_index)
        SELECT l.id, greatest(
            greatest(l.size, 1),
            (SELECT max(r.log_index) + 1 FROM records r WHERE r.log_id = l.id))
        FROM logs l;
    DROP INDEX records_unsealed;
    CREATE UNIQUE INDEX records_by_log ON records (log_id, log_index);
    """,
    # 5: the operator panel's state, as SQLite's migration 7 (storage/panel.py).
    """
    CREATE TABLE panel_passkeys (
        credential_id  bytea PRIMARY KEY,
        user_id        text NOT NULL,
        public_key     bytea NOT NULL,
        sign_count     bigint NOT NULL,
        role           text NOT NULL CHECK (role IN ('operator', 'viewer')),
        created_at     double precision NOT NULL
    );
    CREATE INDEX panel_passkeys_by_user ON panel_passkeys (user_id);
    CREATE TABLE panel_links (
        token_hash  bytea PRIMARY KEY,
        role        text NOT NULL CHECK (role IN ('operator', 'viewer')),
        created_at  double precision NOT NULL,
        expires_at  double precision NOT NULL,
        used_at     double precision
    );
    CREATE TABLE panel_ceremonies (
        state_id    text PRIMARY KEY,
        kind        text NOT NULL CHECK (kind IN ('register', 'authenticate')),
        challenge   bytea NOT NULL,
        user_id     text,
        token_hash  bytea,
        expires_at  double precision NOT NULL
    );
    CREATE INDEX panel_ceremonies_by_expiry ON panel_ceremonies (expires_at);
    CREATE TABLE panel_pending_logins (
        nonce_hash    bytea PRIMARY KEY,
        provider_ref  text NOT NULL,
        return_url    text NOT NULL,
        stash         bytea,
        binding       bytea,
        expires_at    double precision NOT NULL
    );
    CREATE INDEX panel_pending_logins_by_expiry ON panel_pending_logins (expires_at);
    CREATE TABLE panel_providers (
        id             text PRIMARY KEY,
        tenant         text NOT NULL,
        organization   text NOT NULL,
        config         bytea NOT NULL,
        secret         bytea,
        registered_at  double precision NOT NULL,
        removed_at     double precision
    );
    CREATE TABLE panel_signout (
        scope  text PRIMARY KEY,
        epoch  bigint NOT NULL
    );
    CREATE TABLE fleet_audit (
        id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        key     text UNIQUE,
        at      text NOT NULL,
        event   text NOT NULL,
        tenant  text,
        fleet   text NOT NULL,
        line    text NOT NULL
    );
    CREATE INDEX fleet_audit_by_tenant ON fleet_audit (tenant, id);
    CREATE TABLE fleet_manifest_head (
        id       integer PRIMARY KEY CHECK (id = 1),
        digest   text,
        refused  text
    );
    INSERT INTO fleet_manifest_head (id, digest, refused) VALUES (1, NULL, NULL);
    """,
    # 6: when each API token was last used, as SQLite's migration 8.
    """
    ALTER TABLE tokens ADD COLUMN last_used_at text;
    """,
    # 7: successor logs, as SQLite's migration 9.
    """
    ALTER TABLE logs ADD COLUMN retired_at text;
    ALTER TABLE logs ADD COLUMN predecessor text;
    ALTER TABLE logs ADD COLUMN predecessor_size bigint;
    ALTER TABLE logs ADD COLUMN predecessor_root bytea;
    DROP INDEX logs_scope;
    CREATE UNIQUE INDEX logs_scope ON logs ((coalesce(tenant, '')), fleet) WHERE retired_at IS NULL;
    """,
    # 8: rotating and revocable header-signing keys, as SQLite's migration 10.
    """
    ALTER TABLE signing_keys ADD COLUMN compromised_at text;
    ALTER TABLE signing_keys ADD COLUMN location text;
    """,
    # 9: the sequence numbers each stream declared lost, as SQLite's migration 11; and the
    # tenant's streams in byte order of their names (SQLite's order), for listing them.
    """
    ALTER TABLE streams ADD COLUMN lost_seqs bigint NOT NULL DEFAULT 0;
    UPDATE streams SET lost_seqs = next_seq - 1
        - (SELECT count(*) FROM records r WHERE r.stream_id = streams.id);
    CREATE INDEX streams_by_name ON streams (tenant, name COLLATE "C");
    """,
    # 10: tenants, organizations and fleet references, as SQLite's migration 12.
    """
    CREATE TABLE tenants (
        id             text PRIMARY KEY,
        display_name   text NOT NULL,
        contact_email  text,
        active         boolean NOT NULL,
        source         text NOT NULL CHECK (source IN ('seed', 'operator', 'implicit')),
        created_at     text NOT NULL
    );
    CREATE TABLE organizations (
        tenant_id         text NOT NULL REFERENCES tenants (id),
        id                text NOT NULL,
        display_name      text NOT NULL,
        sso_provider_ref  text,
        source            text NOT NULL CHECK (source IN ('seed', 'operator')),
        created_at        text NOT NULL,
        PRIMARY KEY (tenant_id, id)
    );
    CREATE TABLE fleet_refs (
        fleet_id         text PRIMARY KEY,
        tenant_id        text NOT NULL,
        organization_id  text NOT NULL,
        FOREIGN KEY (tenant_id, organization_id) REFERENCES organizations (tenant_id, id)
    );
    CREATE INDEX fleet_refs_by_organization ON fleet_refs (tenant_id, organization_id);
    INSERT INTO tenants (id, display_name, contact_email, active, source, created_at)
        SELECT tenant, tenant, NULL, true, 'implicit', min(created_at) FROM (
            SELECT tenant, created_at FROM tokens
            UNION ALL SELECT tenant, created_at FROM streams) AS held
        GROUP BY tenant;
    """,
    # 11: the operator's live view, as SQLite's migration 13.
    """
    ALTER TABLE streams ADD COLUMN last_ingest_at text;
    CREATE TABLE ingest_minutes (
        log_id   bigint NOT NULL REFERENCES logs (id),
        minute   bigint NOT NULL,
        records  bigint NOT NULL,
        PRIMARY KEY (log_id, minute)
    );
    CREATE TABLE witness_health (
        log_id         bigint NOT NULL REFERENCES logs (id),
        witness        text NOT NULL,
        cosigned_size  bigint,
        cosigned_at    text,
        failures       bigint NOT NULL DEFAULT 0,
        code           text,
        reason         text,
        failed_at      text,
        PRIMARY KEY (log_id, witness)
    );
    CREATE INDEX checkpoints_by_time ON checkpoints (log_id, created_at);
    CREATE INDEX subjects_erased ON subjects (tenant, erased_at) WHERE erased_at IS NOT NULL;
    CREATE INDEX tokens_by_tenant ON tokens (tenant);
    """,
    # 12: the deployment's aggregate log, as SQLite's migration 14.
    """
    ALTER TABLE logs ADD COLUMN aggregated_size bigint NOT NULL DEFAULT 0;
    CREATE TABLE aggregate_entries (
        idx     bigint PRIMARY KEY,
        log_id  bigint NOT NULL,
        size    bigint NOT NULL,
        entry   bytea NOT NULL,
        UNIQUE (log_id, size)
    );
    """,
    # 13: the tenant leads every key of tenant data, as SQLite's migration 15 (docs/records.md,
    # "Distributing by tenant"). The foreign keys between tenant tables are dropped, the keys
    # remade with the tenant first, and the foreign keys made again with it; a log of no
    # tenant (a legacy fleet's, and the aggregate log) keeps its rows under the tenant '', the
    # aggregate's entries too (each naming its checkpoint by ``log_tenant``, ``log_id``,
    # ``size``). Ids stay identities; every lookup by one gives its tenant too, so no index on
    # an id alone is needed.
    """
    ALTER TABLE streams DROP CONSTRAINT streams_log_id_fkey;
    ALTER TABLE records DROP CONSTRAINT records_log_id_fkey,
        DROP CONSTRAINT records_stream_id_fkey;
    ALTER TABLE payloads DROP CONSTRAINT payloads_record_id_fkey;
    ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_record_id_fkey;
    ALTER TABLE log_nodes DROP CONSTRAINT log_nodes_log_id_fkey;
    ALTER TABLE cosignatures DROP CONSTRAINT cosignatures_log_id_size_fkey;
    ALTER TABLE timestamps DROP CONSTRAINT timestamps_log_id_size_fkey;
    ALTER TABLE checkpoints DROP CONSTRAINT checkpoints_log_id_fkey;
    ALTER TABLE log_positions DROP CONSTRAINT log_positions_log_id_fkey;
    ALTER TABLE ingest_minutes DROP CONSTRAINT ingest_minutes_log_id_fkey;
    ALTER TABLE witness_health DROP CONSTRAINT witness_health_log_id_fkey;

    UPDATE logs SET tenant = '' WHERE tenant IS NULL;
    DROP INDEX logs_scope;
    ALTER TABLE logs ALTER COLUMN tenant SET NOT NULL, DROP CONSTRAINT logs_pkey,
        DROP CONSTRAINT logs_origin_key, ADD PRIMARY KEY (tenant, id), ADD UNIQUE (tenant, origin);
    CREATE UNIQUE INDEX logs_scope ON logs (tenant, fleet) WHERE retired_at IS NULL;
    CREATE INDEX logs_by_origin ON logs (origin);

    ALTER TABLE aggregate_entries ADD COLUMN tenant text NOT NULL DEFAULT '',
        ADD COLUMN log_tenant text;
    UPDATE aggregate_entries x SET log_tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE aggregate_entries ALTER COLUMN tenant DROP DEFAULT,
        ALTER COLUMN log_tenant SET NOT NULL, DROP CONSTRAINT aggregate_entries_pkey,
        DROP CONSTRAINT aggregate_entries_log_id_size_key, ADD PRIMARY KEY (tenant, idx),
        ADD UNIQUE (tenant, log_tenant, log_id, size);

    ALTER TABLE log_positions ADD COLUMN tenant text;
    UPDATE log_positions x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE log_positions ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT log_positions_pkey, ADD PRIMARY KEY (tenant, log_id),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    ALTER TABLE log_nodes ADD COLUMN tenant text;
    UPDATE log_nodes x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE log_nodes ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT log_nodes_pkey, ADD PRIMARY KEY (tenant, log_id, level, idx),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    ALTER TABLE checkpoints ADD COLUMN tenant text;
    UPDATE checkpoints x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    DROP INDEX checkpoints_by_time;
    ALTER TABLE checkpoints ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT checkpoints_pkey, ADD PRIMARY KEY (tenant, log_id, size),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    CREATE INDEX checkpoints_by_time ON checkpoints (tenant, log_id, created_at);
    ALTER TABLE cosignatures ADD COLUMN tenant text;
    UPDATE cosignatures x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE cosignatures ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT cosignatures_pkey, ADD PRIMARY KEY (tenant, log_id, size, witness),
        ADD FOREIGN KEY (tenant, log_id, size) REFERENCES checkpoints (tenant, log_id, size);
    ALTER TABLE timestamps ADD COLUMN tenant text;
    UPDATE timestamps x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE timestamps ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT timestamps_pkey, ADD PRIMARY KEY (tenant, log_id, size, authority),
        ADD FOREIGN KEY (tenant, log_id, size) REFERENCES checkpoints (tenant, log_id, size);
    ALTER TABLE ingest_minutes ADD COLUMN tenant text;
    UPDATE ingest_minutes x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE ingest_minutes ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT ingest_minutes_pkey, ADD PRIMARY KEY (tenant, log_id, minute),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    ALTER TABLE witness_health ADD COLUMN tenant text;
    UPDATE witness_health x SET tenant = l.tenant FROM logs l WHERE l.id = x.log_id;
    ALTER TABLE witness_health ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT witness_health_pkey, ADD PRIMARY KEY (tenant, log_id, witness),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);

    ALTER TABLE streams DROP CONSTRAINT streams_pkey, ADD PRIMARY KEY (tenant, id),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    ALTER TABLE subjects DROP CONSTRAINT subjects_subject_ref_key,
        ADD UNIQUE (tenant, subject_ref);
    DROP INDEX records_by_log;
    ALTER TABLE records DROP CONSTRAINT records_pkey, DROP CONSTRAINT records_id_key,
        DROP CONSTRAINT records_stream_id_seq_key, ADD PRIMARY KEY (tenant, record_id),
        ADD UNIQUE (tenant, id), ADD UNIQUE (tenant, stream_id, seq),
        ADD FOREIGN KEY (tenant, stream_id) REFERENCES streams (tenant, id),
        ADD FOREIGN KEY (tenant, log_id) REFERENCES logs (tenant, id);
    CREATE UNIQUE INDEX records_by_log ON records (tenant, log_id, log_index);
    ALTER TABLE payloads ADD COLUMN tenant text;
    UPDATE payloads x SET tenant = r.tenant FROM records r WHERE r.record_id = x.record_id;
    DROP INDEX payloads_by_subject;
    ALTER TABLE payloads ALTER COLUMN tenant SET NOT NULL,
        DROP CONSTRAINT payloads_pkey, ADD PRIMARY KEY (tenant, record_id),
        ADD FOREIGN KEY (tenant, record_id) REFERENCES records (tenant, record_id);
    CREATE INDEX payloads_by_subject ON payloads (tenant, subject_ref);
    ALTER TABLE idempotency_keys
        ADD FOREIGN KEY (tenant, record_id) REFERENCES records (tenant, record_id);
    """,
]


async def schema_version(conn: Connection) -> int:
    """The newest migration applied (0: none); reads only, and creates nothing."""
    exists = await conn.fetchval("SELECT to_regclass('schema_version') IS NOT NULL")
    if not exists:
        return 0
    return int(await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version"))


async def migrate(conn: Connection) -> int:
    """Apply the migrations not yet applied; returns the schema version now in place."""
    await conn.execute("SELECT pg_advisory_lock($1)", MIGRATION_LOCK)
    try:
        await conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
        current = await conn.fetchval("SELECT coalesce(max(version), 0) FROM schema_version")
        refuse_newer(current, len(MIGRATIONS))
        for version, script in enumerate(MIGRATIONS[current:], start=current + 1):
            async with conn.transaction():
                await conn.execute(script)
                await conn.execute("INSERT INTO schema_version (version) VALUES ($1)", version)
        return len(MIGRATIONS)
    finally:
        await conn.execute("SELECT pg_advisory_unlock($1)", MIGRATION_LOCK)
