"""Providers registered through the panel, as the database keeps them (docs/sso.md,
"Providers in the database").

A provider is one row of the panel's store: its configuration as JSON (every field of an
``OidcCodeConfig`` or ``JwtBearerConfig``, including the endpoints, pinned algorithms and key
set found by discovery, so a restart needs no call to the IdP) with the client secret left
out, and the client secret sealed apart with AES-256-GCM under a key derived from the
service's key-encryption key (HKDF-SHA-256, info ``recordseal/panel-provider-secret/v1``),
the provider id as associated data. A copy of the database alone opens no client secret;
every host of a deployment carries the same ``keys/kek.key``.

The provider store file of earlier versions (``RECORDSEAL_PANEL_PROVIDER_STORE_PATH``)::

    {"version": 1, "providers": [<provider>, ...]}

is read by ``read_provider_file`` only to import it (``panel/legacy_import.py``).
"""

from __future__ import annotations

import logging
import secrets
import stat
from pathlib import Path
from typing import TypeAlias

import msgspec
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from recordseal.crypto.hsm import AES256, open_key, read_reference
from recordseal.crypto.keks import PANEL_IN_MODULE
from recordseal.crypto.keyfiles import read_or_create_secret, sync_directory
from recordseal.crypto.vault import Aead
from recordseal.panel.errors import PanelError
from recordseal.panel.sso.jwt_bearer import JwtBearerConfig
from recordseal.panel.sso.oidc import OidcCodeConfig
from recordseal.storage.panel import ProviderRow

log = logging.getLogger("recordseal.panel.sso")


FORMAT_VERSION = 1
SECRET_INFO = b"recordseal/panel-provider-secret/v1"
_SEALED_VERSION = b"\x01"

ProviderConfig: TypeAlias = OidcCodeConfig | JwtBearerConfig


class ProviderStoreError(PanelError):
    """A provider file or row cannot be read (bad content, or a secret that does not open
    under this key-encryption key): ``provider_id`` names the provider of a row, ``path`` the
    file (one of them is set), ``rule`` what is wrong. The message is ``provider 'id': rule``
    or ``path: rule``."""

    def __init__(
        self, rule: str, *, provider_id: str | None = None, path: Path | None = None
    ) -> None:
        where = str(path) if provider_id is None else f"provider {provider_id!r}"
        super().__init__(f"{where}: {rule}")
        self.provider_id = provider_id
        self.path = path
        self.rule = rule


class ProviderFile(msgspec.Struct, forbid_unknown_fields=True):
    version: int
    providers: list[ProviderConfig]


#: The panel's secret-box key as its own file: written before KEK 1 is first destroyed (a KEK
#: rotation, crypto/keks.py), so the client secrets sealed under it stay readable.
SECRET_KEY_FILE = "panel-secrets.key"


def secret_key(kek: bytes) -> bytes:
    return HKDF(hashes.SHA256(), 32, salt=None, info=SECRET_INFO).derive(kek)


def keep_secret_key(keys_dir: Path) -> None:
    """Write the secret-box key (HKDF of KEK 1) to its own file, if it is not there yet (nor
    in a module: ``keys init kek --hsm`` made it there)."""
    kept = keys_dir / SECRET_KEY_FILE
    if kept.is_file() or (keys_dir / PANEL_IN_MODULE).is_file():
        return
    temporary = kept.with_name(kept.name + ".tmp")
    temporary.write_bytes(secret_key((keys_dir / "kek.key").read_bytes()))
    temporary.chmod(0o600)
    temporary.rename(kept)
    sync_directory(keys_dir)


class SecretBox:
    """Seals and opens client secrets under a key derived from the key-encryption key."""

    _aead: Aead

    def __init__(self, kek: bytes) -> None:
        self._aead = AESGCM(secret_key(kek))

    @classmethod
    def of_keys(cls, keys_dir: Path) -> SecretBox:
        """The box of a keys directory: its key in a module (``panel-secrets.pkcs11``), its own
        key file once KEK 1 may be destroyed (``keep_secret_key``), else derived from
        ``kek.key`` (made if missing)."""
        box = cls.__new__(cls)
        kept = keys_dir / SECRET_KEY_FILE
        if (keys_dir / PANEL_IN_MODULE).is_file():
            box._aead = open_key(read_reference(keys_dir / PANEL_IN_MODULE), AES256)
        elif kept.is_file():
            box._aead = AESGCM(kept.read_bytes())
        else:
            box._aead = AESGCM(secret_key(read_or_create_secret(keys_dir / "kek.key")))
        return box

    def __repr__(self) -> str:
        return "SecretBox(<hidden>)"

    def seal(self, provider_id: str, secret: str) -> bytes:
        iv = secrets.token_bytes(12)
        sealed = self._aead.encrypt(iv, secret.encode("utf-8"), provider_id.encode("utf-8"))
        return _SEALED_VERSION + iv + sealed

    def open(self, provider_id: str, sealed: bytes) -> str:
        if not sealed.startswith(_SEALED_VERSION) or len(sealed) < 1 + 12 + 16:
            raise ProviderStoreError("the sealed secret is malformed", provider_id=provider_id)
        try:
            plain = self._aead.decrypt(sealed[1:13], sealed[13:], provider_id.encode("utf-8"))
        except InvalidTag:
            raise ProviderStoreError(
                "its client secret does not open with this key-encryption key (every host"
                " needs the same keys/ directory)",
                provider_id=provider_id,
            ) from None
        return plain.decode("utf-8")


def to_row(config: ProviderConfig, box: SecretBox, now: float) -> ProviderRow:
    """The row of a configuration: the secret sealed apart, the rest as JSON."""
    sealed = None
    if isinstance(config, OidcCodeConfig):
        sealed = box.seal(config.id, config.client_secret)
        config = msgspec.structs.replace(config, client_secret="")
    encoded = msgspec.json.encode(config)
    return ProviderRow(config.id, config.tenant_id, config.organization_id, encoded, sealed, now)


def from_row(row: ProviderRow, box: SecretBox) -> ProviderConfig:
    """The configuration of a row, with its secret opened."""
    try:
        config: ProviderConfig = msgspec.json.decode(row.config, type=ProviderConfig)
    except msgspec.MsgspecError as exc:
        raise ProviderStoreError(f"invalid content: {exc}", provider_id=row.provider_id) from None
    if isinstance(config, OidcCodeConfig):
        if row.secret is None:
            raise ProviderStoreError("no client secret stored", provider_id=row.provider_id)
        config = msgspec.structs.replace(config, client_secret=box.open(config.id, row.secret))
    return config


def read_provider_file(path: Path) -> list[ProviderConfig]:
    """The providers of a provider store file of an earlier version ([] when it is absent);
    a file the group or others may read is logged at WARNING."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        return []
    if mode & 0o077:
        log.warning(
            "sso.provider_store_readable_by_others",
            extra={"path": str(path), "mode": f"{mode:o}", "fix": "chmod 0600"},
        )
    try:
        content = msgspec.json.decode(path.read_bytes(), type=ProviderFile)
    except OSError as exc:
        raise ProviderStoreError(f"cannot be read ({exc.strerror})", path=path) from None
    except msgspec.MsgspecError as exc:
        raise ProviderStoreError(f"invalid content: {exc}", path=path) from None
    if content.version != FORMAT_VERSION:
        raise ProviderStoreError(f"version {content.version} is not {FORMAT_VERSION}", path=path)
    return content.providers
