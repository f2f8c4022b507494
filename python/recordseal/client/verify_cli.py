"""``recordseal verify BUNDLE… --url URL``: verify with the key directory and the trust store
a service publishes (``GET /v1/keys``, ``GET /v1/trust``) instead of files.

The offline verifier (``recordseal.verify``) holds no HTTP client, so that it runs anywhere
(``recordseal-verify``, docs/operations.md); this module, in the client layer, adds
``--url`` to the ``recordseal verify`` command of the full package, fetches the documents not
given as files (``--keys`` and ``--trust`` win), and hands them to the verifier's command. It
says on standard error, every time, that the result then rests on the service's own word.

Exit codes are the verifier's (docs/bundle.md, "The command line"), plus 69 (sysexits
``EX_UNAVAILABLE``) when the service cannot be reached or refuses a document; a fetched
document that is not what it should be is 65, as an invalid file is; a ``--url`` that is no
http(s) URL is a usage error, 64.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from urllib.parse import urlsplit

from recordseal.verify import (
    KeyDirectory,
    TrustStore,
    load_key_directory,
    load_trust_store,
)
from recordseal.verify.cli import EXIT_DATA, EXIT_USAGE
from recordseal.verify.cli import run as run_offline
from recordseal.verify.errors import BundleError

EXIT_UNAVAILABLE = 69  # sysexits.h EX_UNAVAILABLE: the service cannot be reached or refused
#: A fetch is tried a few times, briefly: a person is waiting at the terminal
#: (``RetryPolicy``'s attempts, first delay and longest delay).
FETCH_RETRY = (3, 0.2, 1.0)
#: What standard error says whenever a document was fetched (the page says the same).
WARNING = (
    "recordseal verify: {what} fetched from {url}. Trusting fetched material means trusting"
    " this service: it is the service's own word on its keys and on whom it asks to vouch,"
    " and a service that forged a record could publish keys and witnesses that vouch for it."
    " For a check that does not rest on it, give --keys and --trust files you obtained"
    " another way."
)


def add_url_option(command: argparse.ArgumentParser) -> None:
    """Add ``--url`` to the ``verify`` command's parser (``verify.cli.configure`` made it)."""
    command.add_argument(
        "--url",
        default=None,
        help="take the key directory and trust store this service publishes (GET /v1/keys,"
        " GET /v1/trust) for those not given as files; trusting them means trusting it"
        " (exit 69 when it cannot be reached or refuses)",
    )
    command.set_defaults(run=run)


async def _fetch(url: str, keys: bool, trust: bool) -> tuple[bytes | None, bytes | None]:
    # The client library (and its HTTP client) only when a URL is given: the command line
    # loads no command's heavy modules (tests/ops/test_start_imports.py).
    from recordseal.client.session import Client, RetryPolicy

    attempts, first_delay, max_delay = FETCH_RETRY
    retry = RetryPolicy(attempts=attempts, first_delay=first_delay, max_delay=max_delay)
    async with Client(url, None, retry=retry) as client:
        return (
            await client.key_directory() if keys else None,
            await client.trust_store() if trust else None,
        )


def _usable(url: str) -> bool:
    """An ``http`` or ``https`` URL with a host."""
    try:
        parsed = urlsplit(url)
        host = parsed.hostname
    except ValueError:
        return False
    return parsed.scheme in ("http", "https") and bool(host)


def run(args: argparse.Namespace) -> int:
    if args.url is None:
        return run_offline(args)
    if not _usable(args.url):
        print(
            f"recordseal verify: error: --url must be an http or https URL, such as"
            f" http://127.0.0.1:8000, not {args.url!r}",
            file=sys.stderr,
        )
        return EXIT_USAGE
    want_keys, want_trust = args.keys is None, args.trust is None
    if not (want_keys or want_trust):
        return run_offline(args)  # both given as files: nothing of the service is used
    from recordseal.client.models import Refused, Unavailable

    try:
        keys_data, trust_data = asyncio.run(_fetch(args.url, want_keys, want_trust))
    except (Refused, Unavailable) as error:
        print(f"recordseal verify: cannot fetch from {args.url}: {error}", file=sys.stderr)
        return EXIT_UNAVAILABLE
    keys: KeyDirectory | None = None
    trust: TrustStore | None = None
    try:
        if keys_data is not None:
            keys = load_key_directory(keys_data)
        if trust_data is not None:
            trust = load_trust_store(trust_data)
    except BundleError as error:
        print(f"recordseal verify: fetched from {args.url}: {error}", file=sys.stderr)
        return EXIT_DATA
    fetched = [
        name
        for name, wanted in (("the key directory", want_keys), ("the trust store", want_trust))
        if wanted
    ]
    print(WARNING.format(what=" and ".join(fetched), url=args.url), file=sys.stderr)
    return run_offline(args, keys, trust)
