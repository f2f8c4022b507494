"""Typed settings, read from the environment in one place."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

DEFAULT_DATA_DIR = Path("data")
_RATE_LIMITS = {
    "rate_limit_failed_tokens": "RECORDSEAL_RATE_LIMIT_FAILED_TOKENS",
    "rate_limit_login": "RECORDSEAL_RATE_LIMIT_LOGIN",
    "rate_limit_sso": "RECORDSEAL_RATE_LIMIT_SSO",
}


@dataclass(frozen=True, slots=True)
class Settings:
    """Where the service keeps its state and how it listens.

    ``data_dir`` holds the key-encryption key and the signing keys, and the SQLite database
    unless ``database_url`` names a PostgreSQL database.
    """

    data_dir: Path = DEFAULT_DATA_DIR
    #: ``postgresql://…`` to keep records in PostgreSQL; unset means SQLite in ``data_dir``.
    database_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    #: Largest accepted request body: a 256 KiB payload plus its envelope.
    max_body_bytes: int = 512 * 1024
    #: How long a verified API token is trusted before the store is asked again.
    token_cache_seconds: float = 5.0
    #: How long an Idempotency-Key is remembered (a retry after that stores a new record).
    idempotency_retention_hours: float = 24.0
    #: Names the service in log origins: ``<origin>/<tenant>/<fleet>``.
    origin: str = "recordseal.local"
    #: Seconds between sealing rounds (0 turns the sealer off, for tests that seal by hand).
    seal_interval: float = 1.0
    #: Witnesses asked to cosign each checkpoint: ``[{"name", "url", "vkey"}]`` as JSON.
    witnesses: str = "[]"
    #: How many of the witnesses and time-stamping authorities must vouch for a checkpoint
    #: before bundles count it as witnessed (and ``keys export`` writes into the trust store).
    witness_quorum: int = 1
    #: The longest ``?wait=<seconds>`` a disclosure or a proof refresh may ask for.
    max_wait_seconds: float = 60.0
    #: The largest bundle ``POST /v1/verify``, ``/verify-record`` and ``POST /v1/proofs:refresh``
    #: take: the largest disclosure of a record within the payload limits, with room for a
    #: coverage window of about 10,000 records (docs/bundle.md, "Verifying online").
    max_bundle_bytes: int = 16 * 1024 * 1024
    #: RFC 3161 time-stamping authorities given each checkpoint's root:
    #: ``[{"name", "url", "roots_pem"}]`` as JSON (``roots_pem``: the trusted root certificates).
    timestamp_authorities: str = "[]"
    #: The proxy fleet manifest (TOML, docs/fleets.md); None: no fleet is bound.
    fleet_manifest: Path | None = None
    #: Seconds between checks of the manifest file for a reload (0: never reload).
    manifest_reload_interval: float = 5.0
    #: Root of the daily transparency log files; None: ``<data_dir>/transparency``.
    transparency_dir: Path | None = None
    #: Seconds between checks whether yesterday's transparency files are written (0: off).
    transparency_interval: float = 60.0
    #: Rate limits per client address, ``N/SECONDS`` or ``off`` (docs/security.md): failed
    #: bearer-token attempts, passkey ceremony requests, sign-on starts and callbacks.
    rate_limit_failed_tokens: str = "20/60"
    rate_limit_login: str = "30/60"
    rate_limit_sso: str = "30/60"
    #: Log lines as ``text`` (readable) or ``json`` (one object a line); docs/operations.md.
    log_format: str = "text"
    #: The lowest level logged: ``debug``, ``info``, ``warning`` or ``error``.
    log_level: str = "info"
    #: One access-log line per request (method, route template, status, duration, tenant).
    access_log: bool = True

    @property
    def database_path(self) -> Path:
        return self.data_dir / "recordseal.sqlite3"

    @property
    def transparency_root(self) -> Path:
        return self.transparency_dir or self.data_dir / "transparency"

    @classmethod
    def from_env(cls, **overrides: object) -> Settings:
        """Settings from ``RECORDSEAL_*`` variables; explicit overrides win."""
        values: dict[str, object] = {}
        if data_dir := os.environ.get("RECORDSEAL_DATA_DIR"):
            values["data_dir"] = Path(data_dir)
        if database_url := os.environ.get("RECORDSEAL_DATABASE_URL"):
            values["database_url"] = database_url
        if host := os.environ.get("RECORDSEAL_HOST"):
            values["host"] = host
        if port := os.environ.get("RECORDSEAL_PORT"):
            values["port"] = int(port)
        if hours := os.environ.get("RECORDSEAL_IDEMPOTENCY_RETENTION_HOURS"):
            values["idempotency_retention_hours"] = float(hours)
        if origin := os.environ.get("RECORDSEAL_ORIGIN"):
            values["origin"] = origin
        if interval := os.environ.get("RECORDSEAL_SEAL_INTERVAL"):
            values["seal_interval"] = float(interval)
        if witnesses := os.environ.get("RECORDSEAL_WITNESSES"):
            values["witnesses"] = witnesses
        if quorum := os.environ.get("RECORDSEAL_WITNESS_QUORUM"):
            values["witness_quorum"] = int(quorum)
        if wait := os.environ.get("RECORDSEAL_MAX_WAIT_SECONDS"):
            values["max_wait_seconds"] = float(wait)
        if bundle_bytes := os.environ.get("RECORDSEAL_MAX_BUNDLE_BYTES"):
            values["max_bundle_bytes"] = int(bundle_bytes)
        if authorities := os.environ.get("RECORDSEAL_TIMESTAMP_AUTHORITIES"):
            values["timestamp_authorities"] = authorities
        if manifest := os.environ.get("RECORDSEAL_PANEL_FLEET_MANIFEST"):
            values["fleet_manifest"] = Path(manifest)
        if reload := os.environ.get("RECORDSEAL_FLEET_MANIFEST_RELOAD_INTERVAL"):
            values["manifest_reload_interval"] = float(reload)
        if transparency := os.environ.get("RECORDSEAL_TRANSPARENCY_DIR"):
            values["transparency_dir"] = Path(transparency)
        if every := os.environ.get("RECORDSEAL_TRANSPARENCY_INTERVAL"):
            values["transparency_interval"] = float(every)
        if log_format := os.environ.get("RECORDSEAL_LOG_FORMAT"):
            values["log_format"] = log_format
        if log_level := os.environ.get("RECORDSEAL_LOG_LEVEL"):
            values["log_level"] = log_level.lower()
        if (access_log := os.environ.get("RECORDSEAL_ACCESS_LOG")) is not None:
            values["access_log"] = access_log.lower() not in ("off", "0", "false", "no")
        for name, variable in _RATE_LIMITS.items():
            if (rate := os.environ.get(variable)) is not None:
                values[name] = rate
        values.update({k: v for k, v in overrides.items() if v is not None})
        for name in ("data_dir", "fleet_manifest", "transparency_dir"):
            if values.get(name) is not None:
                values[name] = Path(str(values[name]))
        return cls(**values)  # type: ignore[arg-type]
