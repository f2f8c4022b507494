"""What the panel's organization page shows of each fleet (docs/panel.md): its latest anchor
and its witness status.

A fleet shown under tenant T has the anchors of the log (T, fleet) — never the legacy log
of the same fleet id, nor another tenant's (the scoped query is null-safe). Witness status
counts, on the latest anchor, the cosignatures and RFC 3161 time-stamps of the configured
witnesses and authorities.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from recordseal.fleet.manifest import FleetManifest
from recordseal.fleet.panel_collisions import ManifestState, manifest_state
from recordseal.panel.tenants import FleetRef
from recordseal.storage.logs import LogStore

WitnessState = Literal["no_anchor", "none_configured", "complete", "partial", "pending"]


@dataclass(frozen=True, slots=True)
class FleetStatus:
    fleet_id: str
    manifest: ManifestState
    preset: str | None
    anchor_size: int | None
    anchor_root: str | None  # hex
    anchor_at: str | None
    witness_state: WitnessState
    vouched_by: tuple[str, ...]
    expected: tuple[str, ...]


class FleetStatusReader:
    """Reads statuses from the store; ``manifest`` is a callable so reloads are seen."""

    def __init__(
        self,
        store: LogStore,
        manifest: Callable[[], FleetManifest],
        witnesses: Sequence[str] = (),
        authorities: Sequence[str] = (),
    ) -> None:
        self._store = store
        self._manifest = manifest
        self._witnesses = tuple(witnesses)
        self._authorities = tuple(authorities)

    async def __call__(self, ref: FleetRef) -> FleetStatus:
        manifest = self._manifest()
        state = manifest_state(manifest, ref)
        binding = manifest.fleet(ref.fleet_id) if state in ("bound", "no_tenant") else None
        preset = binding.preset if binding else None
        expected = self._witnesses + self._authorities
        anchor = await self._store.latest_anchor(ref.tenant_id, ref.fleet_id)
        if anchor is None:
            return FleetStatus(
                ref.fleet_id, state, preset, None, None, None, "no_anchor", (), expected
            )
        cosigned = await self._store.cosignatures(anchor.origin, anchor.size)
        names = {line.removeprefix("— ").split(" ", 1)[0] for line in cosigned}
        names |= {name for name, _ in await self._store.timestamps(anchor.origin, anchor.size)}
        vouched = tuple(name for name in expected if name in names)
        witness_state: WitnessState
        if not expected:
            witness_state = "none_configured"
        elif len(vouched) == len(expected):
            witness_state = "complete"
        else:
            witness_state = "partial" if vouched else "pending"
        return FleetStatus(
            ref.fleet_id,
            state,
            preset,
            anchor.size,
            anchor.root.hex(),
            anchor.created_at,
            witness_state,
            vouched,
            expected,
        )
