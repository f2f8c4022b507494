"""Which fleet a record stream may join (docs/fleets.md, "Record streams").

Records of the record API always belong to a tenant (their token's), so a stream may join:

- the fleet ``default`` of its tenant (every stream did before fleets existed), unless the
  manifest binds ``default`` elsewhere;
- a fleet the manifest binds to the stream's tenant.

A fleet the manifest binds to another tenant is refused with 403 ``fleet_forbidden`` (and
logged at WARN as a cross-tenant fleet access); a fleet listed without a tenant collects no
API records (422 ``fleet_without_tenant``); any other fleet is 422 ``fleet_unknown``.
"""

from __future__ import annotations

import logging

from recordseal.fleet.manifest import FleetManifest
from recordseal.identifiers import DEFAULT_FLEET, IDENTIFIER_RULE, is_identifier
from recordseal.services.errors import Forbidden, Invalid

log = logging.getLogger("recordseal.fleet")


def check_stream_fleet(manifest: FleetManifest, tenant: str, fleet: str) -> None:
    """Raise a ServiceError naming the member ``fleet`` unless ``tenant`` may use ``fleet``."""
    if not is_identifier(fleet):
        raise Invalid("fleet_invalid", f"a fleet id is {IDENTIFIER_RULE}", "fleet")
    binding = manifest.fleet(fleet)
    if binding is None:
        if fleet == DEFAULT_FLEET:
            return
        raise Invalid("fleet_unknown", "no fleet with this id is bound by the manifest", "fleet")
    if binding.tenant_id is None:
        raise Invalid(
            "fleet_without_tenant",
            "this fleet has no tenant; record streams belong to a tenant's fleet",
            "fleet",
        )
    if binding.tenant_id != tenant:
        log.warning(
            "fleet.cross_tenant_refused",
            extra={"tenant": tenant, "fleet": fleet, "fleet_tenant": binding.tenant_id},
        )
        raise Forbidden("fleet_forbidden", "this fleet belongs to another tenant", "fleet")
