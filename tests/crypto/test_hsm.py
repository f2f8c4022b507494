"""Keys in a hardware module (crypto/hsm.py, rust-core/src/hsm.rs), against a real PKCS#11
module: SoftHSM2 in a temporary token directory (tests/hsm.py)."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from recordseal.core.errors import CommitError
from recordseal.crypto import keks
from recordseal.crypto.errors import KeyModuleError
from recordseal.crypto.hsm import (
    AES256,
    ED25519,
    HMAC_SHA256,
    KeyLocationError,
    ModuleUri,
    open_key,
    read_reference,
)
from recordseal.crypto.signing import HEADER_CONTEXT, HeaderSigner
from recordseal.crypto.vault import KeyWrapper, VaultError
from recordseal.services.header_keys import pipeline_for, pipeline_from_seed
from recordseal.services.pipeline import RecordInput
from tests.hsm import MODULE, softhsm, unique

PIN_FILE = "/run/recordseal/pin"


def uri(label: str) -> ModuleUri:
    return ModuleUri.parse(softhsm().uri(label))


# --- URIs (RFC 7512) -----------------------------------------------------------------------


def test_a_uri_names_module_token_object_and_pin_source() -> None:
    text = (
        "pkcs11:token=rs;serial=0a1b;slot-id=7;object=header%20key"
        f"?module-path={MODULE}&pin-source=file:{PIN_FILE}"
    )
    parsed = ModuleUri.parse(text)
    assert parsed == ModuleUri(
        module_path=str(MODULE),
        object="header key",
        pin_source=f"file:{PIN_FILE}",
        token="rs",
        serial="0a1b",
        slot_id=7,
    )
    assert ModuleUri.parse(str(parsed)) == parsed  # written as read (percent-encoded)
    assert parsed.with_object("log").object == "log"


@pytest.mark.parametrize(
    ("text", "named"),
    [
        (f"pkcs11:token=rs;object=k?module-path={MODULE}&pin-value=1234", "pin-value"),
        (f"pkcs11:token=rs;id=%01;object=k?module-path={MODULE}&pin-source=p", "'id'"),
        (f"pkcs11:token=rs?module-path={MODULE}&pin-source=p", "object="),
        ("pkcs11:token=rs;object=k?pin-source=p", "module-path="),
        (f"pkcs11:token=rs;object=k?module-path={MODULE}", "pin-source="),
        (f"pkcs11:object=k;object=j?module-path={MODULE}&pin-source=p", "twice"),
        (f"pkcs11:slot-id=x;object=k?module-path={MODULE}&pin-source=p", "slot-id"),
        (f"pkcs11:object=k;type=public?module-path={MODULE}&pin-source=p", "type="),
        ("file:/etc/key", "pkcs11: URI"),
    ],
)
def test_a_uri_recordseal_cannot_use_is_refused_naming_the_attribute(text: str, named: str) -> None:
    with pytest.raises(KeyLocationError, match=named) as refused:
        ModuleUri.parse(text)
    assert "1234" not in str(refused.value)  # a PIN given in the URI is never repeated


def test_the_pin_is_read_from_its_source_and_a_missing_source_is_named(tmp_path: Path) -> None:
    pin = tmp_path / "pin"
    pin.write_text("4321\n")
    base = f"pkcs11:object=k?module-path={MODULE}&pin-source="
    assert ModuleUri.parse(base + f"file:{pin}").pin() == "4321"
    assert ModuleUri.parse(base + str(pin)).pin() == "4321"
    with pytest.raises(KeyLocationError, match=r"pin-source .*missing"):
        ModuleUri.parse(base + f"file:{tmp_path / 'missing'}").pin()
    with pytest.raises(KeyLocationError, match="not run"):
        ModuleUri.parse(base + "|cat%20/etc/pin").pin()


# --- keys in the module ----------------------------------------------------------------------


def test_an_ed25519_key_made_in_the_module_signs_there() -> None:
    key = uri(unique("sign")).generate(ED25519)
    public = Ed25519PublicKey.from_public_bytes(key.public_key)
    signature = key.sign(b"message", b"context:")
    public.verify(signature, b"context:message")  # raises when it is not the key's
    with pytest.raises(KeyModuleError, match="cannot encrypt"):
        key.encrypt(bytes(12), b"x", None)


def test_a_label_in_use_is_refused_and_an_unknown_one_named() -> None:
    location = uri(unique("taken"))
    location.generate(AES256)
    with pytest.raises(KeyLocationError, match="already holds an object labelled"):
        location.generate(AES256)
    with pytest.raises(KeyLocationError, match="no ed25519 key labelled"):
        location.key(ED25519)
    other = ModuleUri.parse(softhsm().uri("k").replace("token=recordseal", "token=absent"))
    with pytest.raises(KeyLocationError, match=r"no initialised token .* token=absent"):
        other.key(AES256)


def test_a_wrong_pin_is_refused_without_repeating_it(tmp_path: Path) -> None:
    # Its own process: this one is logged in to the token already.
    wrong = tmp_path / "pin"
    wrong.write_text("not-the-pin-987\n")
    location = softhsm().uri("k").replace(str(softhsm().pin_file), str(wrong))
    probe = (
        "import sys\nfrom recordseal.crypto.hsm import ModuleUri, KeyLocationError\n"
        f"try:\n    ModuleUri.parse({location!r}).key('aes256')\n"
        "except KeyLocationError as e:\n    print(e)\n    sys.exit(3)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 3, done.stderr
    assert "logging in to the token" in done.stdout and "PinIncorrect" in done.stdout
    assert "not-the-pin-987" not in done.stdout + done.stderr


def test_processes_opening_one_token_together_all_open_it() -> None:
    """SoftHSM rewrites its token file at every login, and a process reading the token then
    met CKR_GENERAL_ERROR or no initialised token: a server's workers starting together failed
    one time in six (4 at once). Opening tries again, starting the module afresh where that
    process has no other token of it open; a wrong PIN is not tried again (test above)."""
    location = uri(unique("together"))
    location.generate(ED25519)
    public = location.key(ED25519).public_key
    probe = (
        "import sys\nfrom recordseal.crypto.hsm import ModuleUri\n"
        "sys.stdout.write(ModuleUri.parse(sys.argv[1]).key('ed25519').public_key.hex())"
    )
    for _ in range(12):
        together = [
            subprocess.Popen(
                [sys.executable, "-c", probe, str(location)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(4)
        ]
        answers = [process.communicate() for process in together]
        assert [out for out, _ in answers] == [public.hex()] * 4, [err for _, err in answers]


def test_the_native_pipeline_signs_every_header_in_the_module() -> None:
    location = uri(unique("header"))
    location.generate(ED25519)
    signer = HeaderSigner.in_module(location)
    assert signer.seed is None and signer.location.startswith("pkcs11:")
    module_pipeline = pipeline_for(signer)
    file_pipeline = pipeline_from_seed(secrets.token_bytes(32))
    items = [
        RecordInput(
            tenant="acme",
            stream="s",
            record_type="t",
            occurred_at="2026-11-26T08:00:00Z",
            subject_ref=f"subj{i}",
            record_id=f"0194-{i:04d}",
            payload=b'{"n": %d}' % i,
            declarations=None,
            strict=False,
            salt_key=bytes(32),
            payload_key=bytes(32),
        )
        for i in range(40)
    ]
    prepared = [p for p in module_pipeline.prepare(items) if not isinstance(p, CommitError)]
    assert len(prepared) == len(items)
    heads = [(1, bytes(32)), (1, bytes(32))]
    slots = [i % 2 for i in range(40)]
    signed = module_pipeline.sign(prepared, slots, list(heads), "2026-11-26T08:00:01Z")
    public = Ed25519PublicKey.from_public_bytes(signer.public_key)
    for one in signed:
        public.verify(one.signature, HEADER_CONTEXT + one.header)
        assert signer.key_id.encode() in one.header
    # Headers and chain leaves are the bytes a file key's pipeline makes under the same key id.
    file_pipeline.key_id = signer.key_id
    again = [p for p in file_pipeline.prepare(items) if not isinstance(p, CommitError)]
    twin = file_pipeline.sign(again, slots, list(heads), "2026-11-26T08:00:01Z")
    assert [(s.seq, s.header, s.chain_leaf) for s in signed] == [
        (s.seq, s.header, s.chain_leaf) for s in twin
    ]


def test_a_kek_in_the_module_wraps_and_unwraps_there() -> None:
    kek = uri(unique("kek")).generate(AES256)
    index = uri(unique("index")).generate(HMAC_SHA256)
    wrapper = KeyWrapper({1: kek}, index)
    subject_key = secrets.token_bytes(32)
    wrapped = wrapper.wrap("acme", "subj", subject_key)
    assert len(wrapped) == 60 and subject_key not in wrapped
    assert wrapper.unwrap("acme", "subj", wrapped) == subject_key
    with pytest.raises(VaultError):
        wrapper.unwrap("acme", "another subject", wrapped)  # bound to tenant and subject
    tampered = wrapped[:-1] + bytes([wrapped[-1] ^ 1])
    with pytest.raises(VaultError):
        wrapper.unwrap("acme", "subj", tampered)
    with pytest.raises(InvalidTag):
        kek.decrypt(wrapped[:12], wrapped[12:], b"other context")
    # The subject index: a keyed hash computed in the module, stable, one per subject.
    assert wrapper.subject_index("acme", "a") == wrapper.subject_index("acme", "a")
    assert wrapper.subject_index("acme", "a") != wrapper.subject_index("acme", "b")
    assert len(wrapper.subject_index("acme", "a")) == 32
    # A second generation in the module: old wrappings still open, new ones name it.
    later = KeyWrapper({1: kek, 2: uri(unique("kek2")).generate(AES256)}, index)
    assert later.unwrap("acme", "subj", wrapped) == subject_key
    rewrapped = later.rewrap("acme", "subj", wrapped)
    assert rewrapped[0] == 2 and later.unwrap("acme", "subj", rewrapped) == subject_key


def test_keys_init_kek_makes_three_keys_in_the_module_and_nothing_secret_on_disk(
    tmp_path: Path,
) -> None:
    location = uri(unique("kek"))
    written = keks.init_in_module(tmp_path, location)
    assert written == ["kek.pkcs11", "subject-index.pkcs11", "panel-secrets.pkcs11"]
    labels = [read_reference(tmp_path / name).object for name in written]
    assert labels == [location.object, location.object + ".subject-index",
                      location.object + ".panel-secrets"]  # fmt: skip
    for name in written:  # each file holds a URI, without the PIN
        text = (tmp_path / name).read_text()
        assert text.startswith("pkcs11:") and softhsm().pin_file.read_text().strip() not in text
    wrapper = keks.load_wrapper(tmp_path)
    assert wrapper.unwrap("t", "s", wrapper.wrap("t", "s", bytes(32))) == bytes(32)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(written)  # no key file made
    with pytest.raises(ValueError, match="has a key-encryption key already"):
        keks.init_in_module(tmp_path, uri(unique("kek")))


def test_a_kek_s_own_file_is_written_last_so_no_process_sees_it_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers of one start adopt ``RECORDSEAL_KEK`` at once: the one that finds the KEK's
    file must find the subject index and panel keys beside it (the KEK's file is what marks
    the directory as having a KEK), whether ``keys init`` or the setting wrote them."""
    import asyncio

    from recordseal.crypto import hsm as hsm_files
    from recordseal.services import key_custody
    from recordseal.settings import Settings

    seen: list[str] = []

    def watching(write):  # type: ignore[no-untyped-def]
        def wrapped(path: Path, *args: object, **kwargs: object) -> object:
            seen.append(path.name)
            return write(path, *args, **kwargs)

        return wrapped

    monkeypatch.setattr(keks, "write_reference", watching(keks.write_reference))
    monkeypatch.setattr(key_custody, "create_file", watching(key_custody.create_file))
    keks.init_in_module(tmp_path / "init", uri(unique("kek")))
    location = uri(unique("kek"))
    for label, kind, _ in keks.module_keys(location):
        location.with_object(label).generate(kind)
    data = tmp_path / "adopt"
    (data / "keys").mkdir(parents=True)
    settings = Settings(data_dir=data, kek=str(location))
    asyncio.run(key_custody.adopt_configured(settings, None))  # type: ignore[arg-type]
    for written in (seen[:3], seen[3:]):
        assert written == ["panel-secrets.pkcs11", "subject-index.pkcs11", "kek.pkcs11"]
    assert hsm_files.read_reference(data / "keys" / "kek.pkcs11") == location
    keks.load_wrapper(data / "keys")  # the three are there and open


def test_a_log_key_s_public_half_is_read_without_opening_the_module(tmp_path: Path) -> None:
    """What needs only the public half (the key directory, the demo witness's log families,
    ``keys list``) reads it from the reference file: a supervisor that forks workers never
    opens the module, and a missing PIN does not stop it."""
    from recordseal.ledger import log_keys

    location = uri(unique("log"))
    made = log_keys.init_in_module(tmp_path, location)
    made_mldsa_key_id = log_keys.log_keys(tmp_path)[1].key_id
    lines = (tmp_path / "log-signing.pkcs11").read_text().splitlines()
    assert lines[0] == str(location) and lines[1].startswith("public-key ")
    pin_gone = ModuleUri.parse(str(location).replace(str(softhsm().pin_file), "/nonexistent"))
    (tmp_path / "log-signing.pkcs11").write_text(
        (tmp_path / "log-signing.pkcs11").read_text().replace(str(location), str(pin_gone))
    )
    # The ML-DSA-44 key of its generation: a file of its seed wrapped in the module, and of
    # its public half, which is read without the module.
    key, mldsa = log_keys.log_keys(tmp_path)
    assert (mldsa.algorithm, mldsa.location, mldsa.seed, mldsa.path.name) == (
        "ML-DSA-44",
        None,
        None,
        "log-signing.ml-dsa-44.wrapped",
    )
    assert mldsa.key_id == made_mldsa_key_id
    vkey = key.signer("recordseal.local/acme/default").verifier().vkey
    assert vkey == made.signer("recordseal.local/acme/default").verifier().vkey
    assert key.key_id == made.key_id
    with pytest.raises(KeyLocationError, match="pin-source /nonexistent"):
        key.signer("x").sign(b"a checkpoint")  # signing does open it


def test_a_forked_child_opens_the_module_again_and_both_sign() -> None:
    """PKCS#11 forbids a child made by fork to use its parent's sessions: a key the parent
    opened refuses to sign in the child, naming why, and the child's own opening signs (the
    parent's sessions untouched)."""
    location = uri(unique("fork"))
    location.generate(ED25519)
    key = open_key(location, ED25519)
    public = Ed25519PublicKey.from_public_bytes(key.public_key)
    public.verify(key.sign(b"parent"), b"parent")
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through its exit code
        code = 1
        try:
            try:
                key.sign(b"child")
            except KeyModuleError as refused:
                assert "before a fork: open it again" in str(refused)
                again = open_key(location, ED25519)
                public.verify(again.sign(b"child"), b"child")
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    public.verify(key.sign(b"parent again"), b"parent again")
