"""Building bundles: pure functions the disclosure and proof services call (and the tests),
no I/O. The verifier (:mod:`recordseal.verify`) reads what these write; it builds nothing.

The service holds a record's committed leaves, its payload values, its signed header, and the
seal and coverage material; these functions put them in the bundle format of
docs/bundle.md. They raise :class:`DisclosureError` subclasses on a request that cannot be
served (an unknown or repeated path), naming the path.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import msgspec

from recordseal.core import CommitError, CommittedRecord, encode_value, inclusion_proof, leaf_hash
from recordseal.ledger.errors import RecordServiceError
from recordseal.verify.bundle import (
    AggregateSeal,
    Bundle,
    Coverage,
    DisclosedField,
    Seal,
    SignedHeader,
    TimestampReceipt,
    covered_header_of,
    header_of,
)
from recordseal.verify.encoding import b64encode
from recordseal.verify.tlogproof import HASH_SIZE, HEADER, MAX_INDEX


class DisclosureError(RecordServiceError, ValueError):
    """A disclosure that cannot be built; ``path`` names the field (the disclosure service
    answers the request's refusal from it). Under the service's root, as the service builds
    bundles (the verifier builds none)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path


class UnknownField(DisclosureError):
    """The path is not one of the record's committed paths."""

    def __init__(self, path: str) -> None:
        super().__init__(path, f"{path!r} is not a committed path of this record")


class DuplicateField(DisclosureError):
    """The path was asked for twice."""

    def __init__(self, path: str) -> None:
        super().__init__(path, f"{path!r} is asked for twice")


def escape_token(name: str) -> str:
    """RFC 6901: ``~`` is written ``~0`` and ``/`` is written ``~1``."""
    return name.replace("~", "~0").replace("/", "~1")


def leaf_values(payload: object) -> dict[str, object]:
    """Every leaf of a parsed payload by committed path: scalars, ``{}`` and ``[]``.

    ``payload`` is JSON as Python holds it (``dict``, ``list``, ``str``, numbers, ``bool``,
    ``None``), typically ``json.loads`` of the stored canonical payload.
    """
    return dict(_walk(payload, "", ""))


def _walk(value: object, vector: str, pointer: str) -> Iterator[tuple[str, object]]:
    if isinstance(value, dict) and value:
        for name, child in value.items():
            yield from _walk(child, vector + "o", f"{pointer}/{escape_token(name)}")
    elif isinstance(value, list) and value:
        for index, child in enumerate(value):
            yield from _walk(child, vector + "a", f"{pointer}/{index}")
    elif vector:
        yield f"{vector}:{pointer}", value


def field_disclosures(
    committed: CommittedRecord, values: Mapping[str, object], wanted: Sequence[str]
) -> list[DisclosedField]:
    """The disclosed fields for ``wanted`` paths, in that order.

    ``values`` maps committed paths to JSON values (see :func:`leaf_values`); each value is
    checked against its commitment, so a bundle is never built from a stale payload.
    """
    leaves = committed.leaves
    position = {leaf.path: index for index, leaf in enumerate(leaves)}
    commitments = [leaf.commitment for leaf in leaves]
    tree = RecordTree(commitments) if len(wanted) > _FEW else None
    fields: list[DisclosedField] = []
    seen: set[str] = set()
    for path in wanted:
        index = position.get(path)
        if index is None:
            raise UnknownField(path)
        if path in seen:
            raise DuplicateField(path)
        seen.add(path)
        leaf = leaves[index]
        if path not in values:
            raise DisclosureError(path, f"no value given for {path!r}")
        value = values[path]
        try:
            matches = encode_value(leaf.kind, value) == leaf.encoded
        except CommitError:
            matches = False
        if not matches:
            raise DisclosureError(path, f"the value given for {path!r} is not the committed one")
        fields.append(
            DisclosedField(
                path=path,
                kind=leaf.kind,
                value=value,
                salt=leaf.salt.hex(),
                index=index,
                proof=[
                    node.hex()
                    for node in (tree.path(index) if tree else inclusion_proof(commitments, index))
                ],
            )
        )
    return fields


#: Up to this many fields, each audit path is computed on its own (in the core); beyond, the
#: record tree's subtree roots are computed once for all of them.
_FEW = 8


class RecordTree:
    """The RFC 6962 tree of a record's commitments, for many audit paths: each subtree root
    is hashed once, so every field's path costs O(log n) instead of a whole tree."""

    def __init__(self, commitments: Sequence[bytes]) -> None:
        self._leaves = [leaf_hash(commitment) for commitment in commitments]
        self._roots: dict[tuple[int, int], bytes] = {}

    def _root(self, begin: int, end: int) -> bytes:
        if end - begin == 1:
            return self._leaves[begin]
        found = self._roots.get((begin, end))
        if found is None:
            middle = begin + _split(end - begin)
            found = hashlib.sha256(
                b"\x01" + self._root(begin, middle) + self._root(middle, end)
            ).digest()
            self._roots[(begin, end)] = found
        return found

    def path(self, index: int) -> list[bytes]:
        """PATH(index, D[n]) of RFC 6962 2.1.1, from the leaf upwards."""
        if not 0 <= index < len(self._leaves):
            raise ValueError(f"index {index} is outside a tree of {len(self._leaves)} leaves")
        siblings = []
        begin, end = 0, len(self._leaves)
        while end - begin > 1:
            middle = begin + _split(end - begin)
            if index < middle:
                siblings.append(self._root(middle, end))
                end = middle
            else:
                siblings.append(self._root(begin, middle))
                begin = middle
        return siblings[::-1]


def _split(n: int) -> int:
    """The largest power of two smaller than ``n`` (n > 1)."""
    return 1 << ((n - 1).bit_length() - 1)


def tlog_proof_text(
    index: int, proof_hashes: Sequence[bytes], signed_checkpoint: str, extra: bytes | None = None
) -> str:
    """A c2sp.org/tlog-proof@v1 of log entry ``index`` (with its cosigned checkpoint note,
    ending in a newline), as :func:`recordseal.verify.tlogproof.parse_tlog_proof` reads it."""
    if not 0 <= index <= MAX_INDEX:
        raise ValueError(f"index {index} is outside 0..2^63-1")
    if any(len(node) != HASH_SIZE for node in proof_hashes):
        raise ValueError("every proof hash must be 32 bytes")
    if not signed_checkpoint.endswith("\n") or signed_checkpoint.startswith("\n"):
        raise ValueError("the checkpoint must be a signed note ending in a newline")
    lines = [HEADER]
    if extra is not None:
        lines.append(f"extra {b64encode(extra)}")
    lines.append(f"index {index}")
    lines.extend(b64encode(node) for node in proof_hashes)
    return "\n".join(lines) + "\n\n" + signed_checkpoint


def seal_of(
    log: str,
    proof: str,
    *,
    previous: str | None = None,
    previous_consistency: Sequence[bytes] = (),
    timestamps: Iterable[tuple[str, bytes]] = (),
    aggregate: str | None = None,
) -> Seal:
    """The ``seal`` member: ``timestamps`` are (authority name, DER RFC 3161 token) pairs;
    ``aggregate`` the tlog proof of the sealing checkpoint's entry in the aggregate log."""
    return Seal(
        log=log,
        proof=proof,
        previous=previous,
        previous_consistency=[b64encode(node) for node in previous_consistency],
        timestamps=[TimestampReceipt(name, b64encode(token)) for name, token in timestamps],
        aggregate=msgspec.UNSET if aggregate is None else AggregateSeal(aggregate),
    )


def coverage_of(
    from_seq: int, to_seq: int, records: Iterable[tuple[Mapping[str, Any], bytes]]
) -> Coverage:
    """The ``coverage`` member from (header dict, signature) pairs in sequence order; a
    header may be a gap header (docs/records.md)."""
    return Coverage(
        from_seq=from_seq,
        to_seq=to_seq,
        records=[
            SignedHeader(covered_header_of(dict(header)), signature.hex())
            for header, signature in records
        ],
    )


def build_bundle(
    header: Mapping[str, Any],
    signature: bytes,
    fields: Sequence[DisclosedField],
    seal: Seal | None = None,
    coverage: Coverage | None = None,
) -> Bundle:
    """A bundle; ``header`` is the signed header as a dict (docs/records.md)."""
    return Bundle(
        format="recordseal/bundle/v1",
        header=header_of(dict(header)),
        signature=signature.hex(),
        fields=list(fields),
        seal=seal,
        coverage=coverage,
    )


__all__ = [
    "DisclosureError",
    "DuplicateField",
    "RecordTree",
    "UnknownField",
    "build_bundle",
    "coverage_of",
    "field_disclosures",
    "leaf_values",
    "seal_of",
    "tlog_proof_text",
]
