"""``recordseal verify BUNDLE [--keys FILE] [--trust FILE] [--json]``.

Exit codes: 0 ``VERIFIED``, 1 ``FAILED``, 2 ``VERIFICATION INCOMPLETE``, 3 when an input file
cannot be read or the key directory or trust store is invalid (argparse's own usage errors
also exit 2, before any verification).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

import msgspec

from .bundle import KeyDirectory, TrustStore
from .context import load_key_directory, load_trust_store
from .errors import BundleError
from .result import INCOMPLETE, VerificationResult
from .verifier import verify_bundle

EXIT_CODES = {"VERIFIED": 0, "FAILED": 1, "VERIFICATION INCOMPLETE": 2}
EXIT_INPUT = 3


def add_verify_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``verify`` command to an ``add_subparsers()`` object."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "verify",
        help="verify a disclosure bundle offline",
        description="Verify a disclosure bundle offline (docs/bundle.md). Exit code 0 "
        "VERIFIED, 1 FAILED, 2 VERIFICATION INCOMPLETE, 3 unreadable input.",
    )
    configure(command)
    return command


def configure(command: argparse.ArgumentParser) -> None:
    command.add_argument("bundle", help="the bundle file ('-' for standard input)")
    command.add_argument("--keys", type=Path, help="key directory (recordseal keys export)")
    command.add_argument("--trust", type=Path, help="witness trust store")
    command.add_argument("--json", action="store_true", help="print the result as JSON")
    command.set_defaults(run=run)


def _read(name: str) -> bytes:
    return sys.stdin.buffer.read() if name == "-" else Path(name).read_bytes()


def run(args: argparse.Namespace) -> int:
    keys: KeyDirectory | None = None
    trust: TrustStore | None = None
    try:
        bundle = _read(args.bundle)
        if args.keys is not None:
            keys = load_key_directory(args.keys.read_bytes())
        if args.trust is not None:
            trust = load_trust_store(args.trust.read_bytes())
    except (OSError, BundleError) as error:
        print(f"recordseal verify: {error}", file=sys.stderr)
        return EXIT_INPUT
    result = verify_bundle(bundle, keys, trust)
    if args.json:
        sys.stdout.write(msgspec.json.format(result.to_json(), indent=2).decode() + "\n")
    else:
        write_report(result, sys.stdout)
    return EXIT_CODES[result.verdict]


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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="recordseal verify", description=__doc__)
    configure(parser)
    args = parser.parse_args(argv)
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
