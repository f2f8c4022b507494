"""What ``recordseal serve`` checks before any worker starts, so that a start that cannot
work stops at once with one line saying why (docs/configuration.md): the commitment core,
the port, and every file a setting names, read as the workers will read them."""

from __future__ import annotations

import errno
import socket
import ssl
from dataclasses import dataclass

from recordseal import core
from recordseal.core import backend
from recordseal.fleet.manifest import ManifestError, load_manifest
from recordseal.panel.bootstrap import BootstrapError, store_from_seed
from recordseal.settings import Settings
from recordseal.storage.backends import open_store

#: Exit codes: a setting breaks its rule, or the start cannot go on for another reason.
BAD_SETTING, CANNOT_START = 2, 1


@dataclass(frozen=True)
class Refusal:
    message: str
    exit_code: int


def core_description() -> str:
    if core.BACKEND == "native":
        return "native (rust-core, recordseal._native)"
    if backend.REQUESTED == "reference":
        return "reference (pure Python, chosen by RECORDSEAL_CORE=reference)"
    return "reference (pure Python; the native extension is not built)"


def core_refusal(settings: Settings) -> Refusal | None:
    """The core is chosen when the process starts, from ``RECORDSEAL_CORE`` alone
    (``core/backend.py``): a configuration file's ``core`` comes too late to be obeyed, so it
    must say what the variable said. Without the extension, the reference serves only when
    chosen or allowed."""
    if settings.core != backend.REQUESTED:
        return Refusal(
            f"the configuration file's core = {settings.core!r} is not the core this process"
            " runs: the core is chosen when a process starts, from the variable alone; set"
            f" RECORDSEAL_CORE={settings.core} instead",
            BAD_SETTING,
        )
    fell_back = core.BACKEND != "native" and backend.REQUESTED is None
    if fell_back and not settings.allow_reference_core:
        return Refusal(
            "the native commitment core is not built, and the pure-Python reference is many"
            " times slower: build it (make build), or set RECORDSEAL_CORE=reference (or"
            " RECORDSEAL_ALLOW_REFERENCE_CORE=true) to serve with the reference",
            CANNOT_START,
        )
    return None


def preflight(settings: Settings) -> Refusal | None:
    """Why ``serve`` must not start with ``settings``, or None."""
    refusal = core_refusal(settings)
    if refusal is not None:
        return refusal
    open_store(settings)  # a database URL of another kind raises BackendError (exit 2)
    refusal = port_refusal(settings.host, settings.port)
    if refusal is not None:
        return refusal
    if settings.panel_sso_ca_file is not None:
        try:
            ssl.create_default_context(cafile=str(settings.panel_sso_ca_file))
        except (OSError, ssl.SSLError) as error:
            reason = getattr(error, "strerror", None) or "no PEM certificate in it"
            message = f"RECORDSEAL_PANEL_SSO_CA_FILE must name a PEM file of CAs ({reason})"
            return Refusal(message, BAD_SETTING)
    try:  # read as the workers will read them
        if settings.fleet_manifest is not None:
            load_manifest(settings.fleet_manifest)
        store_from_seed(settings.panel_tenant_seed)
    except ManifestError as error:
        return Refusal(f"RECORDSEAL_PANEL_FLEET_MANIFEST: {error}", BAD_SETTING)
    except BootstrapError as error:
        return Refusal(f"RECORDSEAL_PANEL_TENANT_SEED: {error}", BAD_SETTING)
    return None


def port_refusal(host: str, port: int) -> Refusal | None:
    """A listener already on (host, port) refuses the start: workers with SO_REUSEPORT
    would share the port with it, and requests would alternate between two services."""
    try:
        addresses = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as error:
        message = f"RECORDSEAL_HOST must be an address of this host ({error.strerror})"
        return Refusal(message, BAD_SETTING)
    family, kind, protocol, _, address = addresses[0]
    with socket.socket(family, kind, protocol) as probe:
        # Not SO_REUSEPORT: binding then fails while any socket listens there. SO_REUSEADDR
        # lets a restart bind over the previous run's connections in TIME_WAIT.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as error:
            if error.errno == errno.EADDRINUSE:
                message = f"port {port} on {host} is in use (is another recordseal serving?)"
                return Refusal(message, CANNOT_START)
            reason = error.strerror
            message = f"RECORDSEAL_HOST, RECORDSEAL_PORT: cannot listen on {host}:{port} ({reason})"
            return Refusal(message, BAD_SETTING)
    return None
