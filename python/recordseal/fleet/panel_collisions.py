"""Joining the manifest's fleets to the panel's fleet references (docs/panel.md).

The panel's seed file says which tenant and organization a fleet id belongs to; the manifest
says which tenant the proxy binds it to. A fleet id that both name, under two different
tenants, is a cross-tenant fleet id collision: logged at WARN (docs/fleets.md, "Audit events"), and
the panel shows
no manifest parameters for it (``ManifestState`` ``other_tenant``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from recordseal.fleet.manifest import FleetManifest
from recordseal.panel.tenants import FleetRef, TenantStore

log = logging.getLogger("recordseal.fleet")

#: How a panel fleet stands in the manifest: bound to its tenant, listed without a tenant
#: (legacy), bound to another tenant (a collision), or not listed.
ManifestState = Literal["bound", "no_tenant", "other_tenant", "absent"]


@dataclass(frozen=True, slots=True)
class Collision:
    fleet: str
    panel_tenant: str
    manifest_tenant: str


def manifest_state(manifest: FleetManifest, ref: FleetRef) -> ManifestState:
    binding = manifest.fleet(ref.fleet_id)
    if binding is None:
        return "absent"
    if binding.tenant_id is None:
        return "no_tenant"
    return "bound" if binding.tenant_id == ref.tenant_id else "other_tenant"


async def panel_collisions(manifest: FleetManifest, tenants: TenantStore) -> list[Collision]:
    """Every fleet id bound to one tenant in the manifest and to another in the panel; each
    is logged at WARN."""
    found = []
    for tenant in await tenants.list_tenants():
        for organization in await tenants.list_organizations(tenant.id):
            for ref in await tenants.list_fleets(tenant.id, organization.id):
                binding = manifest.fleet(ref.fleet_id)
                if manifest_state(manifest, ref) == "other_tenant" and binding is not None:
                    assert binding.tenant_id is not None
                    log.warning(
                        "cross-tenant fleet id collision: fleet %r belongs to tenant %r in the"
                        " panel and is bound to tenant %r in the fleet manifest",
                        ref.fleet_id,
                        ref.tenant_id,
                        binding.tenant_id,
                    )
                    found.append(Collision(ref.fleet_id, ref.tenant_id, binding.tenant_id))
    return found
