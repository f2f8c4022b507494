"""Strict standard base64 (RFC 4648 section 4), as every C2SP format uses it."""

from __future__ import annotations

import base64
import binascii


def encode(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def decode(text: str) -> bytes | None:
    """The bytes of canonical, padded base64 ``text``; None for anything else.

    Refuses characters outside the alphabet, missing padding and non-zero trailing bits, so
    every value has exactly one accepted encoding.
    """
    try:
        data = base64.b64decode(text.encode("ascii"), validate=True)
    except (UnicodeEncodeError, binascii.Error):
        return None
    return data if encode(data) == text else None
