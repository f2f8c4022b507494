"""``recordseal verify BUNDLE --url URL`` (issue 30, item 4) against a real served instance
with its demo witness: the key directory and trust store the service publishes take the place
of files, with a warning every time; files win; the offline verifier stays offline. And
``GET /v1/trust`` is the document ``recordseal keys export`` writes, quorum included."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import httpx
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from recordseal.client.verify_cli import WARNING
from recordseal.tlog.cosignature import CosignatureSigner
from tests.servers import (
    Witnessed,
    create_token,
    free_port,
    kill_service,
    start_service,
    witnessed_service,
)

TRUSTING = "Trusting fetched material means trusting this service"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Witnessed, Path]]:
    """The service, and a folder holding its bundle (``bundle.json``) and what ``keys export``
    wrote of it (``keys.json``, ``trust.json``)."""
    root = tmp_path_factory.mktemp("verify-url")
    with witnessed_service(root) as service:
        files = root / "files"
        files.mkdir()
        (files / "bundle.json").write_bytes(service.bundle)
        exported = recordseal(
            "keys", "export", "--data-dir", str(service.data_dir),
            "--keys-out", str(files / "keys.json"), "--trust-out", str(files / "trust.json"),
        )  # fmt: skip
        assert exported.returncode == 0, exported.stderr
        yield service, files


def recordseal(*argv: str, module: str = "recordseal.cli") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", module, *argv], capture_output=True, text=True, timeout=120
    )


def test_the_published_documents_reach_verified_with_a_warning(
    served: tuple[Witnessed, Path],
) -> None:
    service, files = served
    done = recordseal("verify", str(files / "bundle.json"), "--url", service.url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "\nverdict     VERIFIED\n" in done.stdout
    assert "demo witness on this machine" in done.stdout
    expected = WARNING.format(what="the key directory and the trust store", url=service.url)
    assert done.stderr.strip() == expected
    assert TRUSTING in done.stderr


def test_the_bundle_alone_stays_incomplete(served: tuple[Witnessed, Path]) -> None:
    _, files = served
    done = recordseal("verify", str(files / "bundle.json"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "\nverdict     VERIFICATION INCOMPLETE (unchecked: " in done.stdout
    assert done.stderr == ""


def test_json_output_is_the_result_and_the_warning_goes_to_stderr(
    served: tuple[Witnessed, Path],
) -> None:
    service, files = served
    done = recordseal("verify", str(files / "bundle.json"), "--url", service.url, "--json")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["verdict"] == "VERIFIED"
    assert [check["status"] for check in result["checks"]] == ["passed"] * 7
    assert TRUSTING in done.stderr


def test_files_win_over_the_service(served: tuple[Witnessed, Path], tmp_path: Path) -> None:
    """A trust store of one's own (here: trusting no witness) is used instead of the
    service's; only the key directory is fetched, and the warning names only it. With both
    files, nothing is fetched and nothing is said."""
    service, files = served
    own = tmp_path / "own-trust.json"
    own.write_text(
        json.dumps(
            {"format": "recordseal/trust/v1", "witnesses": [], "timestamp_authorities": [],
             "quorum": 1}
        )
    )  # fmt: skip
    done = recordseal(
        "verify", str(files / "bundle.json"), "--url", service.url, "--trust", str(own), "--json"
    )
    assert done.returncode == 2, done.stdout + done.stderr
    statuses = [check["status"] for check in json.loads(done.stdout)["checks"]]
    # the fetched key directory proves the signature and the seal; no witness is trusted
    assert statuses[2:5] == ["passed", "passed", "unchecked"]
    assert done.stderr.strip() == WARNING.format(what="the key directory", url=service.url)
    both = recordseal(
        "verify", str(files / "bundle.json"), "--url", "http://127.0.0.1:9",
        "--keys", str(files / "keys.json"), "--trust", str(files / "trust.json"),
    )  # fmt: skip
    assert both.returncode == 0, both.stdout + both.stderr
    assert both.stderr == ""


def test_a_service_that_cannot_be_reached_or_refuses_is_69(
    served: tuple[Witnessed, Path],
) -> None:
    service, files = served
    bundle = str(files / "bundle.json")
    nobody = f"http://127.0.0.1:{free_port()}"
    unreachable = recordseal("verify", bundle, "--url", nobody)
    assert unreachable.returncode == 69, unreachable.stderr
    assert f"cannot fetch from {nobody}" in unreachable.stderr
    assert unreachable.stdout == ""
    # The demo witness answers HTTP, but publishes no key directory.
    record = json.loads((service.data_dir / "service.json").read_text())
    witness = record["witnesses"][0]["url"]
    refused = recordseal("verify", bundle, "--url", witness)
    assert refused.returncode == 69, refused.stderr
    assert "404" in refused.stderr


def test_a_url_that_is_no_http_url_is_a_usage_error(served: tuple[Witnessed, Path]) -> None:
    _, files = served
    for url in ("127.0.0.1:8000", "ftp://example.org", "http://[::1"):
        done = recordseal("verify", str(files / "bundle.json"), "--url", url)
        assert done.returncode == 64, (url, done.stderr)
        assert "--url must be an http or https URL" in done.stderr


def test_the_offline_verifier_takes_no_url(served: tuple[Witnessed, Path]) -> None:
    """``recordseal-verify`` (``python -m recordseal.verify``) has no HTTP client: --url is
    an unknown option there (usage error), never a fetch."""
    service, files = served
    done = recordseal(str(files / "bundle.json"), "--url", service.url, module="recordseal.verify")
    assert done.returncode == 64
    assert "unrecognized arguments: --url" in done.stderr


def test_the_published_trust_store_is_what_keys_export_writes(
    served: tuple[Witnessed, Path],
) -> None:
    service, files = served
    published = httpx.get(f"{service.url}/v1/trust").json()
    assert published == json.loads((files / "trust.json").read_text())
    assert [w["name"] for w in published["witnesses"]] == ["demo witness on this machine"]
    assert published["quorum"] == 1


def _root_pem(name: str) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    certificate = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(datetime(2026, 1, 1))
        .not_valid_after(datetime(2036, 1, 1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return certificate.public_bytes(serialization.Encoding.PEM).decode()


def test_every_witness_authority_and_the_quorum_are_published(tmp_path: Path) -> None:
    """Two witnesses, an authority with two roots and a quorum of 2: ``GET /v1/trust`` and
    ``keys export`` give the same document, holding each of them."""
    data = tmp_path / "data"
    data.mkdir()
    create_token(data, "acme")
    witnesses = [
        {"name": name, "url": "http://127.0.0.1:9", "vkey": CosignatureSigner.generate(name).vkey}
        for name in ("w1.example", "w2.example")
    ]
    roots = [_root_pem("Root A"), _root_pem("Root B")]
    env = {
        "RECORDSEAL_WITNESSES": json.dumps(witnesses),
        "RECORDSEAL_TIMESTAMP_AUTHORITIES": json.dumps(
            [{"name": "tsa.example", "url": "http://127.0.0.1:9/tsa", "roots_pem": "".join(roots)}]
        ),
        "RECORDSEAL_WITNESS_QUORUM": "2",
    }
    port = free_port()
    server = start_service(data, port, env=env)
    try:
        published = httpx.get(f"http://127.0.0.1:{port}/v1/trust").json()
    finally:
        kill_service(server)
    exported = recordseal(
        "keys", "export", "--data-dir", str(data), "--keys-out", str(tmp_path / "k.json"),
        "--trust-out", str(tmp_path / "t.json"),
    )  # fmt: skip
    assert exported.returncode == 0, exported.stderr
    assert published == json.loads((tmp_path / "t.json").read_text())
    assert published["quorum"] == 2
    assert published["witnesses"] == [{"name": w["name"], "vkey": w["vkey"]} for w in witnesses]
    [authority] = published["timestamp_authorities"]
    assert authority["name"] == "tsa.example"
    assert [root.strip() for root in authority["roots"]] == [root.strip() for root in roots]
