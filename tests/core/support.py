"""Helpers shared by the core suites: vector files, outcomes, record summaries."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from recordseal.core.errors import CommitError

VECTORS = Path(__file__).resolve().parents[1] / "vectors"
KEY = bytes(range(32))
RECORD_ID = "rec-0001"
MAX_SAFE = 2**53 - 1


def vectors(name: str) -> Any:
    return json.loads((VECTORS / name).read_text(encoding="utf-8"))


def both() -> tuple[ModuleType, ModuleType]:
    """(native, reference), for tests that compare the two directly."""
    native = importlib.import_module("recordseal.core.native")
    reference = importlib.import_module("recordseal.core.reference")
    return native, reference


def refused(call: Callable[[], object]) -> CommitError:
    """Run ``call``, which must raise exactly CommitError; return the error."""
    with pytest.raises(CommitError) as info:
        call()
    assert type(info.value) is CommitError
    return info.value


def assert_refused(call: Callable[[], object], code: str, field: str | None = None) -> CommitError:
    error = refused(call)
    assert (error.code, error.field) == (code, field), str(error)
    return error


def outcome(call: Callable[[], Any]) -> tuple[str, Any]:
    """("ok", result) or ("error", (code, field)); anything but CommitError propagates."""
    try:
        return "ok", call()
    except CommitError as error:
        assert type(error) is CommitError
        return "error", (error.code, error.field)


def summary(record: Any) -> dict[str, Any]:
    """Every field of a CommittedRecord as plain data, for equality across implementations."""
    return {
        "canonical": record.canonical,
        "root": record.root,
        "field_count": record.field_count,
        "leaves": [
            (leaf.path, leaf.kind, leaf.encoded, leaf.salt, leaf.commitment)
            for leaf in record.leaves
        ],
    }


def commit(
    impl: ModuleType,
    payload: bytes | str,
    declarations: dict[str, str] | None = None,
    strict: bool = False,
    salt_key: bytes = KEY,
    record_id: str = RECORD_ID,
) -> Any:
    data = payload.encode() if isinstance(payload, str) else payload
    return impl.commit_record(data, declarations, strict, salt_key, record_id)


def generated_payload(spec: dict[str, int]) -> bytes:
    """The ``generate`` forms of tests/vectors/README.md."""
    if "fields" in spec:
        return ("{" + ",".join(f'"f{i:04d}":{i}' for i in range(spec["fields"])) + "}").encode()
    if "depth" in spec:
        n = spec["depth"]
        return ('{"a":' * (n - 1) + '{"a":1}' + "}" * (n - 1)).encode()
    n = spec["bytes"]
    return ('{"s":"' + "x" * (n - 8) + '"}').encode()
