"""Every setting of the service: its type, default, variable and one line of help.

To add a setting, add one field here: ``name: Annotated[type, setting("...")] = default``; its
variable is ``RECORDSEAL_<NAME>`` (``setting(..., variable=...)`` names another), its text is
parsed by its type (``environment.py``), and ``docs/configuration.md`` lists it once
regenerated (``python -m recordseal.settings > docs/configuration.md``; a test compares).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from recordseal.settings.values import AuthoritySetting, IPNetwork, Rate, WitnessSetting

DEFAULT_DATA_DIR = Path("data")


def setting(
    text: str,
    *,
    variable: str | None = None,
    rule: str | None = None,
    secret: bool = False,
    **limits: Any,
) -> Meta:
    """A field's one line of help; ``variable`` when it is not ``RECORDSEAL_<NAME>``, ``rule``
    when its type does not say it all, ``secret`` when its value may hold a password (a URL's:
    ``config show`` redacts it), ``limits`` as msgspec's (``ge``, ``gt``, ``le``)."""
    pairs = (("variable", variable), ("rule", rule), ("secret", secret))
    extra = {key: value for key, value in pairs if value}
    return Meta(description=text, extra=extra, **limits)


Seconds = Annotated[float, Meta(ge=0)]


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Where the service keeps its state, how it listens, whom it asks to vouch for its logs,
    and the panel's sign-in. Read once, from ``RECORDSEAL_*`` variables (``from_env``)."""

    data_dir: Annotated[
        Path,
        setting("state directory: keys, audit log, and the SQLite database when no URL is set"),
    ] = DEFAULT_DATA_DIR
    database_url: Annotated[
        str | None,
        setting(
            "PostgreSQL database of the records (SQLite in the data directory when unset)",
            rule="a postgresql:// or postgres:// URL",
            secret=True,
            pattern="^postgres(ql)?://",
        ),
    ] = None
    journal: Annotated[
        str | None,
        setting(
            "the continuity journal, which a restore of the database never puts back"
            " (docs/continuity.md): a directory (default `journal` in the data directory), or"
            " the postgresql:// URL of a database on another server than the store's",
            rule="a directory, or a postgresql:// or postgres:// URL",
            secret=True,
        ),
    ] = None
    header_key: Annotated[
        str | None,
        setting(
            "the header-signing key in a hardware module: its RFC 7512 URI, taken as the first"
            " header key when the store has none (docs/operations.md, Keys in a hardware"
            " module); unset: a key file in the data directory",
            rule="a pkcs11: URI with object, module-path and pin-source",
            pattern="^pkcs11:",
        ),
    ] = None
    log_key: Annotated[
        str | None,
        setting(
            "the log (checkpoint) key in a hardware module, as header_key; taken as the first"
            " log key when the keys directory has none",
            rule="a pkcs11: URI with object, module-path and pin-source",
            pattern="^pkcs11:",
        ),
    ] = None
    kek: Annotated[
        str | None,
        setting(
            "the key-encryption key in a hardware module, as header_key; made with"
            " `recordseal keys init kek --hsm URI`, which also makes its subject index and"
            " panel secret keys there",
            rule="a pkcs11: URI with object, module-path and pin-source",
            pattern="^pkcs11:",
        ),
    ] = None
    host: Annotated[str, setting("address to listen on", rule="an IP address or host name")] = (
        "127.0.0.1"
    )
    port: Annotated[int, setting("port to listen on", ge=1, le=65535)] = 8000
    max_body_bytes: Annotated[
        int,
        setting(
            "largest request body accepted, in bytes (a 256 KiB payload and its envelope)", ge=1024
        ),
    ] = 512 * 1024
    token_cache_seconds: Annotated[
        float,
        setting(
            "seconds a verified API token is trusted before the store is asked again: a token"
            " revoked through any process is refused by every process within this time",
            ge=0,
        ),
    ] = 1.0
    idempotency_retention_hours: Annotated[
        float, setting("hours an Idempotency-Key is remembered", gt=0)
    ] = 24.0
    origin: Annotated[
        str,
        setting(
            "names the service in log origins `<origin>/<tenant>/<fleet>`",
            rule="a host-like name: letters, digits, '.', '-', ':'",
            pattern="^[A-Za-z0-9][A-Za-z0-9.:-]{0,252}$",
        ),
    ] = "recordseal.local"
    seal_interval: Annotated[
        float, setting("seconds between sealing rounds (0 turns the sealer off)", ge=0)
    ] = 1.0
    witnesses: Annotated[
        tuple[WitnessSetting, ...],
        setting(
            "witnesses asked to cosign each checkpoint (`logs`: every tenant log, or only the"
            " deployment's aggregate log)",
            rule='a JSON list of {"name", "url", "vkey", "logs" ("tenant" or "aggregate",'
            ' default "tenant")} objects (vkey: one vkey, Ed25519 or ML-DSA-44, or a list of'
            " the witness's vkeys)",
        ),
    ] = ()
    timestamp_authorities: Annotated[
        tuple[AuthoritySetting, ...],
        setting(
            "RFC 3161 authorities given each checkpoint's root",
            rule='a JSON list of {"name", "url", "roots_pem"} objects',
        ),
    ] = ()
    witness_quorum: Annotated[
        int,
        setting(
            "witnesses and authorities that must vouch for a checkpoint before bundles count it"
            " witnessed (and keys export writes into the trust store)",
            ge=1,
        ),
    ] = 1
    max_wait_seconds: Annotated[
        float, setting("longest ?wait=<seconds> a disclosure or a proof refresh may ask for", ge=0)
    ] = 60.0
    max_bundle_bytes: Annotated[
        int,
        setting(
            "largest bundle /v1/verify, /verify-record and /v1/proofs:refresh take, in bytes",
            ge=1024,
        ),
    ] = 16 * 1024 * 1024
    fleet_manifest: Annotated[
        Path | None,
        setting(
            "the proxy fleet manifest, TOML (docs/fleets.md)",
            variable="RECORDSEAL_PANEL_FLEET_MANIFEST",
        ),
    ] = None
    manifest_reload_interval: Annotated[
        float,
        setting(
            "seconds between checks of the manifest for a reload (0: never)",
            variable="RECORDSEAL_FLEET_MANIFEST_RELOAD_INTERVAL",
            ge=0,
        ),
    ] = 5.0
    transparency_dir: Annotated[
        Path | None, setting("root of the daily transparency log files (`<data dir>/transparency`)")
    ] = None
    transparency_interval: Annotated[
        float, setting("seconds between checks for yesterday's transparency files (0: off)", ge=0)
    ] = 60.0
    rate_limit_failed_tokens: Annotated[
        Rate | None, setting("failed bearer-token attempts per client address (docs/security.md)")
    ] = Rate(20, 60)
    rate_limit_login: Annotated[
        Rate | None, setting("passkey ceremony requests per client address")
    ] = Rate(30, 60)
    rate_limit_sso: Annotated[
        Rate | None, setting("sign-on starts and callbacks per client address")
    ] = Rate(30, 60)
    panel_tenant_seed: Annotated[
        Path | None,
        setting("JSON file of the panel's tenants, organizations and fleets (docs/panel.md)"),
    ] = None
    panel_rp_id: Annotated[
        str, setting("WebAuthn relying party id of the panel's passkeys (its host name)")
    ] = "localhost"
    panel_origins: Annotated[
        tuple[str, ...],
        setting(
            "browser origins accepted for passkeys (default: `https://<rp id>`, http for localhost)"
        ),
    ] = ()
    panel_sso_operator_groups: Annotated[
        tuple[str, ...], setting("IdP groups whose members sign in as operators (else viewers)")
    ] = ()
    panel_provider_store_path: Annotated[
        Path | None,
        setting(
            "JSON file of sign-on providers added to the database at start if it never held them"
            " (the provider file of earlier versions; docs/sso.md)"
        ),
    ] = None
    panel_sso_outbound_allow: Annotated[
        tuple[IPNetwork, ...],
        setting("non-public networks (CIDR) the panel may call for sign-on (docs/sso.md)"),
    ] = ()
    panel_sso_ca_file: Annotated[
        Path | None, setting("PEM file of CAs trusted for identity providers' TLS (else certifi)")
    ] = None
    log_format: Annotated[
        str,
        setting(
            "log lines as text (readable) or json (one object a line; docs/operations.md)",
            rule="text or json",
            pattern="^(text|json)$",
        ),
    ] = "text"
    log_level: Annotated[
        str,
        setting(
            "the lowest level logged",
            rule="debug, info, warning or error",
            pattern="^(debug|info|warning|error)$",
        ),
    ] = "info"
    access_log: Annotated[
        bool, setting("one access-log line per request (method, route, status, duration)")
    ] = True
    allow_reference_core: Annotated[
        bool,
        setting("serve with the pure-Python core when the native extension is missing (slower)"),
    ] = False
    core: Annotated[
        str | None,
        setting(
            "the commitment core every command runs: native (rust-core) or reference (pure"
            " Python, many times slower: to compare the two, docs/performance.md); native"
            " refuses to start without the extension. Unset: native, or the reference where"
            " the extension is not built. Read from the variable alone, when a process starts:"
            " a configuration file's core must say the same, or serve refuses to start",
            rule="native or reference",
            pattern="^(native|reference)$",
        ),
    ] = None

    @property
    def database_path(self) -> Path:
        return self.data_dir / "recordseal.sqlite3"

    @property
    def journal_url(self) -> str | None:
        """The journal's database URL, when it is one."""
        if self.journal and self.journal.startswith(("postgresql://", "postgres://")):
            return self.journal
        return None

    @property
    def journal_dir(self) -> Path:
        """The journal's directory (meaningless when it is a database: ``journal_url``)."""
        return Path(self.journal) if self.journal else self.data_dir / "journal"

    @property
    def transparency_root(self) -> Path:
        return self.transparency_dir or self.data_dir / "transparency"
