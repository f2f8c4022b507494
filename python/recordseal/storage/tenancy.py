"""How the store keys rows by tenant (docs/records.md, "Distributing by tenant").

Every table of tenant data leads its keys with ``tenant``, so a deployment can spread tenants
over servers by that column. A log of no tenant (a legacy fleet's, or the deployment's
aggregate log; ``tenant`` None in the store's API) is kept under :data:`NO_TENANT`, a value
no tenant id takes (ids are never empty): a key column holds no NULL. These two functions
are the only place the two meet.
"""

from __future__ import annotations

#: The ``tenant`` of the rows of a log that belongs to no tenant.
NO_TENANT = ""


def tenant_key(tenant: str | None) -> str:
    """The ``tenant`` column's value for ``tenant`` (None: no tenant)."""
    return NO_TENANT if tenant is None else tenant


def tenant_of(stored: str) -> str | None:
    """The tenant a ``tenant`` column's value stands for (None: no tenant)."""
    return None if stored == NO_TENANT else stored


# How a deployment would spread the store over servers by tenant (docs/records.md,
# "Distributing by tenant"); tests/storage/test_tenant_keys.py holds both backends' schemas
# to it, so a new table is placed here when it is made.

#: Tables of tenant data: distributed by ``tenant``, all colocated. Every primary key and
#: unique index leads with ``tenant``; every foreign key between them includes it. The
#: deployment's aggregate log is a log of no tenant: its row, nodes, checkpoints and
#: ``aggregate_entries`` live under :data:`NO_TENANT` as a legacy fleet's log does, and its
#: seal reads the tenants' checkpoints across servers (docs/records.md).
DISTRIBUTED = frozenset(
    {
        "streams",
        "subjects",
        "records",
        "payloads",
        "idempotency_keys",
        "logs",
        "log_positions",
        "log_nodes",
        "checkpoints",
        "cosignatures",
        "timestamps",
        "ingest_minutes",
        "witness_health",
        "aggregate_entries",
    }
)
#: Small tables read beside tenant data, copied whole to every server: the tenant
#: hierarchy, the API tokens (looked up by their hash before the tenant is known) and the
#: header-signing keys.
REFERENCE = frozenset({"tenants", "organizations", "fleet_refs", "tokens", "signing_keys"})
#: Deployment-wide tables no tenant query joins: they stay on the coordinator.
COORDINATOR = frozenset(
    {
        "schema_version",
        "panel_passkeys",
        "panel_links",
        "panel_ceremonies",
        "panel_pending_logins",
        "panel_providers",
        "panel_signout",
        "fleet_audit",
        "fleet_manifest_head",
    }
)
