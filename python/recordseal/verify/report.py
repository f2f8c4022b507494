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


#: How a malformed bundle's check 1 detail starts (docs/bundle.md, "A malformed bundle").
MALFORMED = "malformed bundle: "
#: What the report and the verify page say instead of a time bracket for a FAILED verdict
#: (docs/bundle.md, "How a result is shown").
NO_BRACKET = "none: a bundle that failed proves no time for its record"
NO_CHECK_RUN = "None of the seven checks was run."
HEADER_BRACKET = "Its time bracket is the signed header's: check 7 passed."


def bracket_holds(result: VerificationResult) -> bool:
    """Whether the time bracket is shown: for any verdict but FAILED, and for a FAILED one
    whose check 7 passed (rules 7.1-7.3 hold: the signed header was sealed and witnessed,
    whatever else of the bundle failed)."""
    return result.verdict != FAILED or result.checks[6].status == "passed"


def not_a_bundle(result: VerificationResult) -> str | None:
    """Why the document is not a disclosure bundle at all (a malformed one), else None."""
    detail = result.checks[0].detail
    if result.record is None and detail.startswith(MALFORMED):
        return detail.removeprefix(MALFORMED)
    return None


def summary(result: VerificationResult) -> str:
    """One sentence on the verdict, in the words the verify page shows (docs/bundle.md, "How
    a result is shown")."""
    reason = not_a_bundle(result)
    if reason is not None:
        return f"This is not a disclosure bundle: {reason}. {NO_CHECK_RUN}"
    if result.verdict == FAILED:
        failed = [f"{c.number} ({c.name})" for c in result.checks if c.status == "failed"]
        checks = f"Check{'s' if len(failed) > 1 else ''} {', '.join(failed)}"
        said = f"{checks} failed: the bundle is not what it claims."
        return (
            f"{said} {HEADER_BRACKET}"
            if bracket_holds(result)
            else f"{said} Time bracket: {NO_BRACKET}."
        )
    if result.verdict == INCOMPLETE:
        open_checks = [str(check.number) for check in result.checks if check.status == "unchecked"]
        checks = f"check{'s' if len(open_checks) > 1 else ''} {', '.join(open_checks)}"
        return f"Nothing failed, but {checks} could not be done: see each one's detail."
    return "All seven checks passed."


#: Where the report's values start (under ``verdict     ``).
INDENT = " " * 12


def write_report(result: VerificationResult, out: TextIO) -> None:
    """The human-readable report: record, the seven checks, verdict and the verify page's
    sentence on it, time bracket (where it holds); for a document that is not a bundle, the
    verdict and the sentence alone."""
    if not_a_bundle(result) is not None:
        out.write(f"verdict     {result.verdict}\n{INDENT}{summary(result)}\n")
        return
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
    out.write(f"\nverdict     {result.verdict}{note}\n{INDENT}{summary(result)}\n")
    bracket = result.time_bracket
    if bracket_holds(result):
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
