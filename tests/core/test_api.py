"""The public surface: same names in both implementations, one error class, no leaked values."""

from __future__ import annotations

import ast
import pickle
import unicodedata
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

import recordseal.core
from recordseal.core.errors import CommitError

from .support import KEY, RECORD_ID, both, commit, refused

STUB = Path(recordseal.__file__).with_name("_native.pyi")
SPEC_KINDS = (
    "boolean",
    "currency",
    "date",
    "decimal",
    "digest",
    "free",
    "integer",
    "lat6",
    "lat9",
    "lon6",
    "money",
    "text",
    "timestamp",
    "uuid",
)


def stub_names() -> set[str]:
    names = set()
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def test_stub_lists_the_whole_api() -> None:
    assert stub_names() == {
        "UNICODE_VERSION",
        "KINDS",
        "BUILD_PROFILE",
        "Leaf",
        "CommittedRecord",
        "canonicalize",
        "encode_value",
        "validate_declarations",
        "derive_salt",
        "commit_field",
        "commit_record",
        "leaf_hash",
        "merkle_root",
        "inclusion_proof",
        "verify_inclusion",
        "consistency_proof",
        "verify_consistency",
        "Ed25519Signer",
        "PreparedRecord",
        "prepare_records",
        "RecordRead",
        "read_request",
        "encode_answers",
        "derive_subject_keys",
        "grow_log",
        "place_appends",
        "ModuleToken",
        "ModuleKey",
    }


#: In the native module but not in the commitment API: fast paths with fallbacks of their own,
#: not the reference: the header signer (recordseal.crypto.signing) and the subject keys
#: (recordseal.crypto.vault), through ``cryptography``; the ingest pipeline and its read of a
#: request (recordseal.services.pipeline), through recordseal.services.reference_pipeline; the
#: ingest routes' answers (recordseal.web.ingest), through ``reference_answer``; log growth
#: (recordseal.merkle.log), through ``merkle.log.grow_log``; the placement rules
#: (recordseal.storage.native_placing), through ``storage.placing``; keys in a hardware module
#: (recordseal.crypto.hsm), which have no reference: they need the native core; and the
#: build's profile (``recordseal bench`` reports it).
NATIVE_ONLY = {
    "BUILD_PROFILE",
    "ModuleToken",
    "ModuleKey",
    "Ed25519Signer",
    "PreparedRecord",
    "prepare_records",
    "RecordRead",
    "read_request",
    "encode_answers",
    "derive_subject_keys",
    "grow_log",
    "place_appends",
}


def commitment_names() -> set[str]:
    return stub_names() - NATIVE_ONLY


def test_exports_the_stub_names(impl: ModuleType) -> None:
    assert commitment_names() <= set(dir(impl))
    assert set(impl.__all__) == commitment_names()


def test_both_export_the_same_names() -> None:
    native, reference = both()
    public = [
        {n for n in dir(m) if not n.startswith("_") and n in m.__all__} for m in (native, reference)
    ]
    assert public[0] == public[1] == commitment_names()


def test_core_exposes_the_native_backend() -> None:
    native, _ = both()
    assert recordseal.core.BACKEND == "native"
    assert set(recordseal.core.__all__) == commitment_names() | {"BACKEND", "CommitError"}
    for name in commitment_names():
        assert getattr(recordseal.core, name) is getattr(native, name), name
    assert recordseal.core.CommitError is CommitError


def test_modules_import_only_the_api_from_the_core() -> None:
    """mypy reads ``recordseal.core``'s names from the whole native stub (recordseal/_native.pyi),
    which also types the extension's other parts: here, no module imports one of those (or
    anything else the core does not export) from ``recordseal.core``."""
    package = Path(recordseal.__file__).parent
    submodules = {path.stem for path in (package / "core").iterdir()} - {"__init__"}
    exported = set(recordseal.core.__all__) | submodules
    imported = {
        (path.relative_to(package).as_posix(), alias.name)
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "recordseal.core"
        for alias in node.names
    }
    assert len(imported) > 20
    assert {(where, name) for where, name in imported if name not in exported} == set()


def test_unicode_version() -> None:
    native, reference = both()
    assert native.UNICODE_VERSION == reference.UNICODE_VERSION == unicodedata.unidata_version
    assert native.UNICODE_VERSION == "14.0.0"  # docs/spec.md section 3, kind text


def test_kinds() -> None:
    native, reference = both()
    assert tuple(native.KINDS) == tuple(reference.KINDS) == SPEC_KINDS
    assert isinstance(native.KINDS, tuple) and isinstance(reference.KINDS, tuple)


def test_result_types(impl: ModuleType) -> None:
    record = commit(impl, '{"a":[1,{}]}')
    assert isinstance(record, impl.CommittedRecord)
    assert all(isinstance(leaf, impl.Leaf) for leaf in record.leaves)
    assert isinstance(record.leaves, list)
    assert isinstance(record.canonical, bytes) and isinstance(record.root, bytes)
    assert isinstance(record.field_count, int)
    leaf = record.leaves[0]
    assert (type(leaf.path), type(leaf.kind)) == (str, str)
    assert {type(leaf.encoded), type(leaf.salt), type(leaf.commitment)} == {bytes}
    assert (len(leaf.salt), len(leaf.commitment), len(record.root)) == (32, 32, 32)
    assert isinstance(impl.inclusion_proof([b"a", b"b"], 0), list)
    assert isinstance(impl.consistency_proof([b"a", b"b"], 1), list)


REFUSALS: dict[str, Callable[[ModuleType], object]] = {
    "canonicalize": lambda m: m.canonicalize(b"[1,]"),
    "encode_value": lambda m: m.encode_value("money", 1.5),
    "validate_declarations": lambda m: m.validate_declarations({"x": "free"}),
    "derive_salt": lambda m: m.derive_salt(b"short", RECORD_ID, "o:/a"),
    "commit_record": lambda m: m.commit_record(b"[]", None, False, KEY, RECORD_ID),
    "inclusion_proof": lambda m: m.inclusion_proof([b"a"], 1),
    "verify_inclusion": lambda m: m.verify_inclusion(b"a", 0, 1, [], bytes(32)),
    "consistency_proof": lambda m: m.consistency_proof([b"a"], 2),
    "verify_consistency": lambda m: m.verify_consistency(2, 1, bytes(32), bytes(32), []),
}


@pytest.mark.parametrize("function", sorted(REFUSALS))
def test_one_error_class(impl: ModuleType, function: str) -> None:
    error = refused(lambda: REFUSALS[function](impl))
    assert isinstance(error, ValueError)
    assert isinstance(error.code, str) and error.code
    assert str(error), "a refusal carries a message for people"


def test_error_survives_pickling(impl: ModuleType) -> None:
    error = refused(lambda: commit(impl, '{"a":1.5}', {"o:/a": "money"}))
    copy = pickle.loads(pickle.dumps(error))
    assert (type(copy), copy.code, copy.field, str(copy)) == (
        CommitError,
        "money_fraction",
        "o:/a",
        str(error),
    )


SECRET = "S3cr3t-Value-7781"
LEAKS: list[tuple[str, Callable[[ModuleType], object], str]] = [
    ("value_type", lambda m: commit(m, f'{{"pw":"{SECRET}"}}', {"o:/pw": "money"}), SECRET),
    ("timestamp", lambda m: commit(m, f'{{"at":"{SECRET}"}}', {"o:/at": "timestamp"}), SECRET),
    ("date", lambda m: commit(m, f'{{"d":"{SECRET}"}}', {"o:/d": "date"}), SECRET),
    ("uuid", lambda m: commit(m, f'{{"u":"{SECRET}"}}', {"o:/u": "uuid"}), SECRET),
    ("digest", lambda m: commit(m, f'{{"h":"sha256:{SECRET}"}}', {"o:/h": "digest"}), SECRET),
    ("currency", lambda m: commit(m, '{"c":"QZX"}', {"o:/c": "currency"}), "QZX"),
    ("boolean", lambda m: commit(m, f'{{"b":"{SECRET}"}}', {"o:/b": "boolean"}), SECRET),
    ("money", lambda m: commit(m, '{"m":98765.4321}', {"o:/m": "money"}), "98765.4321"),
    ("integer", lambda m: commit(m, '{"i":12.3456789}', {"o:/i": "integer"}), "12.3456789"),
    ("coordinate", lambda m: commit(m, '{"l":123.456789}', {"o:/l": "lat6"}), "123.456789"),
    ("integer range", lambda m: commit(m, '{"n":9007199254740993}'), "9007199254740993"),
    ("strict", lambda m: commit(m, f'{{"k":"{SECRET}"}}', {}, strict=True), SECRET),
    ("invalid json", lambda m: m.canonicalize(f'{{"a":"{SECRET}",}}'.encode()), SECRET),
    ("invalid json value", lambda m: m.canonicalize(f'["{SECRET}" 1]'.encode()), SECRET),
    ("lone surrogate", lambda m: m.canonicalize(f'["{SECRET}\\ud800"]'.encode()), SECRET),
    ("duplicate", lambda m: m.canonicalize(f'{{"a":"{SECRET}","a":1}}'.encode()), SECRET),
    ("number out of range", lambda m: m.canonicalize(b"[1.234567e400]"), "1.234567e400"),
    ("invalid utf8", lambda m: m.canonicalize(f'["{SECRET}'.encode() + b'\xff"]'), SECRET),
    ("encode_value", lambda m: m.encode_value("timestamp", SECRET), SECRET),
    ("encode_value type", lambda m: m.encode_value("integer", SECRET), SECRET),
]


@pytest.mark.parametrize(("call", "value"), [c[1:] for c in LEAKS], ids=[c[0] for c in LEAKS])
def test_messages_never_contain_payload_values(
    impl: ModuleType, call: Callable[[ModuleType], object], value: str
) -> None:
    error = refused(lambda: call(impl))
    assert value not in str(error)
    assert value not in repr(error)
    assert all(value not in str(arg) for arg in error.args)


def test_the_chain_rules_refuse_under_the_core_root() -> None:
    """A broken chain (``chain.verify_links``) is a CommitError with its code, as every refusal
    of the commitment core; it survives pickling as itself."""
    from recordseal import chain

    header = chain.canonical_header({"tenant": "acme", "stream": "s", "seq": 2, "prev": "00"})
    with pytest.raises(CommitError) as refused_chain:
        chain.verify_links("acme", "s", [header])
    error = refused_chain.value
    assert isinstance(error, chain.ChainError)
    assert (error.code, str(error)) == ("chain_broken", "expected seq 1, found 2")
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is chain.ChainError and (again.code, str(again)) == (error.code, str(error))
