"""``recordseal keys rotate kek`` (docs/operations.md, "Keys"): a new key-encryption key,
every subject key re-wrapped under it online while ingest goes on, then the older KEK files
destroyed. Resumable: an interrupted rotation (``crypto.keks.rotation_target``) continues
to the same KEK when the command runs again.

Order: the subject index key and the panel's secret-box key are written to their own files
(both are derived from KEK 1 and must outlive it); the new KEK file is written and the
rotation marked under way; the command waits until every process follows the directory (it
then wraps new subjects under the new KEK and unwraps with every KEK there); it re-wraps in
batches, each one transaction that stores a new wrapping only where the subject still holds
the old one (an erasure meanwhile wins); when no subject is wrapped by an older KEK, the older
KEK files are overwritten and removed and the marker with them.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from recordseal.crypto import keks
from recordseal.crypto.hsm import ModuleUri
from recordseal.ledger.errors import RecordServiceError
from recordseal.panel.sso.provider_store import keep_secret_key
from recordseal.storage.records import RecordStore

BATCH = 500


class KekRotationRefused(RecordServiceError, ValueError):
    """The rotation cannot go on as it stands; nothing more was changed. ``target`` is the
    KEK generation the rotation under way re-wraps to, ``found`` the newest in the keys
    directory."""

    def __init__(self, target: int, found: int) -> None:
        super().__init__(
            f"the rotation under way re-wraps to KEK {target}, but KEK {found}"
            " is in the keys directory: remove the newer file or finish by hand"
        )
        self.target = target
        self.found = found


@dataclass(frozen=True, slots=True)
class KekRotation:
    generation: int
    rewrapped: int
    destroyed: list[str]
    resumed: bool


async def rotate_kek(
    store: RecordStore,
    keys_dir: Path,
    *,
    batch: int = BATCH,
    settle: float = keks.RELOAD_SECONDS * 1.5,
    location: ModuleUri | None = None,
) -> KekRotation:
    """Rotate to a new KEK (generated in the module ``location`` names, if given), or finish
    the rotation under way."""
    target = keks.rotation_target(keys_dir)
    resumed = target is not None
    if target is None:
        keks.load_wrapper(keys_dir)  # KEK 1 exists
        keep_secret_key(keys_dir)
        target = keks.begin_rotation(keys_dir, location)
        await asyncio.sleep(settle)  # every process wraps under the new KEK from now on
    wrapper = keks.load_wrapper(keys_dir)
    if wrapper.generation != target:
        raise KekRotationRefused(target, wrapper.generation)
    rewrapped = 0
    while rows := await store.keys_wrapped_before(target, batch):
        changes = [(t, i, w, wrapper.rewrap(t, ref, w)) for t, i, ref, w in rows]
        rewrapped += await store.replace_wrapped_keys(changes)
    return KekRotation(target, rewrapped, keks.finish_rotation(keys_dir, target), resumed)
