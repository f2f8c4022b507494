"""``recordseal subject erase ID [--receipt FILE]``: erase a data subject through the record
API with the tenant's token (docs/records.md, "Erasure"). Its key is destroyed and its
payloads deleted; the chain stays whole. A repeat answers ``already_erased`` with the first
time. ``--receipt FILE`` keeps the service's signed erasure receipt, which
``recordseal verify-receipt FILE --keys KEYS`` checks."""

from __future__ import annotations

import argparse
import json
from typing import Any

import msgspec

from recordseal.client.connection import add_service_options
from recordseal.ops.options import family, json_option, path_option
from recordseal.ops.service_calls import EXIT_FAILED, CallFailed, call, calling


def register(commands: Any) -> None:
    subject = family(commands, "subject", "data subjects: erase", "subject_command")
    erase = subject.add_parser(
        "erase", help="erase a subject: its key and payloads go, its records' chain stays"
    )
    erase.add_argument("subject_id", metavar="ID", help="the subject's id, as records name it")
    kept = "write the signed erasure receipt here (recordseal verify-receipt checks it)"
    path_option(erase, "--receipt", metavar="FILE", text=kept)
    json_option(erase, "the service's answer")
    add_service_options(erase)
    erase.set_defaults(run=calling("subject erase", _erase))


def _erase(args: argparse.Namespace) -> int:
    erasure = call(args, lambda client: client.erase_subject(args.subject_id))
    if args.receipt is not None:
        if erasure.erasure_receipt is None:
            raise CallFailed(
                "the service's answer holds no erasure receipt; the subject is erased",
                EXIT_FAILED,
            )
        try:
            args.receipt.write_text(json.dumps(erasure.erasure_receipt, indent=2) + "\n")
        except OSError as error:
            raise CallFailed(
                f"the subject is erased; its receipt could not be written: {error}", EXIT_FAILED
            ) from None
    if args.json:
        print(json.dumps(msgspec.to_builtins(erasure), indent=2))
        return 0
    count, plural = erasure.payloads_deleted, "s" if erasure.payloads_deleted != 1 else ""
    said = [
        f"subject already erased at {erasure.erased_at}; nothing changed"
        if erasure.status == "already_erased"
        else f"subject erased at {erasure.erased_at}: its key destroyed, {count} payload{plural}"
        " deleted; its records' headers stay in the chain"
    ]
    if args.receipt is not None:
        said.append(f"erasure receipt: {args.receipt} (check it with recordseal verify-receipt)")
    print("\n".join(said))
    return 0
