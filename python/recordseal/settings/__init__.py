"""The service's settings: one typed object, read from ``RECORDSEAL_*`` variables in one
place and checked before anything listens (docs/configuration.md)."""

from recordseal.settings.environment import SettingsError, from_env, unknown_variables
from recordseal.settings.model import DEFAULT_DATA_DIR, Settings
from recordseal.settings.values import AuthoritySetting, Rate, WitnessSetting

__all__ = [
    "DEFAULT_DATA_DIR",
    "AuthoritySetting",
    "Rate",
    "Settings",
    "SettingsError",
    "WitnessSetting",
    "from_env",
    "unknown_variables",
]
