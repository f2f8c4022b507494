"""The reference core refuses with the native core's words, not only its codes and fields:
the verifier-only distribution (which runs the reference) then prints what ``recordseal
verify`` prints (docs/operations.md, "A verifier without Rust")."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import msgspec
import pytest

from recordseal.core.errors import CommitError

from .support import both, generated_payload
from .test_vectors import JCS, KINDS, RECORDS, TREE, _nodes

NATIVE, REFERENCE = both()
Call = Callable[[ModuleType], Any]


def _refusal(call: Call, impl: ModuleType) -> tuple[str, str | None, str] | None:
    try:
        call(impl)
    except CommitError as error:
        return error.code, error.field, str(error)
    return None


def _cases() -> list[tuple[str, Call]]:
    cases: list[tuple[str, Call]] = []
    for case in JCS:
        data = bytes.fromhex(case["input_hex"]) if "input_hex" in case else case["input"].encode()
        cases.append((f"jcs {case['name']}", lambda m, d=data: m.canonicalize(d)))
    for case in KINDS:
        cases.append(
            (
                f"kind {case['name']}",
                lambda m, c=case: m.encode_value(c["kind"], c["value"]),
            )
        )
    for case in RECORDS:
        payload = (
            generated_payload(case["generate"]) if "generate" in case else case["payload"].encode()
        )
        cases.append(
            (
                f"record {case['name']}",
                lambda m, c=case, p=payload: m.commit_record(
                    p, c["declarations"], c["strict"], bytes.fromhex(c["salt_key"]), c["record_id"]
                ),
            )
        )
    for case in TREE["inclusion_negative"]:
        cases.append(
            (
                f"inclusion {case['name']}",
                lambda m, c=case: m.verify_inclusion(
                    bytes.fromhex(c["leaf"]),
                    c["index"],
                    c["size"],
                    _nodes(c["proof"]),
                    bytes.fromhex(c["root"]),
                ),
            )
        )
    for case in TREE["consistency_negative"]:
        cases.append(
            (
                f"consistency {case['name']}",
                lambda m, c=case: m.verify_consistency(
                    c["old_size"],
                    c["new_size"],
                    bytes.fromhex(c["old_root"]),
                    bytes.fromhex(c["new_root"]),
                    _nodes(c["proof"]),
                ),
            )
        )
    return cases


CASES = _cases()


@pytest.mark.parametrize(("name", "call"), CASES, ids=[name for name, _ in CASES])
def test_both_cores_refuse_in_the_same_words(name: str, call: Call) -> None:
    native = _refusal(call, NATIVE)
    assert native == _refusal(call, REFERENCE)


MONEY_REFUSALS = [
    (
        12.5,
        "money_fraction",
        "money is a whole number of minor units (cents): 12.50 is sent as 1250",
    ),
    ("12.50", "value_type", "the kind money takes a whole number of minor units (cents)"),
    (True, "value_type", "the kind money takes a whole number of minor units (cents)"),
]


@pytest.mark.parametrize(("value", "code", "message"), MONEY_REFUSALS)
def test_money_refusals_say_what_to_send(
    impl: ModuleType, value: object, code: str, message: str
) -> None:
    """A price sent as 12.50 or "12.50" is answered with the unit money is counted in."""
    refusal = _refusal(
        lambda m: m.commit_record(
            msgspec.json.encode({"price": value}),
            {"o:/price": "money"},
            False,
            bytes(32),
            "0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
        ),
        impl,
    )
    assert refusal == (code, "o:/price", message)
