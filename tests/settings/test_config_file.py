"""Settings from a TOML file (``--config``, ``RECORDSEAL_CONFIG``): every setting, overridden by
variables and options, unknown keys refused naming the closest one; ``config show`` prints
what is in force with its source and no password; and the misspelt-variable warning comes from
every command."""

from __future__ import annotations

import ipaddress
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from recordseal.settings import Rate, SettingsError, from_env, resolve
from recordseal.settings.environment import fields
from recordseal.tlog import CosignatureSigner
from tests.servers import free_port, kill_service, start_service
from tests.tlog.tsa_support import make_authority

CLI = [sys.executable, "-m", "recordseal.cli"]


MODULE_KEY = (
    "pkcs11:token=rs;object={}?module-path=/usr/lib/softhsm/libsofthsm2.so&pin-source=file:/run/pin"
)


def every_setting(tmp_path: Path) -> tuple[str, dict[str, object]]:
    """A file that sets every setting to a value other than its default, and those values."""
    vkey = CosignatureSigner.from_seed("w.example", bytes(32)).verifier().vkey
    roots = (make_authority(tmp_path / "tsa").directory / "ca.pem").read_text()
    text = f"""
data_dir = "/srv/recordseal"
database_url = "postgresql://rs:hunter2@db.example/rs"
journal = "/srv/journal"
header_key = "{MODULE_KEY.format("header")}"
log_key = "{MODULE_KEY.format("log")}"
kek = "{MODULE_KEY.format("kek")}"
host = "0.0.0.0"
port = 9100
max_body_bytes = 2048
token_cache_seconds = 0.5
idempotency_retention_hours = 48
origin = "records.example"
seal_interval = 2.5
witnesses = [{{ name = "w.example", url = "https://w.example", vkey = "{vkey}" }}]
timestamp_authorities = [{{ name = "tsa", url = "https://tsa.example", roots_pem = '''{roots}''' }}]
witness_quorum = 2
max_wait_seconds = 10
max_bundle_bytes = 4096
panel_fleet_manifest = "/etc/recordseal/fleets.toml"
fleet_manifest_reload_interval = 0
transparency_dir = "/srv/transparency"
transparency_interval = 0
rate_limit_failed_tokens = "5/30"
rate_limit_login = "off"
rate_limit_sso = "9/60"
panel_tenant_seed = "/etc/recordseal/seed.json"
panel_rp_id = "panel.example"
panel_origins = ["https://panel.example"]
panel_sso_operator_groups = "ops, admins"
panel_provider_store_path = "/etc/recordseal/providers.json"
panel_sso_outbound_allow = ["10.0.0.0/8"]
panel_sso_ca_file = "/etc/recordseal/ca.pem"
log_format = "json"
log_level = "debug"
access_log = false
allow_reference_core = true
core = "reference"
"""
    expected: dict[str, object] = {
        "data_dir": Path("/srv/recordseal"),
        "database_url": "postgresql://rs:hunter2@db.example/rs",
        "journal": "/srv/journal",
        "header_key": MODULE_KEY.format("header"),
        "log_key": MODULE_KEY.format("log"),
        "kek": MODULE_KEY.format("kek"),
        "host": "0.0.0.0",
        "port": 9100,
        "max_body_bytes": 2048,
        "token_cache_seconds": 0.5,
        "idempotency_retention_hours": 48.0,
        "origin": "records.example",
        "seal_interval": 2.5,
        "witness_quorum": 2,
        "max_wait_seconds": 10.0,
        "max_bundle_bytes": 4096,
        "fleet_manifest": Path("/etc/recordseal/fleets.toml"),
        "manifest_reload_interval": 0.0,
        "transparency_dir": Path("/srv/transparency"),
        "transparency_interval": 0.0,
        "rate_limit_failed_tokens": Rate(5, 30),
        "rate_limit_login": None,
        "rate_limit_sso": Rate(9, 60),
        "panel_tenant_seed": Path("/etc/recordseal/seed.json"),
        "panel_rp_id": "panel.example",
        "panel_origins": ("https://panel.example",),
        "panel_sso_operator_groups": ("ops", "admins"),
        "panel_provider_store_path": Path("/etc/recordseal/providers.json"),
        "panel_sso_outbound_allow": (ipaddress.ip_network("10.0.0.0/8"),),
        "panel_sso_ca_file": Path("/etc/recordseal/ca.pem"),
        "log_format": "json",
        "log_level": "debug",
        "access_log": False,
        "allow_reference_core": True,
        "core": "reference",
    }
    return text, expected


def test_a_file_sets_every_setting(tmp_path: Path) -> None:
    text, expected = every_setting(tmp_path)
    config = tmp_path / "recordseal.toml"
    config.write_text(text)
    resolved = resolve({"RECORDSEAL_CONFIG": str(config)})
    settings = resolved.settings
    assert {key.split("=")[0].strip() for key in text.strip().splitlines() if " = " in key} == {
        field.key for field in fields()
    }  # the file above names every setting
    for name, value in expected.items():
        assert getattr(settings, name) == value, name
    assert [w.name for w in settings.witnesses] == ["w.example"]
    assert [a.url for a in settings.timestamp_authorities] == ["https://tsa.example"]
    assert set(resolved.sources.values()) == {"file"} and resolved.config == config


def test_variables_override_the_file_and_options_override_both(tmp_path: Path) -> None:
    config = tmp_path / "recordseal.toml"
    config.write_text('port = 9100\nhost = "0.0.0.0"\norigin = "file.example"\n')
    environ = {"RECORDSEAL_CONFIG": str(config), "RECORDSEAL_PORT": "9200",
               "RECORDSEAL_ORIGIN": "env.example"}  # fmt: skip
    resolved = resolve(environ, port=9300)
    assert (resolved.settings.port, resolved.settings.origin) == (9300, "env.example")
    assert resolved.settings.host == "0.0.0.0"
    assert resolved.sources["port"] == "command line"
    assert resolved.sources["origin"] == "environment"
    assert resolved.sources["host"] == "file" and resolved.sources["log_level"] == "default"


REFUSED = [
    ("prot = 1\n", "key 'prot' must be the name of a setting (did you mean 'port'?)"),
    ("fleet_manifest = 'x'\n", "did you mean 'panel_fleet_manifest'?"),
    ("port = 70000\n", "port must be an integer >= 1 and <= 65535"),
    ("port = '12ab'\n", "port must be an integer"),
    ("access_log = 'maybe'\n", "access_log must be true or false"),
    ("rate_limit_login = 5\n", "rate_limit_login must be N/SECONDS"),
    ("data_dir = 3\n", "data_dir must be a file system path"),
    ("panel_sso_outbound_allow = ['nonsense']\n", "CIDR"),
    ("witnesses = [{ name = 'w', url = 'ftp://w', vkey = 'x' }]\n", "witnesses must be"),
    ("database_url = 'mysql://u:secret@db/x'\n", "database_url must be a postgresql://"),
    ("port = \n", "must be TOML"),
]


@pytest.mark.parametrize(("text", "message"), REFUSED)
def test_a_bad_file_is_refused_naming_the_file_and_key(
    tmp_path: Path, text: str, message: str
) -> None:
    config = tmp_path / "recordseal.toml"
    config.write_text(text)
    with pytest.raises(SettingsError) as refused:
        from_env({"RECORDSEAL_CONFIG": str(config)})
    assert str(config) in str(refused.value) and message in str(refused.value)
    assert "secret" not in str(refused.value) and "\n" not in str(refused.value)


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=r"missing\.toml must be readable"):
        from_env({"RECORDSEAL_CONFIG": str(tmp_path / "missing.toml")})


def run(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("RECORDSEAL_")}
    return subprocess.run(
        [*CLI, *args], env={**clean, **env}, cwd=cwd, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def test_config_show_names_each_source_and_redacts_passwords(tmp_path: Path) -> None:
    config = tmp_path / "recordseal.toml"
    config.write_text(
        'port = 9100\nhost = "0.0.0.0"\n'
        'journal = "postgresql://j:journal-secret@other.example/j?password=query-secret"\n'
    )
    env = {"RECORDSEAL_DATABASE_URL": "postgresql://rs:db-secret@db.example:5432/rs",
           "RECORDSEAL_PORT": "9200"}  # fmt: skip
    done = run("config", "show", "--config", "recordseal.toml", "--json", "--host", "::1",
               env=env, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "secret" not in done.stdout
    shown = json.loads(done.stdout)
    assert shown["config_file"] == str(config)
    by_key = {entry["key"]: entry for entry in shown["settings"]}
    assert len(by_key) == len(fields())
    assert by_key["host"] == {"key": "host", "variable": "RECORDSEAL_HOST", "value": "::1",
                              "source": "command line"}  # fmt: skip
    assert (by_key["port"]["value"], by_key["port"]["source"]) == (9200, "environment")
    assert by_key["database_url"]["value"] == "postgresql://rs:REDACTED@db.example:5432/rs"
    assert by_key["journal"] == {
        "key": "journal", "variable": "RECORDSEAL_JOURNAL", "source": "file",
        "value": "postgresql://j:REDACTED@other.example/j?password=REDACTED",
    }  # fmt: skip
    assert by_key["log_level"] == {"key": "log_level", "variable": "RECORDSEAL_LOG_LEVEL",
                                   "value": "info", "source": "default"}  # fmt: skip
    text = run("config", "show", env={**env, "RECORDSEAL_CONFIG": str(config)}, cwd=tmp_path)
    assert text.returncode == 0 and "secret" not in text.stdout
    assert "port = 9200  # environment" in text.stdout.splitlines()
    assert 'host = "0.0.0.0"  # file' in text.stdout.splitlines()


COMMANDS = [
    ["config", "show"],
    ["doctor", "--data-dir", "data"],
    ["migrate", "--status", "--data-dir", "data"],
    ["token", "list", "--data-dir", "data"],
    ["verify", "missing-bundle.json"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_warns_of_a_misspelt_variable(tmp_path: Path, command: list[str]) -> None:
    done = run(*command, env={"RECORDSEAL_DATA_DRI": "x"}, cwd=tmp_path)
    warning = (
        "recordseal: warning: RECORDSEAL_DATA_DRI is not a setting and is ignored"
        " (did you mean RECORDSEAL_DATA_DIR?)"
    )
    assert warning in done.stderr.splitlines(), done.stderr


def test_serve_refuses_a_bad_file_before_anything_listens(tmp_path: Path) -> None:
    (tmp_path / "recordseal.toml").write_text("seal_intervall = 2\n")
    port = free_port()
    done = run("serve", "--data-dir", "data", "--port", str(port),
               env={"RECORDSEAL_CONFIG": "recordseal.toml"}, cwd=tmp_path)  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "recordseal: recordseal.toml: key 'seal_intervall' must be the name of a setting"
        " (did you mean 'seal_interval'?)"
    ]
    assert not (tmp_path / "data").exists()


def test_serve_and_its_workers_run_with_the_file(tmp_path: Path) -> None:
    """The workers read the file too: its max_bundle_bytes limits /v1/verify (413 above it),
    and a variable overrides the file's access_log."""
    config = tmp_path / "recordseal.toml"
    config.write_text("max_bundle_bytes = 2048\naccess_log = true\nlog_format = 'json'\n")
    port = free_port()
    server = start_service(tmp_path, port, workers=2, args=["--config", str(config)],
                           env={"RECORDSEAL_ACCESS_LOG": "off"})  # fmt: skip
    try:
        url = f"http://127.0.0.1:{port}/v1/verify"
        headers = {"Content-Type": "application/json"}
        too_big = httpx.post(url, content=b" " * 3000 + b"{}", headers=headers, timeout=10)
        assert too_big.status_code == 413, too_big.text
        small = httpx.post(url, content=b"{}", headers=headers, timeout=10)
        assert small.status_code == 200, small.text
    finally:
        kill_service(server)
    log = (tmp_path / f"server-{port}.log").read_text()
    assert '"event": "serve.listening"' in log or '"serve.listening"' in log  # json, from file
    assert "/v1/verify" not in log  # no access log: the variable won over the file
