"""``recordseal verify BUNDLE… [--keys FILE] [--trust FILE] [--json]`` (also ``recordseal-verify``).

One bundle file gets the full report (the seven checks, the verdict, the time bracket, the
disclosed values); several bundles, or a directory of ``*.json`` bundles, get one line each
and a summary, with a progress bar on standard error when it is a terminal and the run is long.

Exit codes (docs/bundle.md, "The command line"): 0 every bundle ``VERIFIED``; 1 a bundle
``FAILED``; 2 a bundle ``VERIFICATION INCOMPLETE`` (and none failed); 64 a usage error;
65 the key directory or trust store is invalid; 66 an input file cannot be read (with
several bundles, after the others are verified, unless one ``FAILED``).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import msgspec

from recordseal.interrupts import EXIT_INTERRUPTED, interruptible

from .bundle import KeyDirectory, TrustStore
from .context import load_key_directory, load_trust_store
from .errors import BundleError
from .receipt import verify_erasure_receipt
from .report import (
    Outcome,
    summary_json,
    write_line,
    write_report,
    write_summary,
)
from .result import FAILED, INCOMPLETE
from .verifier import Verifier

EXIT_CODES = {"VERIFIED": 0, "FAILED": 1, "VERIFICATION INCOMPLETE": 2}
EXIT_USAGE = 64  # sysexits.h EX_USAGE
EXIT_DATA = 65  # EX_DATAERR: an invalid key directory or trust store
EXIT_NO_INPUT = 66  # EX_NOINPUT: an input file that cannot be read
#: From this many bundles on, a terminal shows a progress bar.
PROGRESS_FROM = 20
STDIN = "-"


class UsageParser(argparse.ArgumentParser):
    """An argument parser whose usage errors exit 64 (EX_USAGE), never 2: for ``verify``,
    2 means VERIFICATION INCOMPLETE. It takes no abbreviated option (``--key`` is not taken
    for ``--keys``, nor ``--keys`` for ``--keys-out``): an option is spelt out or refused.
    The parsers of subcommands are of their parent's class, so every parser of the command
    line is one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


def add_documented(
    subparsers: Any, name: str, text: str, doc: str | None
) -> argparse.ArgumentParser:
    """A command whose ``--help`` shows ``doc`` (its module's docstring) as plain text, and
    that takes no option by a prefix of its name."""
    return subparsers.add_parser(  # type: ignore[no-any-return]
        name,
        help=text,
        description=(doc or "").replace("``", ""),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )


def add_verify_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``verify`` command to an ``add_subparsers()`` object."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "verify",
        help="verify disclosure bundles offline",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    configure(command)
    return command


DESCRIPTION = "Verify disclosure bundles offline (docs/bundle.md)."
EPILOG = (
    "exit codes: 0 VERIFIED, 1 FAILED, 2 VERIFICATION INCOMPLETE (nothing failed, but a check"
    "\ncould not be done: no key directory, trust store or witness cosignature), 64 usage error,"
    "\n65 invalid key directory or trust store, 66 unreadable input file, 130 interrupted"
    " (Ctrl-C)"
)


def configure(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "bundles",
        nargs="+",
        metavar="BUNDLE",
        help="bundle files, directories of *.json bundles, or '-' for standard input",
    )
    command.add_argument(
        "--keys", type=Path, help="the key directory (written by 'recordseal keys export')"
    )
    command.add_argument(
        "--trust",
        type=Path,
        help="the trust store: witnesses and time-stamping authorities you trust, and a quorum",
    )
    command.add_argument(
        "--json", action="store_true", help="print the result (or every result) as JSON"
    )
    command.set_defaults(run=run)


def add_verify_receipt_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``verify-receipt`` command: ``recordseal verify-receipt FILE --keys KEYS``."""
    command: argparse.ArgumentParser = subparsers.add_parser(
        "verify-receipt",
        help="verify an erasure receipt offline",
        description="Verify an erasure receipt (docs/records.md, 'Erasure receipts'): the"
        " answer of POST /v1/subjects/{id}/erase, or its erasure_receipt member.",
        epilog="exit codes: 0 VALID, 1 INVALID, 64 usage error, 65 invalid key directory,"
        "\n66 unreadable input file",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    command.add_argument("file", metavar="FILE", help="the receipt, or '-' for standard input")
    command.add_argument(
        "--keys",
        type=Path,
        required=True,
        help="the key directory (written by 'recordseal keys export')",
    )
    command.add_argument(
        "--json", action="store_true", help="print the outcome as JSON (valid, reason, receipt)"
    )
    command.set_defaults(run=run_receipt)
    return command


def run_receipt(args: argparse.Namespace) -> int:
    """One line: ``VALID erasure of subject … at … (key …)`` (0) or ``INVALID: …`` (1)."""
    try:
        keys = load_key_directory(args.keys.read_bytes())
        data = _read(args.file)
    except (OSError, BundleError) as error:
        return _unusable_input("verify-receipt", error)
    result = verify_erasure_receipt(data, keys)
    if args.json:
        print(msgspec.json.encode(result).decode())
        return 0 if result.valid else 1
    if not result.valid or result.receipt is None:
        print(f"INVALID: {result.reason}")
        return 1
    receipt = result.receipt
    print(
        f"VALID erasure of subject {receipt.subject_ref} at {receipt.erased_at}"
        f" (key {receipt.key_id})"
    )
    return 0


def _expand(names: Sequence[str], skip: set[Path]) -> tuple[list[str], bool]:
    """The bundle names to verify, and whether the run is over several of them."""
    expanded: list[str] = []
    several = len(names) > 1
    for name in names:
        path = Path(name)
        if name != STDIN and path.is_dir():
            several = True
            expanded += [
                str(found)
                for found in sorted(path.glob("*.json"))
                if found.is_file() and found.resolve() not in skip
            ]
        else:
            expanded.append(name)
    return expanded, several


#: Where ``recordseal verify`` takes each document: a mix-up is answered with the right place.
TAKEN_AS = {"key directory": "--keys", "trust store": "--trust", "bundle": "a BUNDLE argument"}


def _unusable_input(
    command: str, error: OSError | BundleError, taken_as: dict[str, str] | None = None
) -> int:
    """One line on standard error; 66 for a file that cannot be read, 65 for one that is not
    a key directory (or trust store, or receipt) at all, naming where it goes when it is
    another of the verifier's documents (``taken_as``)."""
    message = f"recordseal {command}: {error}"
    found = error.found if isinstance(error, BundleError) else None
    if taken_as and found in taken_as:
        message += f"; give the {found} as {taken_as[found]}"
    print(message, file=sys.stderr)
    return EXIT_NO_INPUT if isinstance(error, OSError) else EXIT_DATA


def _read(name: str) -> bytes:
    return sys.stdin.buffer.read() if name == STDIN else Path(name).read_bytes()


def _verify(name: str, verifier: Verifier) -> Outcome:
    try:
        data = _read(name)
    except OSError as error:
        return Outcome(name, error=f"cannot be read: {error.strerror or error}")
    return Outcome(name, verifier.verify(data))


def run(
    args: argparse.Namespace, keys: KeyDirectory | None = None, trust: TrustStore | None = None
) -> int:
    """Verify ``args.bundles`` with the files of ``--keys`` and ``--trust``, or else with
    ``keys`` and ``trust`` as given by the caller (``recordseal verify --url`` fetches them:
    ``client/verify_cli.py``; this package fetches nothing)."""
    try:
        if args.keys is not None:
            keys = load_key_directory(args.keys.read_bytes())
        if args.trust is not None:
            trust = load_trust_store(args.trust.read_bytes())
    except (OSError, BundleError) as error:
        return _unusable_input("verify", error, TAKEN_AS)
    skip = {path.resolve() for path in (args.keys, args.trust) if path is not None}
    names, several = _expand(args.bundles, skip)
    # One verifier for every bundle: the key material built once, and what bundles of one
    # log share (checkpoints, cosignatures) verified once (docs/bundle.md, "Verifier").
    verifier = Verifier(keys, trust)
    if not several:
        return _one(_verify(names[0], verifier), args.json)
    outcomes: list[Outcome] = []
    again = "run it again on the bundles it did not reach"
    with _progress(len(names)) as advance, interruptible("recordseal verify", again) as interrupt:
        for name in names:
            if interrupt.requested:  # Ctrl-C: the summary of those verified, then exit 130
                break
            outcome = _verify(name, verifier)
            outcomes.append(outcome)
            if not args.json:
                write_line(outcome, sys.stdout)
            advance()
    if args.json:
        sys.stdout.write(msgspec.json.format(msgspec.json.encode(summary_json(outcomes))).decode())
        sys.stdout.write("\n")
    else:
        write_summary(outcomes, sys.stdout)
    if interrupt.requested:
        print(
            f"recordseal verify: interrupted (Ctrl-C) after {len(outcomes)} of {len(names)}"
            f" bundles; {again}",
            file=sys.stderr,
        )
        return EXIT_INTERRUPTED
    return exit_code(outcomes)


def _one(outcome: Outcome, as_json: bool) -> int:
    if outcome.result is None:
        print(f"recordseal verify: {outcome.name}: {outcome.error}", file=sys.stderr)
        return EXIT_NO_INPUT
    if as_json:
        sys.stdout.write(msgspec.json.format(outcome.result.to_json(), indent=2).decode() + "\n")
    else:
        write_report(outcome.result, sys.stdout)
    return EXIT_CODES[outcome.result.verdict]


def exit_code(outcomes: Sequence[Outcome]) -> int:
    """FAILED wins over an unreadable file, which wins over INCOMPLETE."""
    verdicts = {outcome.verdict for outcome in outcomes}
    if FAILED in verdicts:
        return EXIT_CODES[FAILED]
    if any(outcome.result is None for outcome in outcomes):
        return EXIT_NO_INPUT
    if INCOMPLETE in verdicts:
        return EXIT_CODES[INCOMPLETE]
    return 0


@contextmanager
def _progress(total: int) -> Iterator[Any]:
    """A rich progress bar for long runs on a terminal; else nothing. On the terminal of
    standard output the lines print above the bar; with standard output redirected, the bar
    goes to standard error's terminal and the lines, untouched, to the file."""
    on_stdout = sys.stdout.isatty()
    if total < PROGRESS_FROM or not (on_stdout or sys.stderr.isatty()):
        yield lambda: None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    columns = ("verifying", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn())
    with Progress(
        *columns,
        console=Console(stderr=not on_stdout),
        transient=True,
        redirect_stdout=on_stdout,
        redirect_stderr=False,
    ) as progress:
        task = progress.add_task("verify", total=total)
        yield lambda: progress.advance(task)


def main(argv: Sequence[str] | None = None, prog: str = "recordseal verify") -> int:
    """The standalone command (``recordseal-verify``, ``python -m recordseal.verify``)."""
    from recordseal import __version__

    parser = UsageParser(
        prog=prog,
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--version", action="version", version=f"{prog} {__version__}", help="print the version"
    )
    configure(parser)
    return int(run(parser.parse_args(argv)))


def standalone() -> int:
    """The ``recordseal-verify`` console script."""
    return main(prog="recordseal-verify")


if __name__ == "__main__":
    sys.exit(main())
