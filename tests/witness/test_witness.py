"""The witness core: what it cosigns, what it refuses, and that it remembers."""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

import pytest

from recordseal.tlog import (
    Checkpoint,
    CosignatureSigner,
    Ed25519Signer,
    TlogError,
    open_note,
    sign_checkpoint,
)
from recordseal.witness.witness import STATUS_OF, Witness
from tests.tlog.support import Log


def make_witness(path: Path, signer: CosignatureSigner, log: Log) -> Witness:
    return Witness(path, signer, {log.origin: [log.signer.verifier()]}, clock=lambda: 1_700_000_000)


@pytest.fixture
def witness(tmp_path: Path, witness_signer: CosignatureSigner, log: Log) -> Witness:
    return make_witness(tmp_path / "state", witness_signer, log)


def refusal(witness: Witness, old_size: int, proof: list[bytes], signed: str) -> TlogError:
    with pytest.raises(TlogError) as error:
        witness.add_checkpoint(old_size, proof, signed)
    return error.value


def test_accepts_a_first_checkpoint(witness: Witness, log: Log) -> None:
    log.append(5)
    cosignature = witness.add_checkpoint(0, [], log.signed())
    assert cosignature.timestamp == 1_700_000_000
    witness.signer.verifier().verify_cosignature(log.checkpoint().text(), cosignature)
    note = log.signed() + cosignature.line
    assert len(open_note(note, [log.signer.verifier(), witness.signer.verifier()]).verified) == 2
    state = witness.latest(log.origin)
    assert state is not None and (state.size, state.root_hash) == (5, log.checkpoint().root_hash)


def test_accepts_an_empty_first_checkpoint(witness: Witness, log: Log) -> None:
    witness.add_checkpoint(0, [], log.signed(0))
    log.append(3)
    witness.add_checkpoint(0, [], log.signed())
    assert witness.latest(log.origin).size == 3  # type: ignore[union-attr]


def test_accepts_consistent_extensions(witness: Witness, log: Log) -> None:
    log.append(3)
    witness.add_checkpoint(0, [], log.signed())
    for grow in (1, 4, 9, 1):
        old = len(log.leaves)
        log.append(grow)
        witness.add_checkpoint(old, log.proof(old), log.signed())
    assert witness.latest(log.origin).size == 18  # type: ignore[union-attr]


def test_recosigns_the_same_checkpoint(witness: Witness, log: Log) -> None:
    log.append(4)
    witness.add_checkpoint(0, [], log.signed())
    again = witness.add_checkpoint(4, [], log.signed())
    witness.signer.verifier().verify_cosignature(log.checkpoint().text(), again)


def test_first_checkpoint_with_a_proof_is_refused(witness: Witness, log: Log) -> None:
    log.append(4)
    error = refusal(witness, 0, log.proof(2), log.signed())
    assert error.code == "proof_invalid"
    assert witness.latest(log.origin) is None


def test_wrong_old_size_reports_the_witness_size(witness: Witness, log: Log) -> None:
    log.append(4)
    error = refusal(witness, 2, log.proof(2), log.signed())
    assert (error.code, error.evidence["witness_size"]) == ("old_size_mismatch", 0)
    witness.add_checkpoint(0, [], log.signed())
    log.append(4)
    error = refusal(witness, 0, [], log.signed())
    assert (error.code, error.evidence["witness_size"]) == ("old_size_mismatch", 4)
    assert STATUS_OF[error.code] == 409


def test_refuses_a_different_tree_of_the_same_size(
    witness: Witness, log: Log, forked_log: Log
) -> None:
    log.append(6)
    witness.add_checkpoint(0, [], log.signed())
    forked_log.append(5, "fork")
    error = refusal(witness, 6, [], forked_log.signed())
    assert error.code == "root_mismatch"
    assert error.evidence["witness_root"] == log.checkpoint().root_hash.hex()


def test_refuses_an_inconsistent_larger_tree(witness: Witness, log: Log, forked_log: Log) -> None:
    log.append(6)
    witness.add_checkpoint(0, [], log.signed())
    forked_log.append(9, "fork")
    # The fork's own proof from 6, and the honest log's proof: neither links the trees.
    for proof in (forked_log.proof(6), log.proof(3, 6), []):
        error = refusal(witness, 6, proof, forked_log.signed())
        assert error.code == "proof_invalid"
        assert STATUS_OF[error.code] == 422
    state = witness.latest(log.origin)
    assert state is not None and state.root_hash == log.checkpoint().root_hash


def test_refuses_rollback(witness: Witness, log: Log) -> None:
    log.append(10)
    witness.add_checkpoint(0, [], log.signed())
    error = refusal(witness, 10, [], log.signed(7))
    assert (error.code, STATUS_OF[error.code]) == ("old_size_invalid", 400)
    error = refusal(witness, 4, log.proof(4, 7), log.signed(7))
    assert error.code == "old_size_mismatch"
    assert witness.latest(log.origin).size == 10  # type: ignore[union-attr]


def test_still_refuses_after_a_restart(
    tmp_path: Path, witness_signer: CosignatureSigner, log: Log, forked_log: Log
) -> None:
    first = make_witness(tmp_path / "state", witness_signer, log)
    log.append(6)
    first.add_checkpoint(0, [], log.signed())
    del first
    restarted = make_witness(tmp_path / "state", witness_signer, log)
    assert restarted.latest(log.origin).size == 6  # type: ignore[union-attr]
    forked_log.append(9, "fork")
    assert refusal(restarted, 6, forked_log.proof(6), forked_log.signed()).code == "proof_invalid"
    assert refusal(restarted, 0, [], log.signed()).code == "old_size_mismatch"
    assert refusal(restarted, 6, [], forked_log.signed(6)).code == "root_mismatch"
    log.append(3)
    restarted.add_checkpoint(6, log.proof(6), log.signed())


def test_refuses_unknown_logs_and_bad_signatures(witness: Witness, log: Log) -> None:
    log.append(2)
    stranger = Ed25519Signer.generate("other.example/log")
    other = sign_checkpoint(Checkpoint("other.example/log", 2, bytes(32)), stranger)
    assert refusal(witness, 0, [], other).code == "unknown_origin"
    impostor = Ed25519Signer.generate(log.origin)
    forged = sign_checkpoint(log.checkpoint(), impostor)
    error = refusal(witness, 0, [], forged)
    assert (error.code, STATUS_OF[error.code]) == ("note_unverified", 403)
    tampered = log.signed().replace(f"\n{len(log.leaves)}\n", "\n3\n")
    assert refusal(witness, 0, [], tampered).code == "signature_invalid"
    assert refusal(witness, 0, [], "not a note").code == "note_malformed"
    assert witness.latest(log.origin) is None


def test_state_file_is_replaced_atomically(witness: Witness, log: Log) -> None:
    log.append(3)
    cosignature = witness.add_checkpoint(0, [], log.signed())
    files = sorted(p.name for p in witness.store.directory.iterdir())
    path = witness.store.path_for(log.origin)
    assert files == sorted([path.name, "witness.lock"])
    stored = json.loads(path.read_text())
    assert stored["origin"] == log.origin and stored["size"] == 3
    # The checkpoint with the log signature the witness verified and its own cosignature.
    assert stored["checkpoint"] == log.signed() + cosignature.line


def test_a_corrupt_state_is_an_error_never_a_fresh_start(witness: Witness, log: Log) -> None:
    log.append(3)
    witness.add_checkpoint(0, [], log.signed())
    path = witness.store.path_for(log.origin)
    for content in (
        b"",
        b"{",
        b'{"format": "other"}',
        path.read_bytes().replace(b'"size":3', b'"size":-3'),
    ):
        path.write_bytes(content)
        error = refusal(witness, 0, [], log.signed())
        assert error.code == "state_corrupt"
        assert error.code not in STATUS_OF  # answered as a 500


def test_concurrent_requests_never_roll_back(witness: Witness, log: Log) -> None:
    log.append(40)
    outcomes: dict[int, str] = {}

    def submit(size: int) -> None:
        try:
            witness.add_checkpoint(0, [], log.signed(size))
            outcomes[size] = "cosigned"
        except TlogError as error:
            outcomes[size] = error.code

    threads = [threading.Thread(target=submit, args=(size,)) for size in range(10, 40, 3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    winners = [size for size, outcome in outcomes.items() if outcome == "cosigned"]
    assert len(winners) == 1
    assert set(outcomes.values()) == {"cosigned", "old_size_mismatch"}
    assert witness.latest(log.origin).size == winners[0]  # type: ignore[union-attr]


def test_state_directory_files_are_not_world_writable(witness: Witness, log: Log) -> None:
    log.append(1)
    witness.add_checkpoint(0, [], log.signed())
    mode = os.stat(witness.store.path_for(log.origin)).st_mode
    assert not mode & 0o022


def test_a_family_file_is_followed_as_it_changes(
    tmp_path: Path, witness_signer: CosignatureSigner
) -> None:
    """``witness serve --logs-under-file``: the witness reads the file again whenever it
    changes, so a log key added there is trusted without a restart; a file that cannot be
    read at start is refused, and one that goes away later leaves the families as they were."""
    from recordseal.witness.families import FamilyFile, write_family_file

    first = Ed25519Signer.generate("service.example")
    second = Ed25519Signer.generate("service.example")
    path = tmp_path / "families"
    with pytest.raises(TlogError, match="logs-under-file"):
        FamilyFile(path)
    assert write_family_file(path, [first.verifier().vkey])
    assert not write_family_file(path, [first.verifier().vkey])  # unchanged: not rewritten
    families = FamilyFile(path)
    witness = Witness(tmp_path / "state", witness_signer, {}, families=families)
    origin = "service.example/acme/default"
    rotated = Log(Ed25519Signer(origin, second._private), origin=origin)
    rotated.append(2)
    assert refusal(witness, 0, [], rotated.signed()).code == "note_unverified"
    assert write_family_file(path, [first.verifier().vkey, second.verifier().vkey])
    witness.add_checkpoint(0, [], rotated.signed())  # the new key, trusted without a restart
    path.unlink()
    rotated.append(1)
    witness.add_checkpoint(2, rotated.proof(2), rotated.signed())  # as last read
