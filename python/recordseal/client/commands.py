"""The client's commands: ``ingest``, ``disclose``, ``bundle refresh`` and the verifier's
``verify`` and ``verify-receipt`` with the service's ``--url`` added (the verifier's own
wheel has them without it)."""

from __future__ import annotations

from typing import Any

from recordseal.client.cli import add_bundle_parser
from recordseal.client.disclose_cli import add_disclose_parser
from recordseal.client.ingest_cli import add_ingest_parser
from recordseal.client.verify_cli import add_url_option
from recordseal.verify.cli import add_verify_parser, add_verify_receipt_parser


def register(commands: Any) -> None:
    add_ingest_parser(commands)
    add_disclose_parser(commands)
    add_bundle_parser(commands)
    add_url_option(add_verify_parser(commands))
    add_verify_receipt_parser(commands)
