"""The verification result (docs/bundle.md section 4) and the verdict rule (section 3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import msgspec
from msgspec import Struct

from .encoding import Timestamp

RESULT_FORMAT = "recordseal/verification/v1"
VERIFIED = "VERIFIED"
FAILED = "FAILED"
INCOMPLETE = "VERIFICATION INCOMPLETE"

Status = Literal["passed", "failed", "unchecked"]
Verdict = Literal["VERIFIED", "FAILED", "VERIFICATION INCOMPLETE"]

CHECK_NAMES = {
    1: "field commitments",
    2: "record tree",
    3: "header signature",
    4: "sealed batch",
    5: "witness receipts",
    6: "sequence continuity",
    7: "verdict and time bracket",
}


class CheckResult(Struct, frozen=True):
    """One check: its number and name, ``passed``, ``failed`` or ``unchecked``, and why."""

    number: int
    name: str
    status: Status
    detail: str


def passed(number: int, detail: str) -> CheckResult:
    return CheckResult(number, CHECK_NAMES[number], "passed", detail)


def failed(number: int, detail: str) -> CheckResult:
    return CheckResult(number, CHECK_NAMES[number], "failed", detail)


def unchecked(number: int, detail: str) -> CheckResult:
    return CheckResult(number, CHECK_NAMES[number], "unchecked", detail)


class TimeBracket(Struct):
    """When the record existed: after ``not_before`` and by ``not_after``, and who says so."""

    not_before: Timestamp | None = None
    not_before_by: str | None = None
    not_after: Timestamp | None = None
    not_after_by: str | None = None


class RecordRef(Struct):
    tenant: str
    stream: str
    seq: int
    record_id: str


class VerificationResult(Struct, kw_only=True):
    """The answer of the verifier; ``disclosed`` holds values only when checks 1-2 passed."""

    format: str = RESULT_FORMAT
    verdict: Verdict
    checks: list[CheckResult]
    time_bracket: TimeBracket
    record: RecordRef | None
    disclosed: dict[str, Any]

    def check(self, number: int) -> CheckResult:
        return self.checks[number - 1]

    def to_json(self) -> bytes:
        return msgspec.json.encode(self)


def verdict_of(checks: Sequence[CheckResult]) -> Verdict:
    """``FAILED`` if any check failed, ``VERIFIED`` if all passed, else incomplete."""
    if any(check.status == "failed" for check in checks):
        return "FAILED"
    if all(check.status == "passed" for check in checks):
        return "VERIFIED"
    return "VERIFICATION INCOMPLETE"


def decode_result(data: bytes) -> VerificationResult:
    """Read a result back (for clients of ``POST /v1/verify`` and the CLI's ``--json``)."""
    return msgspec.json.decode(data, type=VerificationResult)
