"""What the passkey routes (``web/panel/passkeys.py``) are configured with: the relying party
and its origins (:class:`PasskeyConfig`, from the settings only), and registration links."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

from litestar.datastructures import State

from recordseal.invocation import shown_path, this_command
from recordseal.panel.passkey_store import PasskeyStore
from recordseal.panel.sessions import Role
from recordseal.settings import Settings
from recordseal.web.state import typed_state


@dataclass(frozen=True)
class PasskeyConfig:
    """The relying party id and the browser origins accepted for it, as the settings say
    (``RECORDSEAL_PANEL_RP_ID``, ``RECORDSEAL_PANEL_ORIGINS``), and the command that prints
    the first registration link (:func:`first_link_command`): build it with :meth:`of`."""

    rp_id: str
    origins: frozenset[str]
    link_command: str = "recordseal panel link"

    @classmethod
    def of(cls, settings: Settings) -> PasskeyConfig:
        origins = frozenset(origin.rstrip("/") for origin in settings.panel_origins)
        return cls(settings.panel_rp_id, origins, first_link_command(settings))

    def accepts(self, origin: str) -> bool:
        if self.origins:
            return origin in self.origins
        parts = urlsplit(origin)
        if parts.hostname != self.rp_id:
            return False
        return parts.scheme == "https" or (parts.scheme == "http" and self.rp_id == "localhost")


def provide_passkey_config(state: State) -> PasskeyConfig:
    """Dependency ``passkey_config``: ``app.state.passkey_config``, set in the lifespan."""
    return typed_state(state, "passkey_config", PasskeyConfig)


def first_link_command(settings: Settings) -> str:
    """What an operator types, where the service runs, for a registration link: this
    install's ``recordseal`` and data directory (``.venv/bin/recordseal panel link --data-dir
    ./data`` after ``make run``); on PostgreSQL the database URL by its variable, never its
    value (it may hold a password)."""
    command = f"{this_command()} panel link --data-dir {shown_path(settings.data_dir)}"
    if settings.database_url:
        command += ' --database-url "$RECORDSEAL_DATABASE_URL"'
    return command


#: Addresses a service listens on that are no name a browser can use for WebAuthn.
_UNNAMED_HOSTS = ("127.", "::1", "0.0.0.0", "::", "[::1]", "[::]", "localhost")


def link_base_url(settings: Settings) -> str:
    """Where browsers reach the panel, for a registration link: the first of
    ``RECORDSEAL_PANEL_ORIGINS``; else the configured host and port, with a loopback or
    wildcard host (127.0.0.1, ::1, 0.0.0.0, ::) named by the relying party id (a passkey only
    works on its relying party's host), over http for ``localhost`` and https otherwise."""
    if settings.panel_origins:
        return settings.panel_origins[0].rstrip("/")
    name = settings.host
    if name == "" or name.startswith(_UNNAMED_HOSTS):
        name = settings.panel_rp_id
    scheme = "http" if name == "localhost" else "https"
    default_port = 80 if scheme == "http" else 443
    port = settings.port
    return f"{scheme}://{name}" + ("" if port == default_port else f":{port}")


async def create_registration_link(store: PasskeyStore, role: Role, base_url: str) -> str:
    """A one-time registration URL (15 minutes, single use) granting ``role``, on the panel at
    ``base_url`` (:func:`link_base_url` of the settings)."""
    token = await store.create_link(role)
    return f"{base_url.rstrip('/')}/login/register?token={token}"
