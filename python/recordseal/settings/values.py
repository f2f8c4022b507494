"""The structured values some settings hold, each parsed from its variable's text."""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import msgspec
from cryptography import x509

from recordseal.tlog import TlogError, cosigner_verifier

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Rate:
    """``limit`` requests per ``seconds``."""

    limit: int
    seconds: int

    RULE = "N/SECONDS with N and SECONDS >= 1, or off"

    @classmethod
    def parse(cls, text: str) -> Rate | None:
        """``"20/60"`` (20 per 60 s); ``"off"`` or ``"0"`` turns the limit off."""
        text = text.strip().lower()
        if text in ("off", "0", ""):
            return None
        count, _, seconds = text.partition("/")
        try:
            rate = cls(int(count), int(seconds or "60"))
        except ValueError:
            raise ValueError(f"a rate limit is {cls.RULE}") from None
        if rate.limit < 1 or rate.seconds < 1:
            raise ValueError(f"a rate limit is {cls.RULE}")
        return rate


def _name(name: str) -> None:
    """A witness's or authority's name as verification results show it."""
    if not 1 <= len(name) <= 128 or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise ValueError("name must be 1 to 128 characters without control characters")


def _http_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError("url must be an http:// or https:// URL")


class WitnessSetting(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """A witness asked to cosign each checkpoint: its name, URL and cosigning key's vkey, or
    a list of its keys' vkeys (a witness that cosigns with Ed25519 and ML-DSA-44 alike,
    ``witness serve --algorithm both``: every cosignature by one of them is kept); and which
    logs it witnesses: every tenant log (``tenant``, the default) or the deployment's
    aggregate log alone (``aggregate``: a public witness, docs/tlog.md)."""

    name: str
    url: str
    vkey: str | tuple[str, ...]
    logs: Literal["tenant", "aggregate"] = "tenant"

    def __post_init__(self) -> None:
        _name(self.name)
        _http_url(self.url)
        if not self.vkeys:
            raise ValueError("vkey is an empty list: name at least one cosigning key")
        if len(set(self.vkeys)) != len(self.vkeys):
            raise ValueError("vkey lists one key twice")
        for vkey in self.vkeys:
            try:
                cosigner_verifier(vkey)
            except TlogError as error:
                raise ValueError(f"vkey is not a cosignature verifier key: {error}") from None

    @property
    def vkeys(self) -> tuple[str, ...]:
        """The witness's cosigning keys."""
        return (self.vkey,) if isinstance(self.vkey, str) else self.vkey


class AuthoritySetting(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """An RFC 3161 time-stamping authority: its name, URL and trusted root certificates."""

    name: str
    url: str
    roots_pem: str

    def __post_init__(self) -> None:
        _name(self.name)
        _http_url(self.url)
        try:
            roots = x509.load_pem_x509_certificates(self.roots_pem.encode())
        except ValueError:
            raise ValueError("roots_pem holds no PEM certificate") from None
        if not roots:
            raise ValueError("roots_pem holds no PEM certificate")

    def roots(self) -> list[x509.Certificate]:
        return x509.load_pem_x509_certificates(self.roots_pem.encode())


def parse_network(text: str) -> IPNetwork:
    try:
        return ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise ValueError(f"{text!r} is not an IP network (CIDR)") from None


#: List items: separated by commas (and semicolons, for group names that hold commas rarely).
LIST_SEPARATORS = re.compile(r"[,;]")
