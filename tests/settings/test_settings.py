"""One typed Settings: every variable parsed by its type and checked by its rule, documented
in docs/configuration.md (generated from it), and a bad value named with its rule."""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from recordseal.settings import Rate, Settings, SettingsError, from_env, unknown_variables
from recordseal.settings.environment import fields
from recordseal.settings.reference import table

ROOT = Path(__file__).resolve().parents[2]


def test_docs_configuration_is_generated_from_the_settings() -> None:
    """Regenerate with ``python -m recordseal.settings > docs/configuration.md``."""
    assert (ROOT / "docs" / "configuration.md").read_text() == table()


def test_operations_md_points_to_the_generated_table_instead_of_restating_settings() -> None:
    """One truth: operations.md once gave RECORDSEAL_ACCESS_LOG as on/off with default `on`
    while the generated table said true or false, default `true`."""
    operations = (ROOT / "docs" / "operations.md").read_text()
    for field in fields():
        assert f"| `{field.variable}` |" not in operations, field.variable
    assert "docs/configuration.md, generated from the code" in operations


def test_every_field_is_a_documented_variable_with_a_rule_and_help() -> None:
    variables = [field.variable for field in fields()]
    assert len(set(variables)) == len(variables) == len(Settings.__struct_fields__)
    documented = (ROOT / "docs" / "configuration.md").read_text()
    for field in fields():
        assert field.variable.startswith("RECORDSEAL_") and field.help and field.rule
        assert f"`{field.variable}`" in documented


def test_no_module_reads_the_environment_but_the_settings() -> None:
    """Settings are read in one place: no other module of the service reads the environment
    but those that hand values to their own workers (serve: the data directory, the
    supervisor's pid, prometheus_client's directory; the witness command: its config). The
    client's commands read theirs in one place too (the service and token they call:
    RECORDSEAL_URL, RECORDSEAL_TOKEN), which are no settings of the service. The core is
    chosen when it is imported, before any setting is read: core/backend.py reads
    RECORDSEAL_CORE itself (the settings declare it, for the documentation and ``config
    show``), and ``recordseal bench`` hands it to the workers and services it times."""
    allowed = {"settings/environment.py", "settings/layers.py", "web/orphan_guard.py", "cli.py",
               "ops/serve.py", "serve.py", "metrics.py", "witness/app.py", "witness/cli.py",
               "client/connection.py", "core/backend.py", "ops/bench/runner.py",
               "ops/bench/service.py"}  # fmt: skip
    package = ROOT / "python" / "recordseal"
    for path in package.rglob("*.py"):
        name = path.relative_to(package).as_posix()
        if name not in allowed:
            text = path.read_text()
            assert "os.environ" not in text and "getenv" not in text, name


def test_values_are_parsed_by_their_type() -> None:
    settings = from_env(
        {
            "RECORDSEAL_PORT": " 9000 ",
            "RECORDSEAL_SEAL_INTERVAL": "0.5",
            "RECORDSEAL_RATE_LIMIT_LOGIN": "off",
            "RECORDSEAL_RATE_LIMIT_SSO": "7/10",
            "RECORDSEAL_PANEL_ORIGINS": "https://a.example, https://b.example",
            "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": "10.0.0.0/8",
            "RECORDSEAL_ALLOW_REFERENCE_CORE": "yes",
            "RECORDSEAL_DATA_DIR": "/srv/rs",
            "RECORDSEAL_HOST": "",  # empty counts as unset
        }
    )
    assert (settings.port, settings.seal_interval, settings.host) == (9000, 0.5, "127.0.0.1")
    assert settings.rate_limit_login is None and settings.rate_limit_sso == Rate(7, 10)
    assert settings.panel_origins == ("https://a.example", "https://b.example")
    assert settings.panel_sso_outbound_allow == (ipaddress.ip_network("10.0.0.0/8"),)
    assert settings.allow_reference_core is True and settings.data_dir == Path("/srv/rs")
    assert from_env({"RECORDSEAL_PORT": "9000"}, port=7000).port == 7000  # an option wins


BAD = [
    ("RECORDSEAL_PORT", "abc", "an integer >= 1 and <= 65535"),
    ("RECORDSEAL_PORT", "70000", "an integer >= 1 and <= 65535"),
    ("RECORDSEAL_SEAL_INTERVAL", "-1", "a number >= 0"),
    ("RECORDSEAL_IDEMPOTENCY_RETENTION_HOURS", "0", "a number > 0"),
    ("RECORDSEAL_ALLOW_REFERENCE_CORE", "maybe", "true or false"),
    ("RECORDSEAL_RATE_LIMIT_LOGIN", "5/0", "N/SECONDS"),
    ("RECORDSEAL_DATABASE_URL", "mysql://user:secret@db/x", "postgresql://"),
    ("RECORDSEAL_ORIGIN", "has space", "a host-like name"),
    ("RECORDSEAL_WITNESSES", "[{", "a JSON list"),
    ("RECORDSEAL_WITNESSES", '[{"name": "w", "url": 3, "vkey": "x"}]', "$[0].url"),
    ("RECORDSEAL_WITNESSES", '[{"name": "w", "url": "http://w", "vkey": "x+1+AA"}]', "vkey"),
    ("RECORDSEAL_WITNESSES", '[{"name": "w", "url": "http://w", "vkey": []}]', "empty list"),
    ("RECORDSEAL_WITNESSES", '[{"name": "w", "url": "http://w", "vkey": ["x+1+AA"]}]', "vkey"),
    ("RECORDSEAL_TIMESTAMP_AUTHORITIES", '[{"name": "t", "url": "ftp://t", "roots_pem": ""}]',
     "http:// or https://"),
    ("RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW", "10.0.0.0/8, nonsense", "CIDR"),
]  # fmt: skip


@pytest.mark.parametrize(("variable", "value", "rule"), BAD)
def test_a_bad_value_names_its_variable_and_rule_never_the_value(
    variable: str, value: str, rule: str
) -> None:
    with pytest.raises(SettingsError) as refused:
        from_env({variable: value})
    message = str(refused.value)
    assert message.startswith(f"{variable} must be ") and rule in message
    assert "\n" not in message and "secret" not in message


def test_an_unknown_variable_is_reported_with_the_closest_name() -> None:
    warnings = unknown_variables({"RECORDSEAL_PROT": "1", "RECORDSEAL_PORT": "2", "HOME": "/"})
    assert warnings == [
        "RECORDSEAL_PROT is not a setting and is ignored (did you mean RECORDSEAL_PORT?)"
    ]


def test_a_witness_names_one_key_or_a_list_of_its_keys() -> None:
    """A witness that cosigns with Ed25519 and ML-DSA-44 (``witness serve --algorithm both``)
    is given both keys; one listed twice is refused."""
    from recordseal.tlog import CosignatureSigner, MLDSA44CosignatureSigner

    ed25519 = CosignatureSigner.generate("w.example").vkey
    mldsa = MLDSA44CosignatureSigner.generate("w.example").vkey
    one = f'[{{"name": "w", "url": "http://w", "vkey": "{ed25519}"}}]'
    both = f'[{{"name": "w", "url": "http://w", "vkey": ["{ed25519}", "{mldsa}"]}}]'
    assert from_env({"RECORDSEAL_WITNESSES": one}).witnesses[0].vkeys == (ed25519,)
    assert from_env({"RECORDSEAL_WITNESSES": both}).witnesses[0].vkeys == (ed25519, mldsa)
    twice = f'[{{"name": "w", "url": "http://w", "vkey": ["{mldsa}", "{mldsa}"]}}]'
    with pytest.raises(SettingsError) as refused:
        from_env({"RECORDSEAL_WITNESSES": twice})
    assert "lists one key twice" in str(refused.value)
