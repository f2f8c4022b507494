"""``recordseal keys rotate|revoke``: a new header, log, key-encryption or cookie key while
the service runs, and a compromised key marked from a time (docs/operations.md, "Keys")."""

from __future__ import annotations

import argparse
import dataclasses
from typing import Any

from recordseal.crypto.hsm import KeyLocationError, ModuleUri
from recordseal.ops.options import hsm_option, store_options
from recordseal.ops.stores import keys_dir, print_json, settings_of, with_store
from recordseal.services.key_admin import KeyRefused
from recordseal.settings import Settings


def register(keys: Any) -> None:
    rotate = keys.add_parser(
        "rotate",
        help="a new header-signing, log, key-encryption or panel cookie key, used within"
        " seconds by every process; the old one keeps verifying until it is retired",
    )
    rotate.add_argument(
        "purpose",
        choices=["header", "log", "kek", "cookie"],
        help="header: the header-signing key; log: the checkpoint key (signing beside the old"
        " one until --complete); cookie: the panel's session cookie key (older cookies keep"
        " verifying until they expire)",
    )
    rotate.add_argument(
        "--batch",
        type=int,
        default=500,
        metavar="N",
        help="kek only: subject keys re-wrapped per transaction (500)",
    )
    rotate.add_argument(
        "--complete",
        action="store_true",
        help="log only: stop signing with the older log keys, once every witness knows the"
        " newest (they keep verifying)",
    )
    hsm_option(rotate, "generate the new key in this hardware module (header, log, kek)")
    store_options(rotate, "the old and the new key")
    rotate.set_defaults(run=_keys_rotate)
    revoke = keys.add_parser(
        "revoke",
        help="mark a header-signing key compromised from a time (rotating first when it is the"
        " active one): verifiers then trust its headers only where a witness shows them"
        " before that time",
    )
    revoke.add_argument("key_id", metavar="KEY_ID", help="the key id `keys list` shows")
    revoke.add_argument(
        "--compromised-at",
        required=True,
        metavar="TIME",
        help="RFC 3339 date-time from which the key may have been in other hands",
    )
    hsm_option(revoke, "generate the key that takes over in this hardware module")
    store_options(revoke, "the revoked key and the new active one")
    revoke.set_defaults(run=_keys_revoke)


def hsm_of(args: argparse.Namespace) -> ModuleUri | None:
    """The module URI of ``--hsm``, parsed (KeyRefused naming what is wrong), or None."""
    if args.hsm is None:
        return None
    try:
        return ModuleUri.parse(args.hsm)
    except KeyLocationError as error:
        raise KeyRefused("--hsm", str(error), message=f"--hsm: {error}") from None


def key_json(key: Any) -> dict[str, Any]:
    return {
        "key_id": key.key_id,
        "public_key": key.public_key.hex(),
        "not_before": key.not_before,
        "not_after": key.not_after,
        "revoked_at": key.revoked_at,
        "compromised_at": key.compromised_at,
        "location": key.location,
    }


def _keys_rotate(args: argparse.Namespace) -> int:
    settings = settings_of(args)
    if args.purpose == "log":
        return _rotate_log(args, settings)
    if args.purpose == "kek":
        return _rotate_kek(args, settings)
    if args.complete:
        raise KeyRefused("--complete", "applies to the log key only")
    if args.purpose == "cookie":
        return _rotate_cookie(args, settings)
    return _rotate_header(args, settings)


def _rotate_header(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.services.key_admin import rotate_header

    location = hsm_of(args)
    old, new = with_store(
        settings, lambda s: rotate_header(s.records, keys_dir(settings), location)
    )
    if args.json:
        print_json({"old": key_json(old), "new": key_json(new)})
        return 0
    print(f"recordseal: header key {new.key_id} signs from {new.not_before}")
    print(
        f"recordseal: {old.key_id} stays valid until its last headers are in (about 10 s):"
        " bundles it signed keep verifying; export the key directory again for auditors"
    )
    return 0


def _rotate_cookie(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.panel import cookie_keys

    if args.hsm is not None:
        rule = "the panel cookie key is a file (docs/operations.md, Keys)"
        raise KeyRefused("--hsm", rule, message=f"--hsm: {rule}")
    key_id = cookie_keys.rotate(keys_dir(settings))
    if args.json:
        print_json({"new": {"key_id": key_id}})
    else:
        print(
            f"recordseal: panel cookie key {key_id} signs within 2 s in every process;"
            " cookies signed before keep verifying until they expire"
        )
    return 0


def _rotate_kek(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.services.kek_rotation import rotate_kek

    if args.batch < 1:
        raise KeyRefused("--batch", "must be 1 or more")
    location = hsm_of(args)
    done = with_store(
        settings,
        lambda s: rotate_kek(s.records, keys_dir(settings), batch=args.batch, location=location),
    )
    if args.json:
        print_json(dataclasses.asdict(done))
        return 0
    how = "resumed and finished" if done.resumed else "done"
    print(
        f"recordseal: KEK {done.generation} wraps every subject key ({done.rewrapped} re-wrapped;"
        f" rotation {how}); destroyed: {', '.join(done.destroyed) or 'nothing'}"
    )
    print(
        "recordseal: back up keys/ now (the older KEK is gone; an older backup of keys/ holds it)"
    )
    return 0


def _complete_log(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.ledger import log_keys

    if args.hsm is not None:
        raise KeyRefused(
            "--hsm", "does not apply", message="--complete makes no key: --hsm does not apply"
        )
    retired = log_keys.complete(keys_dir(settings))
    if not retired:
        raise KeyRefused(
            "--complete",
            "needs a second log key signing",
            message="only one log key signs: nothing to complete",
        )
    names = [k.path.name for k in retired]
    if args.json:
        print_json({"retired": names})
    else:
        print(f"recordseal: {', '.join(names)} sign no more checkpoints (they still verify)")
    return 0


def _rotate_log(args: argparse.Namespace, settings: Settings) -> int:
    from recordseal.ledger import log_keys

    if args.complete:
        return _complete_log(args, settings)
    new = log_keys.rotate(keys_dir(settings), hsm_of(args))
    generation = [
        k for k in log_keys.log_keys(keys_dir(settings)) if k.generation == new.generation
    ]
    families = [k.signer(settings.origin).verifier().vkey for k in generation]
    if args.json:
        print_json(
            {
                "new": new.path.name,
                "new_files": [k.path.name for k in generation],
                "family_vkey": families[0],
                "family_vkeys": families,
            }
        )
        return 0
    made = " and ".join(k.path.name for k in generation)
    print(f"recordseal: {made} sign every checkpoint beside the older log keys")
    print(
        f"recordseal: give witnesses the log family {families[0]} (Ed25519; the ML-DSA-44 one is"
        f" {families[-1]}; the demo witness follows by itself),"
    )
    print("recordseal: then run `recordseal keys rotate log --complete`; export the keys again")
    return 0


def _keys_revoke(args: argparse.Namespace) -> int:
    from recordseal.services.key_admin import revoke_log_key

    settings = settings_of(args)
    location = hsm_of(args)
    log_key = revoke_log_key(keys_dir(settings), args.key_id, args.compromised_at, location)
    if log_key is None:
        return _revoke_header(args, settings, location)
    compromised, successor = log_key
    if args.json:
        print_json(
            {
                "revoked": {"key_id": args.key_id, "purpose": "log", "file": compromised.path.name},
                "new": None if successor is None else {"file": successor.path.name},
            }
        )
        return 0
    print(f"recordseal: log key {args.key_id} compromised from {args.compromised_at}")
    if successor is not None:
        print(
            f"recordseal: {successor.path.name} alone signs checkpoints from now: give"
            " witnesses its family vkey (`recordseal keys rotate log` printed how)"
        )
    print("recordseal: export the key directory again and give it to every verifier")
    return 0


def _revoke_header(args: argparse.Namespace, settings: Settings, location: Any) -> int:
    from recordseal.services.key_admin import revoke

    revoked, new = with_store(
        settings,
        lambda s: revoke(s.records, keys_dir(settings), args.key_id, args.compromised_at, location),
    )
    if args.json:
        print_json({"revoked": key_json(revoked), "new": None if new is None else key_json(new)})
        return 0
    print(
        f"recordseal: key {revoked.key_id} revoked at {revoked.revoked_at}, compromised from"
        f" {revoked.compromised_at}"
    )
    if new is not None:
        print(f"recordseal: header key {new.key_id} signs from {new.not_before}")
    print("recordseal: export the key directory again and give it to every verifier")
    return 0
