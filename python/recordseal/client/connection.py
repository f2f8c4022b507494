"""Which service and token a client command uses (``recordseal ingest``, ``disclose``).

The service is named by ``--url`` or ``RECORDSEAL_URL``; the API token is read from the file
named by ``--token-file`` or from ``RECORDSEAL_TOKEN``. A token is never taken on the command
line, where other users of the machine can read it in the process list.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from recordseal.client.errors import ClientError

T = TypeVar("T")

URL_VARIABLE = "RECORDSEAL_URL"
TOKEN_VARIABLE = "RECORDSEAL_TOKEN"


class MissingSetting(ClientError):
    """The service or the token is not given, or the token file cannot be read; ``setting``
    names which (``url`` or ``token``)."""

    def __init__(self, message: str, setting: Literal["url", "token"]) -> None:
        super().__init__(message)
        self.setting = setting


@dataclass(frozen=True, slots=True)
class Service:
    url: str
    token: str


def add_service_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--url", help=f"the service, e.g. http://127.0.0.1:8000 ({URL_VARIABLE})")


def add_service_options(command: argparse.ArgumentParser) -> None:
    add_service_url_option(command)
    token_file = f"a file holding the API token (else {TOKEN_VARIABLE})"
    command.add_argument("--token-file", type=Path, metavar="FILE", help=token_file)


def said_missing(command: str, read: Callable[[argparse.Namespace], T], args: Any) -> T | None:
    """``read(args)`` (:func:`service_of`, :func:`url_of`), or None once the missing setting
    is said on standard error as ``COMMAND: why`` (the command then exits 2)."""
    try:
        return read(args)
    except MissingSetting as error:
        print(f"{command}: {error}", file=sys.stderr)
        return None


def url_of(args: argparse.Namespace) -> str:
    """The service of ``--url``, else of ``RECORDSEAL_URL``; MissingSetting when neither."""
    url = args.url or os.environ.get(URL_VARIABLE)
    if not url:
        raise MissingSetting(f"no service: give --url or set {URL_VARIABLE}", "url")
    return str(url)


def service_of(args: argparse.Namespace) -> Service:
    """The service and token of a command's options, else of the environment."""
    url = url_of(args)
    if args.token_file is not None:
        try:
            token = args.token_file.read_text().strip()
        except (OSError, UnicodeDecodeError) as error:
            raise MissingSetting(
                f"cannot read the token file {args.token_file}: {error}", "token"
            ) from None
        if not token:
            raise MissingSetting(f"the token file {args.token_file} is empty", "token")
    else:
        token = os.environ.get(TOKEN_VARIABLE, "").strip()
        if not token:
            raise MissingSetting(
                f"no API token: give --token-file FILE or set {TOKEN_VARIABLE}"
                " (recordseal token create makes one)",
                "token",
            )
    return Service(url, token)
