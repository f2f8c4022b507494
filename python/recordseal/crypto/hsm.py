"""Keys held in a hardware security module, named by RFC 7512 ``pkcs11:`` URIs
(docs/operations.md, "Keys in a hardware module").

A URI names the module (``module-path``), the token (``token``, ``serial`` or ``slot-id``),
the key (``object``: its label) and where the PIN is (``pin-source``: a file). For example::

    pkcs11:token=rs;object=header?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin

A PIN never appears in a URI: ``pin-value`` is refused, so a URI can be written into the key
directory, the store and log lines as it is. The work is done by the native core
(``recordseal._native.ModuleToken``, the ``cryptoki`` crate): keys are generated in the module,
sensitive and unextractable, and sign, encrypt and MAC there.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote, unquote, urlsplit

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from recordseal.crypto.errors import CryptoError, KeyModuleError

if TYPE_CHECKING:
    from recordseal._native import ModuleKey, ModuleToken


#: What a module raises when it refuses or fails an operation (a signature, a decryption).
ModuleFailure = KeyModuleError


SCHEME = "pkcs11:"
#: The key kinds of the module, by what they are for.
ED25519, AES256, HMAC_SHA256 = "ed25519", "aes256", "hmac-sha256"
_PATH_ATTRIBUTES = {"token", "serial", "slot-id", "object", "type"}
_QUERY_ATTRIBUTES = {"module-path", "pin-source"}


class KeyLocationError(CryptoError, ValueError):
    """A ``pkcs11:`` URI that recordseal cannot use, or a module that refused it; the text
    names the attribute or the module's answer, never a PIN."""


def is_module_uri(location: str) -> bool:
    return location.startswith(SCHEME)


@dataclass(frozen=True, slots=True)
class ModuleUri:
    """A key in a PKCS#11 module, as an RFC 7512 URI names it."""

    module_path: str
    object: str
    pin_source: str
    token: str | None = None
    serial: str | None = None
    slot_id: int | None = None

    @classmethod
    def parse(cls, text: str) -> ModuleUri:
        """The URI ``text``; KeyLocationError naming the attribute it cannot use."""
        if not is_module_uri(text):
            raise KeyLocationError(f"a module key is a {SCHEME} URI (RFC 7512)")
        parts = urlsplit(text)
        if parts.fragment:
            raise KeyLocationError("a pkcs11: URI has no fragment")
        path = _attributes(parts.path, ";", _PATH_ATTRIBUTES, "path")
        query = _attributes(parts.query, "&", _QUERY_ATTRIBUTES, "query")
        for required, where in (("object", path), ("module-path", query), ("pin-source", query)):
            if not where.get(required):
                raise KeyLocationError(f"the pkcs11: URI needs {required}=")
        if path.get("type", "private") not in ("private", "secret-key", "secret"):
            raise KeyLocationError("type= names the private or secret key, if given")
        slot_id = path.get("slot-id")
        if slot_id is not None and not slot_id.isdigit():
            raise KeyLocationError("slot-id= is a decimal number")
        return cls(
            module_path=query["module-path"],
            object=path["object"],
            pin_source=query["pin-source"],
            token=path.get("token"),
            serial=path.get("serial"),
            slot_id=int(slot_id) if slot_id is not None else None,
        )

    def __str__(self) -> str:
        path = [("token", self.token), ("serial", self.serial)]
        path += [("slot-id", None if self.slot_id is None else str(self.slot_id))]
        path += [("object", self.object)]
        query: list[tuple[str, str | None]] = [
            ("module-path", self.module_path),
            ("pin-source", self.pin_source),
        ]

        def joined(pairs: list[tuple[str, str | None]], separator: str) -> str:
            return separator.join(f"{k}={_quote(v)}" for k, v in pairs if v is not None)

        return f"{SCHEME}{joined(path, ';')}?{joined(query, '&')}"

    def with_object(self, label: str) -> ModuleUri:
        """The same token, another key."""
        return replace(self, object=label)

    def pin(self) -> str:
        """The PIN, read from ``pin-source`` (a ``file:`` URI or a path)."""
        source = self.pin_source
        if source.startswith("file:"):
            source = urlsplit(source).path
        elif source.startswith("|"):
            raise KeyLocationError("pin-source names a file; a command (|...) is not run")
        try:
            return Path(source).read_text(encoding="utf-8").rstrip("\r\n")
        except OSError as error:
            raise KeyLocationError(
                f"pin-source {source}: {error.strerror or error.__class__.__name__}"
            ) from None

    def open_token(self) -> ModuleToken:
        from recordseal._native import ModuleToken

        try:
            return ModuleToken(
                self.module_path,
                self.pin(),
                token=self.token,
                serial=self.serial,
                slot_id=self.slot_id,
            )
        except ModuleFailure as error:
            raise KeyLocationError(f"{self.module_path}: {error}") from None

    def key(self, kind: str) -> ModuleKey:
        """The key this URI names, of ``kind``."""
        return _call(self, lambda token: token.key(self.object, kind))

    def generate(self, kind: str) -> ModuleKey:
        """A new key of ``kind`` under this URI's label, generated in the module."""
        return _call(self, lambda token: token.generate(self.object, kind))

    def destroy(self) -> int:
        """Destroy the key this URI names (both halves of a pair); how many objects."""
        return _call(self, lambda token: token.destroy(self.object))


_T = TypeVar("_T")


def _call(uri: ModuleUri, work: Callable[[ModuleToken], _T]) -> _T:
    token = uri.open_token()
    try:
        return work(token)
    except ModuleFailure as error:
        raise KeyLocationError(f"{uri}: {error}") from None


def _quote(value: str) -> str:
    return quote(value, safe="/:-._~")


def _attributes(text: str, separator: str, known: set[str], part: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for item in filter(None, text.split(separator)):
        name, equals, value = item.partition("=")
        name = unquote(name)
        if name == "pin-value":
            raise KeyLocationError(
                "pin-value is refused: a PIN in a URI ends up in logs, the store and process"
                " listings; give pin-source=file:PATH"
            )
        if name not in known:
            raise KeyLocationError(
                f"the pkcs11: URI's {part} attribute {name!r} is not supported (supported:"
                f" {', '.join(sorted(known))})"
            )
        if not equals or name in found:
            raise KeyLocationError(f"the pkcs11: URI's {name} is given without a value or twice")
        found[name] = unquote(value)
    return found


#: A key directory's file that names a key in a module: its URI on the first line, and for an
#: Ed25519 key a second line ``public-key <hex>``, so that what only needs the public half (the
#: key directory, the demo witness's log families, ``keys list``) never opens the module.
REFERENCE_SUFFIX = ".pkcs11"
_PUBLIC = "public-key "
_opened: dict[tuple[int, str, str], ModuleKey] = {}


def read_reference(path: Path) -> ModuleUri:
    """The URI a key directory's ``.pkcs11`` file names."""
    return _reference(path)[0]


def read_public(path: Path) -> bytes | None:
    """The public key a ``.pkcs11`` file records (an Ed25519 key's), or None."""
    return _reference(path)[1]


def _reference(path: Path) -> tuple[ModuleUri, bytes | None]:
    lines = path.read_text(encoding="utf-8").splitlines()
    try:
        location = ModuleUri.parse(lines[0].strip() if lines else "")
        public = None
        if len(lines) > 1 and lines[1].startswith(_PUBLIC):
            public = bytes.fromhex(lines[1][len(_PUBLIC) :])
    except (KeyLocationError, ValueError) as error:
        raise KeyLocationError(f"{path}: {error}") from None
    return location, public


def reference_text(location: ModuleUri, public_key: bytes | None = None) -> bytes:
    public = "" if public_key is None else f"{_PUBLIC}{public_key.hex()}\n"
    return f"{location}\n{public}".encode()


def write_reference(path: Path, location: ModuleUri, public_key: bytes | None = None) -> None:
    """Record ``location`` (and an Ed25519 key's public half) in the new file ``path``
    (refused when it exists)."""
    from recordseal.crypto.keyfiles import create_file

    if not create_file(path, reference_text(location, public_key)):
        raise KeyLocationError(f"{path} exists already")


def open_key(location: ModuleUri, kind: str) -> ModuleKey:
    """The key ``location`` names, opened once per process (a module finds it once; a child
    made by ``fork`` opens it again, as PKCS#11 requires)."""
    key = (os.getpid(), str(location), kind)
    if key not in _opened:
        _opened[key] = location.key(kind)
    return _opened[key]


class ModuleEd25519Key:
    """An Ed25519 key in a module, with the two methods of ``Ed25519PrivateKey`` that the
    signers use (``sign`` and ``public_key``), and the native key for the ingest pipeline.
    Given its public half, the module is opened only when it first signs."""

    __slots__ = ("_public", "location")

    def __init__(self, location: ModuleUri, public: bytes | None = None) -> None:
        self.location = location
        self._public = public

    @classmethod
    def open(cls, location: ModuleUri) -> ModuleEd25519Key:
        key = cls(location)
        key._public = key.native.public_key
        return key

    @property
    def native(self) -> ModuleKey:
        return open_key(self.location, ED25519)

    @property
    def public_bytes_raw(self) -> bytes:
        if self._public is None:
            self._public = self.native.public_key
        return self._public

    def public_key(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.public_bytes_raw)

    def sign(self, data: bytes) -> bytes:
        try:
            return self.native.sign(data)
        except ModuleFailure as error:
            raise KeyLocationError(f"{self.location}: {error}") from None

    def __repr__(self) -> str:
        return f"ModuleEd25519Key({self.location})"
