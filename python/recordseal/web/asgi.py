"""ASGI entry point for servers: settings come from ``RECORDSEAL_*`` variables."""

from recordseal.web.app import create_app

app = create_app()
