"""Interop with Go's reference implementation (issue 19): ``golang.org/x/mod/sumdb/note``
opens the service's checkpoints and ``golang.org/x/mod/sumdb/tlog`` checks the bundles'
inclusion proofs (``CheckRecord``) and the consistency proofs between checkpoints
(``CheckTree``); tampered copies are refused. The checkpoints are dual-signed (Ed25519 and
ML-DSA-44, issue 32): ``note.Open`` with the log's Ed25519 vkey accepts them, ignoring the
ML-DSA-44 line as a signature by a key it does not know, as C2SP asks.

The Go program (``sumdbcheck/main.go``) is built offline in GOPATH mode with Debian's
``golang-go`` and the package's source under ``/usr/share/gocode`` (``golang-golang-x-mod-dev``;
``make system`` installs both). The bundles are made by the service's own classes on a
temporary SQLite store.
"""

from __future__ import annotations

import asyncio
import base64
import json
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from recordseal.crypto.signing import HeaderSigner
from recordseal.crypto.vault import KeyWrapper
from recordseal.ledger.log_keys import LogKeyring
from recordseal.ledger.sealer import Sealer
from recordseal.services.bundles import tlog_proof_text as format_tlog_proof
from recordseal.services.disclosure import DisclosureService
from recordseal.services.proofs import ProofService
from recordseal.services.records import RecordService, header_members
from recordseal.settings import Settings
from recordseal.storage.backends import open_store
from recordseal.tlog import (
    Checkpoint,
    Ed25519Signer,
    TlogError,
    log_verifier,
    open_checkpoint,
    parse_note,
    sign_checkpoint,
)
from recordseal.verify import encode_bundle
from recordseal.verify.sealing import open_seal
from recordseal.verify.tlogproof import parse_tlog_proof
from tests.continuity_support import fresh_continuity
from tests.ingesting import ingest
from tests.interop.golang import build_go

SOURCE = Path(__file__).parent / "sumdbcheck" / "main.go"
SERVICE = "interop.recordseal"
ORIGIN = f"{SERVICE}/acme/default"
SEED = bytes(range(32))
MLDSA_SEED = bytes(range(32, 64))
#: Records sealed per round: four checkpoints (sizes 4, 7, 9, 11), so bundles of the later
#: records carry a ``previous`` checkpoint and its consistency proof.
ROUNDS = (3, 3, 2, 2)


@pytest.fixture(scope="module")
def sumdbcheck(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Go program, built offline from the Debian packages' sources."""
    return build_go(SOURCE, tmp_path_factory.mktemp("go"))


@dataclass
class Log:
    vkey: str
    bundles: list[tuple[dict[str, Any], bytes]]  # (bundle, its log entry)
    checkpoints: dict[int, str]  # size -> signed checkpoint
    consistency: dict[tuple[int, int], list[bytes]]


async def _make_log(data: Path) -> Log:
    store = open_store(Settings(data_dir=data))
    await store.open()
    try:
        records = RecordService(
            store,
            KeyWrapper(bytes(32)),
            HeaderSigner.from_seed(bytes(32)),
            continuity=fresh_continuity(),
        )
        keys = LogKeyring.of_seed(SEED, MLDSA_SEED)  # every checkpoint dual-signed
        sealer = Sealer(store.logs, keys, SERVICE, continuity=fresh_continuity())
        disclosure = DisclosureService(store, records, ProofService(store, sealer))
        await records.create_stream("acme", "orders", {"o:/amount": "money"}, False)
        posted = []
        for count in ROUNDS:
            for i in range(count):
                payload = json.dumps({"amount": 100 * len(posted) + i, "note": "n"}).encode()
                posted.append(
                    await ingest(
                        records, "acme", "orders", "o", "2026-11-21T08:00:00Z", "c", payload
                    )
                )
            await sealer.seal_pending()
        bundles = []
        for record in posted:
            bundle = await disclosure.disclose("acme", record.record_id, ["o:/amount"], None)
            bundles.append((json.loads(encode_bundle(bundle)), record.header))
        rows = await store.logs.checkpoints("acme", "default")
        sizes = [row.size for row in rows]
        consistency = {
            (a, b): await sealer.consistency(ORIGIN, a, b) for a in sizes for b in sizes if a < b
        }
        return Log(
            sealer.signer(ORIGIN).verifier().vkey,
            bundles,
            {row.size: row.note for row in rows},
            consistency,
        )
    finally:
        await store.close()


@pytest.fixture(scope="module")
def log(tmp_path_factory: pytest.TempPathFactory) -> Log:
    return asyncio.run(_make_log(tmp_path_factory.mktemp("log")))


def run_go(binary: Path, log: Log, bundles: list[dict], trees: list[dict]) -> dict[str, str]:
    """Each item's outcome by name: "ok", or Go's error."""
    request = {"vkey": log.vkey, "bundles": bundles, "trees": trees}
    done = subprocess.run(
        [str(binary)], input=json.dumps(request), capture_output=True, text=True, check=True
    )
    outcomes = [json.loads(line) for line in done.stdout.splitlines()]
    return {item["name"]: "ok" if item["ok"] else item["error"] for item in outcomes}


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def case(name: str, bundle: dict, entry: bytes) -> dict:
    return {"name": name, "bundle": bundle, "entry": b64(entry)}


def test_go_accepts_the_services_checkpoints_and_proofs(sumdbcheck: Path, log: Log) -> None:
    bundles = [case(f"bundle {i}", b, entry) for i, (b, entry) in enumerate(log.bundles, 1)]
    assert len(bundles) == 10
    assert sum(b["seal"]["previous"] is not None for b, _ in log.bundles) >= 5
    trees = [
        {"name": f"tree {a}->{b}", "old": log.checkpoints[a], "new": log.checkpoints[b],
         "proof": [b64(node) for node in proof]}
        for (a, b), proof in log.consistency.items()
    ]  # fmt: skip
    for signed in log.checkpoints.values():
        assert _log_lines(signed) == [68, 4 + 8 + 2420]  # Ed25519, then ML-DSA-44
    outcomes = run_go(sumdbcheck, log, bundles, trees)
    assert outcomes == {name: "ok" for name in outcomes}
    assert len(outcomes) == len(bundles) + len(trees)


def _log_lines(signed: str) -> list[int]:
    """The sizes of the log's signatures (key ID included), in order."""
    return [4 + len(s.signature) for s in parse_note(signed).signatures if s.name == ORIGIN]


def test_go_ignores_the_ml_dsa_44_line_recordseal_checks_it(sumdbcheck: Path, log: Log) -> None:
    """x/mod's ``note`` knows no type-0x06 key: a changed ML-DSA-44 signature is, to it, a
    line by an unknown key, and the checkpoint still opens on the Ed25519 one. recordseal's
    verifier, given the log's ML-DSA-44 key, refuses the same checkpoint (signature_invalid)."""
    bundle, entry = log.bundles[6]
    changed = json.loads(json.dumps(bundle))
    signed = parse_tlog_proof(bundle["seal"]["proof"]).checkpoint
    note = parse_note(signed)
    mldsa = next(s for s in note.signatures if len(s.signature) == 8 + 2420)
    broken = type(mldsa)(mldsa.name, mldsa.key_id, _flip(mldsa.signature[:8]) + mldsa.signature[8:])
    tampered = type(note)(note.text, tuple(broken if s == mldsa else s for s in note.signatures))
    changed["seal"]["proof"] = _seal_proof(bundle, note=lambda _: tampered.encode())
    assert run_go(sumdbcheck, log, [case("ml-dsa line changed", changed, entry)], []) == {
        "ml-dsa line changed": "ok"
    }
    mldsa_vkey = LogKeyring.of_seed(SEED, MLDSA_SEED).every(ORIGIN)[1].verifier().vkey
    with pytest.raises(TlogError) as refused:
        open_checkpoint(tampered.encode(), [log_verifier(log.vkey), log_verifier(mldsa_vkey)])
    assert refused.value.code == "signature_invalid"


def _flip(data: bytes) -> bytes:
    return bytes([data[0] ^ 1]) + data[1:]


def _with_checkpoint_text(signed: str, change: Callable[[Checkpoint], Checkpoint]) -> str:
    """The note with its body changed and its signature lines kept (so they no longer match)."""
    note = parse_note(signed)
    body = change(Checkpoint.parse(note.text)).text()
    return body + signed[len(note.text) :]


def _seal_proof(bundle: dict, *, index: int | None = None, hashes: Any = None, note: Any = None):
    proof = parse_tlog_proof(bundle["seal"]["proof"])
    return format_tlog_proof(
        proof.index if index is None else index,
        list(proof.hashes) if hashes is None else hashes(list(proof.hashes)),
        proof.checkpoint if note is None else note(proof.checkpoint),
    )


def test_go_refuses_tampered_copies(sumdbcheck: Path, log: Log) -> None:
    bundle, entry = log.bundles[6]  # a record with a previous checkpoint
    other_bundle, other_entry = log.bundles[3]
    assert bundle["seal"]["previous"] != other_bundle["seal"]["previous"] is not None
    opened = open_seal(_decoded(bundle))
    stranger = Ed25519Signer.generate(ORIGIN)  # same name, another key

    def seal_changed(**members: Any) -> dict:
        changed = json.loads(json.dumps(bundle))
        changed["seal"].update(members)
        return changed

    def root(checkpoint: Checkpoint) -> Checkpoint:
        return Checkpoint(checkpoint.origin, checkpoint.size, _flip(checkpoint.root_hash))

    def size(checkpoint: Checkpoint) -> Checkpoint:
        return Checkpoint(checkpoint.origin, checkpoint.size + 1, checkpoint.root_hash)

    def signature(signed: str) -> str:
        """The log's Ed25519 signature (the first line) changed; the ML-DSA-44 one kept."""
        note = parse_note(signed)
        first = note.signatures[0]
        changed = type(first)(first.name, first.key_id, _flip(first.signature))
        return type(note)(note.text, (changed, *note.signatures[1:])).encode()

    tampered = {
        "checkpoint root changed": seal_changed(
            proof=_seal_proof(bundle, note=lambda n: _with_checkpoint_text(n, root))
        ),
        "checkpoint size changed": seal_changed(
            proof=_seal_proof(bundle, note=lambda n: _with_checkpoint_text(n, size))
        ),
        "log signature changed": seal_changed(proof=_seal_proof(bundle, note=signature)),
        "signed by another key": seal_changed(
            proof=_seal_proof(bundle, note=lambda n: sign_checkpoint(opened.checkpoint, stranger))
        ),
        "index changed": seal_changed(proof=_seal_proof(bundle, index=opened.proof.index + 1)),
        "inclusion hash changed": seal_changed(
            proof=_seal_proof(bundle, hashes=lambda h: [_flip(h[0]), *h[1:]])
        ),
        "inclusion hash dropped": seal_changed(proof=_seal_proof(bundle, hashes=lambda h: h[:-1])),
        "inclusion hash added": seal_changed(
            proof=_seal_proof(bundle, hashes=lambda h: [*h, h[0]])
        ),
        "inclusion hashes reordered": seal_changed(
            proof=_seal_proof(bundle, hashes=lambda h: h[::-1])
        ),
        "another log named": seal_changed(log=f"{SERVICE}/globex/default"),
        "previous consistency changed": seal_changed(
            previous_consistency=[
                b64(_flip(base64.b64decode(bundle["seal"]["previous_consistency"][0]))),
                *bundle["seal"]["previous_consistency"][1:],
            ]
        ),
        "previous of another size": seal_changed(previous=other_bundle["seal"]["previous"]),
        "previous root changed": seal_changed(
            previous=_with_checkpoint_text(bundle["seal"]["previous"], root)
        ),
    }
    cases = [case(name, changed, entry) for name, changed in tampered.items()]
    cases.append(case("another entry", bundle, other_entry))
    cases.append(case("entry changed", bundle, entry.replace(b'"seq":7', b'"seq":8')))
    (small, large), proof = next(iter(log.consistency.items()))
    good = {"old": log.checkpoints[small], "new": log.checkpoints[large]}
    nodes = [b64(node) for node in proof]
    trees = [
        {"name": "tree proof changed", **good,
         "proof": [b64(_flip(base64.b64decode(nodes[0]))), *nodes[1:]]},
        {"name": "tree old and new swapped", "old": good["new"], "new": good["old"],
         "proof": nodes},
        {"name": "tree proof of other sizes", **good,
         "proof": [b64(n) for n in log.consistency[max(log.consistency)]]},
    ]  # fmt: skip
    outcomes = run_go(sumdbcheck, log, cases, trees)
    assert len(outcomes) == len(cases) + len(trees) >= 14
    accepted = sorted(name for name, outcome in outcomes.items() if outcome == "ok")
    assert accepted == [], f"Go accepted tampered copies: {accepted}"
    # Each is refused by the check it breaks.
    signature = "note: invalid signature for key"
    inclusion = "inclusion: invalid transparency proof"
    reasons = {
        "checkpoint root changed": signature,
        "checkpoint size changed": signature,
        "log signature changed": signature,
        "signed by another key": "note: note has no verifiable signatures",
        "index changed": inclusion,
        "inclusion hash changed": inclusion,
        "inclusion hash dropped": inclusion,
        "inclusion hash added": inclusion,
        "inclusion hashes reordered": inclusion,
        "another log named": "the checkpoint is of another log",
        "previous consistency changed": "previous consistency: invalid transparency proof",
        "previous of another size": "previous consistency: invalid transparency proof",
        "previous root changed": f"previous: {signature}",
        "another entry": inclusion,
        "entry changed": inclusion,
        "tree proof changed": "invalid transparency proof",
        "tree old and new swapped": "invalid inputs in CheckTree",
        "tree proof of other sizes": "invalid transparency proof",
    }
    assert {name: reasons[name] in outcome for name, outcome in outcomes.items()} == {
        name: True for name in outcomes
    }, outcomes


def _decoded(bundle: dict) -> Any:
    from recordseal.verify import decode_bundle

    return decode_bundle(json.dumps(bundle)).seal


def test_the_entry_is_the_signed_header(log: Log) -> None:
    """What the Go program hashes as the log entry is the header the bundle carries."""
    for bundle, entry in log.bundles:
        assert header_members(entry) == bundle["header"]
