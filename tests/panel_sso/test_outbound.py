"""The outbound-request guard: no redirects, bounded size and time, no private or link-local
addresses unless configured (``RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW``)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from recordseal.panel.sso.outbound import OutboundError, OutboundPolicy, fetch
from recordseal.panel.sso.settings import SsoSettings
from tests.panel_sso.op_server import OpenIdProvider
from tests.panel_sso.tls import LocalTls

LOOPBACK_ONLY = OutboundPolicy((ipaddress.ip_network("127.0.0.1/32"),), timeout=1.0,
                               max_bytes=64 * 1024)  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.hits.append(self.path)
        if self.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/target")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if self.path == "/slow":
            time.sleep(5)
        body = b"x" * (128 * 1024) if self.path == "/big" else b'{"ok": true}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.hits = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True  # teardown does not wait for the slow handler
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()


def _fetch(policy: OutboundPolicy, url: str) -> bytes:
    return asyncio.run(fetch(policy, "GET", url)).body


def test_an_explicitly_allowed_network_is_reached(server: str) -> None:
    assert _fetch(LOOPBACK_ONLY, f"{server}/ok") == b'{"ok": true}'


def test_loopback_is_refused_without_configuration(server: str) -> None:
    with pytest.raises(OutboundError, match="non-public address"):
        _fetch(OutboundPolicy(), f"{server}/ok")
    assert _Handler.hits == []


@pytest.mark.parametrize(
    "url",
    [
        "https://169.254.169.254/latest/meta-data/",
        "https://10.0.0.1/",
        "https://192.168.1.1/",
        "https://[::1]/",
        "https://[fe80::1]/",
        "https://[::ffff:127.0.0.1]/",
        "https://100.64.0.1/",
        "https://0.0.0.0/",
        "https://224.0.0.1/",
    ],
)
def test_private_link_local_and_reserved_addresses_are_refused(url: str) -> None:
    with pytest.raises(OutboundError, match="non-public address"):
        _fetch(OutboundPolicy(timeout=1.0), url)


def test_a_name_resolving_to_loopback_is_refused(server: str) -> None:
    port = server.rsplit(":", 1)[1]
    with pytest.raises(OutboundError, match="resolves to"):
        _fetch(OutboundPolicy(), f"https://localhost:{port}/ok")


def test_a_pinned_address_keeps_the_host_name_for_tls_verification(
    op: OpenIdProvider, tls: LocalTls
) -> None:
    """``localhost`` is resolved, checked and connected to by address; the certificate is still
    checked against the name (its SAN has DNS:localhost), and the Host header keeps it."""
    port = op.issuer.rsplit(":", 1)[1]
    policy = OutboundPolicy(
        (ipaddress.ip_network("127.0.0.1/32"), ipaddress.ip_network("::1/128")),
        ca_file=tls.ca_file,
    )
    body = _fetch(policy, f"https://localhost:{port}/.well-known/openid-configuration")
    assert json.loads(body)["issuer"] == op.issuer
    with pytest.raises(OutboundError, match="request failed"):
        _fetch(OutboundPolicy(policy.allowed_networks), f"https://localhost:{port}/jwks")


def test_plain_http_is_refused_to_a_network_not_explicitly_allowed() -> None:
    with pytest.raises(OutboundError, match="plain http"):
        _fetch(OutboundPolicy(timeout=1.0), "http://8.8.8.8/")


def test_other_schemes_are_refused() -> None:
    with pytest.raises(OutboundError):
        _fetch(OutboundPolicy(), "ftp://8.8.8.8/")


def test_redirects_are_not_followed(server: str) -> None:
    with pytest.raises(OutboundError, match="redirects are not followed"):
        _fetch(LOOPBACK_ONLY, f"{server}/redirect")
    assert _Handler.hits == ["/redirect"]


def test_the_answer_size_is_bounded(server: str) -> None:
    with pytest.raises(OutboundError, match="exceeds 65536 bytes"):
        _fetch(LOOPBACK_ONLY, f"{server}/big")


def test_the_time_is_bounded(server: str) -> None:
    began = time.monotonic()
    with pytest.raises(OutboundError, match=r"within 1\.0 s"):
        _fetch(LOOPBACK_ONLY, f"{server}/slow")
    assert time.monotonic() - began < 4  # the server answers only after 5 s


def test_settings_read_the_environment(tmp_path: Path) -> None:
    settings = SsoSettings.from_env(
        {
            "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": " 127.0.0.1/32, 10.0.0.0/8 ",
            "RECORDSEAL_PANEL_SSO_CA_FILE": str(tmp_path / "ca.pem"),
            "RECORDSEAL_PANEL_PROVIDER_STORE_PATH": str(tmp_path / "providers.json"),
            "RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS": "ops; admins,  ",
        }
    )
    assert settings.outbound.allowed_networks == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
    )
    assert settings.outbound.ca_file == tmp_path / "ca.pem"
    assert settings.provider_store_path == tmp_path / "providers.json"
    assert settings.operator_groups == frozenset({"ops", "admins"})
    unset = SsoSettings.from_env({})
    assert unset.outbound.allowed_networks == ()
    assert unset.provider_store_path is None
    assert unset.operator_groups == frozenset()


def test_a_bad_network_in_the_allow_list_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW: 'not-a-net'"):
        OutboundPolicy.from_env({"RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": "not-a-net"})
