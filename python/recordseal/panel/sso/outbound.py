"""The outbound-request guard for every call the panel makes to an identity provider.

Discovery documents, key sets and token endpoints are URLs an operator typed in, so each
request is held to an ``OutboundPolicy``:

- the host is resolved once and every address must be public (``is_global``), unless it lies
  in a network listed in ``allowed_networks`` (``RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW``,
  comma-separated CIDRs such as ``127.0.0.1/32``); loopback, private, link-local (cloud
  metadata), shared, reserved and multicast addresses are refused otherwise; an IPv6 address
  that carries an IPv4 address (mapped, IPv4-compatible, 6to4, Teredo, NAT64 ``64:ff9b::/96``)
  is judged by that IPv4 address, and the local-use NAT64 prefix ``64:ff9b:1::/48`` is refused;
- the connection goes to the address that was checked (the URL is rewritten to it, with the
  ``Host`` header and TLS server name kept), so a second DNS answer cannot swap it;
- ``https`` only; plain ``http`` is accepted only to an explicitly allowed network;
- redirects are never followed (a 3xx answer is an error);
- the whole exchange must finish within ``timeout`` seconds and the body may not exceed
  ``max_bytes``; the request asks for ``Accept-Encoding: identity`` and a compressed answer
  is refused, so a small compressed body can never expand in memory;
- TLS certificates are checked against the system's trusted roots (certifi), or against the
  PEM file named by ``RECORDSEAL_PANEL_SSO_CA_FILE`` (an IdP under a private CA).
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import certifi
import httpx

from recordseal.panel.errors import PanelError

ALLOW_ENV = "RECORDSEAL_PANEL_SSO_OUTBOUND_ALLOW"
DEFAULT_TIMEOUT = 5.0
DEFAULT_MAX_BYTES = 1024 * 1024

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class OutboundError(PanelError):
    """An outbound request was refused by the policy or failed; ``reason`` names why."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class OutboundPolicy:
    allowed_networks: tuple[IPNetwork, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    max_bytes: int = DEFAULT_MAX_BYTES
    ca_file: Path | None = None

    def tls_context(self) -> ssl.SSLContext:
        if self.ca_file is None:
            return ssl.create_default_context(cafile=certifi.where())
        return ssl.create_default_context(cafile=str(self.ca_file))

    def explicitly_allowed(self, address: IPAddress) -> bool:
        return any(address in network for network in self.allowed_networks)

    def allows(self, address: IPAddress) -> bool:
        if self.explicitly_allowed(address):
            return True
        if isinstance(address, ipaddress.IPv6Address):
            embedded = embedded_ipv4(address)
            if embedded is not None:
                return self.allows(embedded)
            if address in _LOCAL_NAT64:
                return False
        return address.is_global and not address.is_multicast


#: RFC 6052 well-known NAT64 prefix (IPv4 in the last 32 bits) and RFC 8215 local-use prefix.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_LOCAL_NAT64 = ipaddress.IPv6Network("64:ff9b:1::/48")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")


def embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address reaches through (mapped, IPv4-compatible, 6to4, Teredo
    client, NAT64), judged in its place: ``64:ff9b::a9fe:a9fe`` is the cloud metadata
    address behind a NAT64 gateway, although Python calls it global."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    if address in _NAT64 or address in _IPV4_COMPATIBLE:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True)
class OutboundResponse:
    status: int
    headers: httpx.Headers
    body: bytes = field(repr=False)


async def _resolve(host: str, port: int) -> list[IPAddress]:
    try:
        return [ipaddress.ip_address(host)]
    except ValueError:
        pass
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except OSError as exc:
        raise OutboundError(f"cannot resolve host {host!r}") from exc
    addresses: list[IPAddress] = []
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise OutboundError(f"host {host!r} has no address")
    return addresses


class GuardedTransport(httpx.AsyncBaseTransport):
    """Checks and pins the destination address of every request (see the module docstring)."""

    def __init__(self, policy: OutboundPolicy) -> None:
        self._policy = policy
        self._inner = httpx.AsyncHTTPTransport(verify=policy.tls_context(), trust_env=False)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        url = request.url
        if url.scheme not in ("https", "http"):
            raise OutboundError(f"scheme {url.scheme!r} is not allowed; use https")
        host = url.host
        port = url.port or (443 if url.scheme == "https" else 80)
        addresses = await _resolve(host, port)
        for address in addresses:
            if not self._policy.allows(address):
                raise OutboundError(
                    f"host {host!r} resolves to {address}, a non-public address"
                    f" not allowed by {ALLOW_ENV}"
                )
        if url.scheme == "http" and not all(self._policy.explicitly_allowed(a) for a in addresses):
            raise OutboundError(f"plain http to {host!r} is refused; use https")
        pinned = addresses[0]
        request.url = url.copy_with(host=str(pinned))
        request.extensions = {**request.extensions, "sni_hostname": host}
        return await self._inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self._inner.aclose()


async def fetch(
    policy: OutboundPolicy,
    method: str,
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    content: bytes | None = None,
) -> OutboundResponse:
    """One request under ``policy``; OutboundError for a refusal, failure or redirect."""
    try:
        async with asyncio.timeout(policy.timeout):
            return await _exchange(policy, method, url, headers, content)
    except TimeoutError:
        raise OutboundError(f"no complete answer within {policy.timeout} s") from None
    except httpx.HTTPError as exc:
        raise OutboundError(f"request failed ({type(exc).__name__})") from None


async def _exchange(
    policy: OutboundPolicy,
    method: str,
    url: str,
    headers: Mapping[str, str] | None,
    content: bytes | None,
) -> OutboundResponse:
    async with (
        httpx.AsyncClient(
            transport=GuardedTransport(policy),
            follow_redirects=False,
            timeout=policy.timeout,
            trust_env=False,
        ) as client,
        client.stream(
            method, url, headers={**(headers or {}), "Accept-Encoding": "identity"}, content=content
        ) as response,
    ):
        encoding = response.headers.get("content-encoding", "identity").strip().lower()
        if encoding not in ("", "identity"):
            raise OutboundError(f"the answer is {encoding!r}-encoded; only identity is accepted")
        body = bytearray()
        async for chunk in response.aiter_raw():
            body += chunk
            if len(body) > policy.max_bytes:
                raise OutboundError(f"the answer exceeds {policy.max_bytes} bytes")
        if response.is_redirect or 300 <= response.status_code < 400:
            raise OutboundError(f"answered {response.status_code}; redirects are not followed")
        return OutboundResponse(response.status_code, response.headers, bytes(body))
