"""ASGI entry point for servers: settings come from ``RECORDSEAL_*`` variables."""

from recordseal.web.app import create_app
from recordseal.web.gc_tuning import tune_collector
from recordseal.web.orphan_guard import exit_with_supervisor

exit_with_supervisor()
tune_collector()
app = create_app()
