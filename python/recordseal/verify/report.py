"""How ``recordseal verify`` shows its results: one bundle's report, many bundles' lines."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any, TextIO

import msgspec

from .result import FAILED, INCOMPLETE, VERIFIED, VerificationResult

UNREADABLE = "UNREADABLE"
#: The order verdicts are counted and shown in.
OUTCOMES = (VERIFIED, FAILED, INCOMPLETE, UNREADABLE)
SUMMARY_FORMAT = "recordseal/verification-summary/v1"


@dataclass(frozen=True, slots=True)
class Outcome:
    """One bundle of a run: its result, or why it could not be read."""

    name: str
    result: VerificationResult | None = None
    error: str | None = None

    @property
    def verdict(self) -> str:
        return self.result.verdict if self.result is not None else UNREADABLE


def write_report(result: VerificationResult, out: TextIO) -> None:
    """The human-readable report: record, the seven checks, verdict, time bracket."""
    record = result.record
    if record is not None:
        out.write(
            f"record      {record.tenant} / {record.stream} / seq {record.seq}"
            f" ({record.record_id})\n\n"
        )
    width = max(len(check.name) for check in result.checks)
    out.write(f"  #  {'check':<{width}}  {'status':<9}  detail\n")
    for check in result.checks:
        out.write(f"  {check.number}  {check.name:<{width}}  {check.status:<9}  {check.detail}\n")
    open_checks = [str(check.number) for check in result.checks if check.status == "unchecked"]
    note = f" (unchecked: {', '.join(open_checks)})" if result.verdict == INCOMPLETE else ""
    out.write(f"\nverdict     {result.verdict}{note}\n")
    bracket = result.time_bracket
    out.write(f"not before  {_when(bracket.not_before, bracket.not_before_by)}\n")
    out.write(f"not after   {_when(bracket.not_after, bracket.not_after_by)}\n")
    if result.disclosed:
        out.write("\ndisclosed\n")
        for path, value in result.disclosed.items():
            out.write(f"  {path} = {msgspec.json.encode(value).decode()}\n")


def _when(moment: str | None, by: str | None) -> str:
    return "unknown" if moment is None else f"{moment} ({by})"


def reason(outcome: Outcome) -> str:
    """One line on a bundle: what it is, or the first check that did not pass and why."""
    if outcome.result is None:
        return outcome.error or ""
    result = outcome.result
    for status in ("failed", "unchecked"):
        for check in result.checks:
            if check.status == status:
                return f"check {check.number} {check.name} {status}: {check.detail}"
    record = result.record
    return f"{record.tenant} / {record.stream} / seq {record.seq}" if record else ""


def write_line(outcome: Outcome, out: TextIO) -> None:
    width = max(len(name) for name in OUTCOMES)
    out.write(f"{outcome.verdict:<{width}}  {outcome.name}  {reason(outcome)}\n")


def counts(outcomes: list[Outcome]) -> dict[str, int]:
    counted = Counter(outcome.verdict for outcome in outcomes)
    return {name: counted[name] for name in OUTCOMES}


def write_summary(outcomes: list[Outcome], out: TextIO) -> None:
    counted = counts(outcomes)
    shown = ", ".join(f"{count} {name}" for name, count in counted.items() if count)
    plural = "" if len(outcomes) == 1 else "s"
    out.write(f"\n{len(outcomes)} bundle{plural}: {shown}\n")


def summary_json(outcomes: list[Outcome]) -> dict[str, Any]:
    """``--json`` for a run over several bundles: each result with its file, and the counts."""
    results: list[dict[str, Any]] = []
    for outcome in outcomes:
        if outcome.result is None:
            results.append({"bundle": outcome.name, "verdict": UNREADABLE, "error": outcome.error})
        else:
            results.append({"bundle": outcome.name, **msgspec.to_builtins(outcome.result)})
    return {
        "format": SUMMARY_FORMAT,
        "total": len(outcomes),
        "counts": counts(outcomes),
        "results": results,
    }
