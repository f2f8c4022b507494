"""Genesis roots of the per-(tenant, fleet) logs (docs/fleets.md, "Genesis roots and legacy
fleets").

Pure hashing: the offline replayer (``recordseal.verify.transparency``) imports this module,
so it must import neither storage nor the web layer.

    genesis = SHA-256(tag ‖ le32(len(tenant)) ‖ tenant ‖ le32(len(fleet)) ‖ fleet)

``tag`` is ``recordseal-audit-tenant-genesis-v1`` (the spec's tag with the project's brand in
place of ``svc``); lengths are byte counts of the UTF-8 text as 4-byte little-endian integers,
so (``a``, ``bc``) and (``ab``, ``c``) differ. A fleet without a tenant (a legacy or
single-tenant fleet) uses the empty tenant, length 0: no tenant id is empty, so its chain is
distinct from every tenant's.
"""

from __future__ import annotations

import hashlib
import struct

#: Spec panel 2.5 with the project's brand in place of ``svc``; a new derivation needs a new tag.
TENANT_GENESIS_TAG = b"recordseal-audit-tenant-genesis-v1"


def tenant_genesis(tenant: str | None, fleet: str) -> bytes:
    """SHA-256(tag ‖ le32(len(tenant)) ‖ tenant ‖ le32(len(fleet)) ‖ fleet): leaf 0 of a log.

    ``tenant`` None (a fleet with no tenant) hashes as the empty string.
    """
    parts = [TENANT_GENESIS_TAG]
    for text in (tenant or "", fleet):
        data = text.encode()
        parts += [struct.pack("<I", len(data)), data]
    return hashlib.sha256(b"".join(parts)).digest()


def log_origin(service: str, tenant: str | None, fleet: str) -> str:
    """The C2SP origin of a log: ``<service>/<tenant>/<fleet>``, or ``<service>/<fleet>``
    for a fleet with no tenant (identifiers hold no ``/``, so the two never meet)."""
    return f"{service}/{fleet}" if tenant is None else f"{service}/{tenant}/{fleet}"


#: Leaf 0 of a successor log (docs/tlog.md, "Successor logs"); a new derivation needs a new tag.
SUCCESSOR_GENESIS_TAG = b"recordseal-log-successor-v1"


def successor_genesis(predecessor: str, size: int, root: bytes) -> bytes:
    """SHA-256(tag ‖ le32(len(predecessor)) ‖ predecessor ‖ le64(size) ‖ root): leaf 0 of the
    log that succeeds ``predecessor`` after its checkpoint (``size``, ``root``), the last one
    the service signed for it. Lengths and sizes little-endian, as ``tenant_genesis``."""
    if len(root) != 32:
        raise ValueError("a checkpoint root is 32 bytes")
    name = predecessor.encode()
    return hashlib.sha256(
        SUCCESSOR_GENESIS_TAG + struct.pack("<I", len(name)) + name + struct.pack("<Q", size) + root
    ).digest()


def successor_origin(base: str, current: str) -> str:
    """The origin after ``current`` in the line of logs that starts at ``base`` (the log's
    ``log_origin``): ``<base>/2``, then ``<base>/3``... (docs/tlog.md, "Successor logs")."""
    if current == base:
        return f"{base}/2"
    generation = current.removeprefix(base + "/")
    if generation == current or not generation.isdigit():
        raise ValueError(f"{current!r} is not a log of the line {base!r}")
    return f"{base}/{int(generation) + 1}"
