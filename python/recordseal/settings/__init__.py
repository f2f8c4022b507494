"""The service's settings: one typed object, read from a configuration file and
``RECORDSEAL_*`` variables in one place and checked before anything listens
(docs/configuration.md)."""

from recordseal.settings.environment import SettingsError, unknown_variables
from recordseal.settings.file import CONFIG_VARIABLE
from recordseal.settings.layers import Resolved, from_env, resolve
from recordseal.settings.model import DEFAULT_DATA_DIR, Settings
from recordseal.settings.values import AuthoritySetting, Rate, WitnessSetting

__all__ = [
    "CONFIG_VARIABLE",
    "DEFAULT_DATA_DIR",
    "AuthoritySetting",
    "Rate",
    "Resolved",
    "Settings",
    "SettingsError",
    "WitnessSetting",
    "from_env",
    "resolve",
    "unknown_variables",
]
