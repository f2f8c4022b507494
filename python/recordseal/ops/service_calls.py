"""How the service's client commands (``stream``, ``records``, ``subject``) call the record
API: the service and token of ``--url``/``RECORDSEAL_URL`` and ``--token-file``/
``RECORDSEAL_TOKEN``, one client around the work, and the service's refusal as one line.

Exit codes, as ``disclose`` has them: 2 no service or token given, 3 the service refused
(its code, field and detail on standard error) or could not be reached."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar

from recordseal.client.connection import MissingSetting, service_of
from recordseal.ledger.errors import RecordServiceError

if TYPE_CHECKING:
    import argparse

    from recordseal.client.session import Client

T = TypeVar("T")

EXIT_SETTING = 2
EXIT_FAILED = 3


class CallFailed(RecordServiceError):
    """The call was not made or not answered; ``exit_code`` is the command's."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def call(args: argparse.Namespace, work: Callable[[Client], Awaitable[T]]) -> T:
    """``work`` with a client of the service and token of ``args``; :class:`CallFailed`."""
    from recordseal.client.models import Refused, Unavailable
    from recordseal.client.session import Client  # httpx: on use only

    try:
        service = service_of(args)
    except MissingSetting as error:
        raise CallFailed(str(error), EXIT_SETTING) from None

    async def run() -> T:
        async with Client(service.url, service.token) as client:
            return await work(client)

    try:
        return asyncio.run(run())
    except Refused as error:
        problem = error.problem
        at = f" at {problem.field}" if problem.field else ""
        message = f"{problem.status} {problem.code}{at}: {problem.detail or problem.title}"
        raise CallFailed(message, EXIT_FAILED) from None
    except Unavailable as error:
        raise CallFailed(str(error), EXIT_FAILED) from None


def calling(
    command: str, handler: Callable[[argparse.Namespace], int]
) -> Callable[[argparse.Namespace], int]:
    """``handler``, with a failed call printed as ``recordseal COMMAND: why`` and its exit."""

    def run(args: argparse.Namespace) -> int:
        try:
            return handler(args)
        except CallFailed as failed:
            print(f"recordseal {command}: {failed}", file=sys.stderr)
            return failed.exit_code

    return run
