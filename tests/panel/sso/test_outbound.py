"""The outbound-request guard: no redirects, bounded size and time, no private or link-local
addresses unless configured (``RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW``)."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import ipaddress
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar

import pytest

from recordseal.panel.sso.outbound import OutboundError, OutboundPolicy, fetch
from recordseal.panel.sso.settings import SsoSettings
from recordseal.settings import SettingsError, from_env
from tests.panel.sso.op_server import OpenIdProvider
from tests.panel.sso.tls import LocalTls

LOOPBACK_ONLY = OutboundPolicy((ipaddress.ip_network("127.0.0.1/32"),), timeout=1.0,
                               max_bytes=64 * 1024)  # fmt: skip


class _Handler(BaseHTTPRequestHandler):
    hits: ClassVar[list[str]] = []
    encodings: ClassVar[list[str]] = []

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
        self.encodings.append(self.headers.get("Accept-Encoding", ""))
        body = b"x" * (128 * 1024) if self.path == "/big" else b'{"ok": true}'
        if self.path == "/gzip":
            body = gzip.compress(b"\x00" * (8 * 1024 * 1024))
        self.send_response(200)
        if self.path == "/gzip":
            self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        with contextlib.suppress(OSError):
            self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    _Handler.hits = []
    _Handler.encodings = []
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
        # IPv6 addresses that carry a non-public IPv4 address: NAT64 to the cloud metadata
        # address and to loopback, 6to4, IPv4-compatible, and the local-use NAT64 prefix.
        "https://[64:ff9b::a9fe:a9fe]/",
        "https://[64:ff9b::7f00:1]/",
        "https://[2002:a9fe:a9fe::1]/",
        "https://[::127.0.0.1]/",
        "https://[64:ff9b:1::a00:1]/",
    ],
)
def test_private_link_local_and_reserved_addresses_are_refused(url: str) -> None:
    with pytest.raises(OutboundError, match="non-public address"):
        _fetch(OutboundPolicy(timeout=1.0), url)


@pytest.mark.parametrize(
    ("address", "allowed"),
    [
        ("64:ff9b::808:808", True),
        ("2002:808:808::1", True),
        ("2606:4700::1111", True),
        ("64:ff9b::a00:1", False),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", False),
    ],
)
def test_an_embedded_ipv4_address_is_judged_in_its_place(address: str, allowed: bool) -> None:
    assert OutboundPolicy().allows(ipaddress.ip_address(address)) is allowed


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


def test_a_compressed_answer_is_refused_before_it_expands(server: str) -> None:
    """8 MiB of zeros gzip to a few KiB: the guard asks for identity and never decodes."""
    assert _fetch(LOOPBACK_ONLY, f"{server}/ok") == b'{"ok": true}'
    with pytest.raises(OutboundError, match="'gzip'-encoded"):
        _fetch(LOOPBACK_ONLY, f"{server}/gzip")
    assert _Handler.encodings == ["identity", "identity"]


def test_the_time_is_bounded(server: str) -> None:
    began = time.monotonic()
    with pytest.raises(OutboundError, match=r"within 1\.0 s"):
        _fetch(LOOPBACK_ONLY, f"{server}/slow")
    assert time.monotonic() - began < 4  # the server answers only after 5 s


def test_settings_read_the_environment(tmp_path: Path) -> None:
    settings = SsoSettings.of(
        from_env(
            {
                "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": " 127.0.0.1/32, 10.0.0.0/8 ",
                "RECORDSEAL_PANEL_SSO_CA_FILE": str(tmp_path / "ca.pem"),
                "RECORDSEAL_PANEL_PROVIDER_STORE_PATH": str(tmp_path / "providers.json"),
                "RECORDSEAL_PANEL_SSO_OPERATOR_GROUPS": "ops; admins,  ",
            }
        )
    )
    assert settings.outbound.allowed_networks == (
        ipaddress.ip_network("127.0.0.1/32"),
        ipaddress.ip_network("10.0.0.0/8"),
    )
    assert settings.outbound.ca_file == tmp_path / "ca.pem"
    assert settings.provider_store_path == tmp_path / "providers.json"
    assert settings.operator_groups == frozenset({"ops", "admins"})
    unset = SsoSettings.of(from_env({}))
    assert unset.outbound.allowed_networks == ()
    assert unset.provider_store_path is None
    assert unset.operator_groups == frozenset()


def test_a_bad_network_in_the_allow_list_is_a_clear_error() -> None:
    with pytest.raises(SettingsError, match=r"RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW .*'not-a-net'"):
        from_env({"RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW": "10.0.0.0/8, not-a-net"})


class _Named(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = self.server.server_address[0].encode()  # which address answered
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _servers_on_one_port(
    first: str, second: str
) -> tuple[ThreadingHTTPServer, ThreadingHTTPServer]:
    """Two servers on one port of two loopback addresses (Linux routes all of 127.0.0.0/8 to
    lo); a port already taken on the second address is given up and another one tried."""
    for _ in range(20):
        one = ThreadingHTTPServer((first, 0), _Named)
        try:
            return one, ThreadingHTTPServer((second, one.server_address[1]), _Named)
        except OSError:
            one.server_close()
    raise RuntimeError(f"no port free on both {first} and {second}")


def test_the_checked_address_is_the_one_connected_to_dns_rebinding(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A rebinding name answers an allowed address to the check and another one afterwards.
    No DNS server can be made to do that here, so the system resolver is wrapped for one made-up
    name (every other name resolves as usual); both addresses are real listening servers."""
    checked, other = _servers_on_one_port("127.0.0.1", "127.0.0.2")
    port = checked.server_address[1]
    servers = [checked, other]
    for httpd in servers:
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
    answers: list[str] = []
    real = socket.getaddrinfo

    def rebinding(host: object, *args: object, **kwargs: object) -> object:
        if host != "rebind.test":
            return real(host, *args, **kwargs)  # type: ignore[arg-type]
        address = "127.0.0.1" if not answers else "127.0.0.2"
        answers.append(address)
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    try:
        body = _fetch(LOOPBACK_ONLY, f"http://rebind.test:{port}/ok")
    finally:
        for httpd in servers:
            httpd.shutdown()
            httpd.server_close()
    assert body == b"127.0.0.1"
    assert answers == ["127.0.0.1"]
