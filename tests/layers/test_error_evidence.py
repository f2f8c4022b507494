"""Errors carry their evidence as fields, not only in their message (issue 31, item 2): what
a caller needs to act on (the field, the setting, the path) is an attribute of the error."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from recordseal.cli import main
from recordseal.client.connection import MissingSetting, service_of
from recordseal.datadir import DataDirError, secure
from recordseal.identifiers import IDENTIFIER_RULE
from recordseal.ops.key_rotation import hsm_of
from recordseal.ops.stores import MissingDataDir, data_dir_for
from recordseal.panel.bootstrap import BootstrapError, load_seed
from recordseal.panel.sessions import PayloadError, TenantSession, decode_payload, encode_payload
from recordseal.panel.sso.contract import Principal, PrincipalError
from recordseal.panel.sso.provider_store import ProviderStoreError, SecretBox, read_provider_file
from recordseal.services.key_admin import KeyRefused, parse_instant
from recordseal.settings import Settings


def test_a_principal_refusal_names_its_field_and_rule() -> None:
    with pytest.raises(PrincipalError) as empty:
        Principal("", "acme", "eng")
    assert (empty.value.field, empty.value.rule) == ("subject_id", "is empty")
    assert str(empty.value) == "subject_id is empty"
    with pytest.raises(PrincipalError) as tenantless:
        Principal("a", "", "eng")
    assert (tenantless.value.field, str(tenantless.value)) == ("tenant_id", "tenant_id is required")


def test_a_missing_client_setting_names_which(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("RECORDSEAL_URL", raising=False)
    monkeypatch.delenv("RECORDSEAL_TOKEN", raising=False)
    with pytest.raises(MissingSetting) as no_url:
        service_of(argparse.Namespace(url=None, token_file=None))
    assert no_url.value.setting == "url"
    empty = tmp_path / "token"
    empty.write_text("\n")
    with pytest.raises(MissingSetting) as no_token:
        service_of(argparse.Namespace(url="http://127.0.0.1:1", token_file=empty))
    assert no_token.value.setting == "token"
    assert str(no_token.value) == f"the token file {empty} is empty"


def test_a_missing_data_directory_is_named(tmp_path: Path) -> None:
    missing = tmp_path / "typo"
    with pytest.raises(MissingDataDir) as refused:
        data_dir_for(Settings(data_dir=missing), create=False)
    assert refused.value.path == missing
    assert str(refused.value).startswith(f"data directory {missing} does not exist")
    assert not missing.exists()


def test_a_refused_session_payload_names_its_field_rule_and_value() -> None:
    with pytest.raises(PayloadError) as number:
        decode_payload("alice|01")
    assert (number.value.field, number.value.shown) == ("exp", "'01'")
    assert number.value.rule == "is not a non-negative integer in ASCII digits"
    assert str(number.value) == "exp '01' is not a non-negative integer in ASCII digits"
    with pytest.raises(PayloadError) as empty:
        decode_payload("|100")
    assert (empty.value.field, empty.value.shown) == ("user_id", None)
    assert str(empty.value) == "user_id is empty; it must be 1 to 256 characters"
    with pytest.raises(PayloadError) as tenant:
        decode_payload("s|ac me|prod|100")
    assert (tenant.value.field, tenant.value.shown) == ("tenant_id", "'ac me'")
    assert str(tenant.value) == f"tenant_id 'ac me' is not an identifier: {IDENTIFIER_RULE}"
    with pytest.raises(PayloadError) as shape:
        decode_payload("a|b|100")
    assert (shape.value.field, shape.value.shown) == ("fields", "3")
    assert str(shape.value) == "a payload has 2 or 4 fields before its tags, not 3"
    with pytest.raises(PayloadError) as tag:
        decode_payload("alice|100|g=1|g=2")
    assert (tag.value.field, tag.value.rule) == ("g=", "appears twice")
    assert str(tag.value) == "the g= tag appears twice"
    with pytest.raises(PayloadError) as role:
        encode_payload(TenantSession("s", "acme", "prod", 100, "admin"))  # type: ignore[arg-type]
    assert (role.value.field, role.value.shown) == ("role", "'admin'")
    assert str(role.value) == "role 'admin' is not one of operator, viewer"


def test_a_refused_key_command_names_what_and_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(KeyRefused) as instant:
        parse_instant("2024-01-01T00:00:00")
    assert (instant.value.refused, instant.value.shown) == (
        "--compromised-at",
        "'2024-01-01T00:00:00'",
    )
    assert instant.value.rule == "has no offset: write Z or +hh:mm"
    assert str(instant.value) == "'2024-01-01T00:00:00' has no offset: write Z or +hh:mm"
    with pytest.raises(KeyRefused) as uri:
        hsm_of(argparse.Namespace(hsm="file:/tmp/key"))
    assert uri.value.refused == "--hsm"
    assert uri.value.rule == "a module key is a pkcs11: URI (RFC 7512)"
    assert str(uri.value) == "--hsm: a module key is a pkcs11: URI (RFC 7512)"
    # The command's one line is the message, as before.
    argv = ["keys", "rotate", "kek", "--batch", "0", "--data-dir", str(tmp_path)]
    assert main(argv) == 2
    assert capsys.readouterr().err.endswith("recordseal: --batch must be 1 or more\n")


def test_a_refused_tenant_seed_names_the_file_the_row_and_the_problem(tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    path.write_text(
        json.dumps(
            {
                "tenants": [{"id": "acme", "display_name": "Acme"}],
                "organizations": [{"id": "p", "tenant_id": "nobody", "display_name": "P"}],
                "fleets": [],
            }
        )
    )
    with pytest.raises(BootstrapError) as refused:
        load_seed(path)
    assert (refused.value.path, refused.value.row) == (path, "organizations[0]")
    problem = "organization 'p' names tenant 'nobody', which is not declared in 'tenants'"
    assert refused.value.problem == problem
    assert str(refused.value) == f"tenant seed {path}: organizations[0]: {problem}"
    with pytest.raises(BootstrapError) as unreadable:
        load_seed(tmp_path / "absent.json")
    assert (unreadable.value.path, unreadable.value.row) == (tmp_path / "absent.json", None)
    assert unreadable.value.problem == "cannot be read (No such file or directory)"


def test_an_unreadable_provider_names_the_provider_or_the_file(tmp_path: Path) -> None:
    sealed = SecretBox(b"\x01" * 32).seal("okta", "s3cret")
    with pytest.raises(ProviderStoreError) as other_key:
        SecretBox(b"\x02" * 32).open("okta", sealed)
    assert (other_key.value.provider_id, other_key.value.path) == ("okta", None)
    assert other_key.value.rule.startswith("its client secret does not open with this")
    assert str(other_key.value) == f"provider 'okta': {other_key.value.rule}"
    assert "s3cret" not in str(other_key.value)
    path = tmp_path / "providers.json"
    path.write_text('{"version": 99, "providers": []}')
    path.chmod(0o600)
    with pytest.raises(ProviderStoreError) as version:
        read_provider_file(path)
    assert (version.value.provider_id, version.value.path) == (None, path)
    assert str(version.value) == f"{path}: version 99 is not 1"


def test_an_unusable_data_directory_names_the_path_and_the_reason(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    below_a_file = tmp_path / "file" / "data"
    with pytest.raises(DataDirError) as refused:
        secure(below_a_file)
    assert (refused.value.path, refused.value.reason) == (below_a_file, "Not a directory")
    assert str(refused.value) == f"{below_a_file}: cannot be used as a directory (Not a directory)"
