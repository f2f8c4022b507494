"""A real local time-stamping authority: ``openssl ts -reply`` behind a tiny HTTP server.

The CA and TSA certificates are made with the ``cryptography`` X.509 builder; the TSA
certificate carries the critical ``timeStamping`` EKU that RFC 3161 requires.
"""

from __future__ import annotations

import datetime
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

POLICY = "1.3.6.1.4.1.99999.1"


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _usage(*, sign_certificates: bool) -> x509.KeyUsage:
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=not sign_certificates,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=sign_certificates,
        crl_sign=sign_certificates,
        encipher_only=False,
        decipher_only=False,
    )


@dataclass
class Authority:
    """A CA and the TSA certificate it issued, written under ``directory``."""

    directory: Path
    ca: x509.Certificate
    tsa: x509.Certificate


def make_authority(directory: Path, name: str = "Test") -> Authority:
    directory.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.UTC)
    validity = (now - datetime.timedelta(days=1), now + datetime.timedelta(days=30))
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{name} CA"))
        .issuer_name(_name(f"{name} CA"))
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(_usage(sign_certificates=True), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    tsa_key = ec.generate_private_key(ec.SECP256R1())
    tsa = (
        x509.CertificateBuilder()
        .subject_name(_name(f"{name} TSA"))
        .issuer_name(ca.subject)
        .public_key(tsa_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(validity[0])
        .not_valid_after(validity[1])
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(_usage(sign_certificates=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.TIME_STAMPING]), critical=True)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM
    (directory / "ca.pem").write_bytes(ca.public_bytes(pem))
    (directory / "tsa.pem").write_bytes(tsa.public_bytes(pem))
    (directory / "tsa.key").write_bytes(
        tsa_key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    (directory / "serial").write_text("01\n")
    for digests in ("sha256", "sha512"):
        (directory / f"{digests}.cnf").write_text(_config(directory, digests))
    return Authority(directory, ca, tsa)


def _config(directory: Path, digests: str) -> str:
    # ``certs`` adds the CA to the response: OpenSSL then writes an unsorted SET OF.
    return f"""\
[ tsa ]
default_tsa = tsa_config
[ tsa_config ]
dir = {directory}
serial = $dir/serial
crypto_device = builtin
signer_cert = $dir/tsa.pem
certs = $dir/ca.pem
signer_key = $dir/tsa.key
signer_digest = sha256
default_policy = {POLICY}
other_policies = {POLICY}.2
digests = {digests}
accuracy = secs:1
ordering = no
tsa_name = yes
ess_cert_id_chain = no
ess_cert_id_alg = sha256
"""


def openssl_reply(config: Path, query: bytes) -> bytes:
    with tempfile.TemporaryDirectory() as work:
        query_path, reply_path = Path(work) / "query.tsq", Path(work) / "reply.tsr"
        query_path.write_bytes(query)
        subprocess.run(
            ["openssl", "ts", "-reply", "-config", str(config),
             "-queryfile", str(query_path), "-out", str(reply_path)],
            check=True, capture_output=True, timeout=30,
        )  # fmt: skip
        return reply_path.read_bytes()


@contextmanager
def serve(authority: Authority) -> Iterator[str]:
    """Serve ``POST /tsa`` (SHA-256 allowed) and ``POST /sha512-only``; yield the base URL."""
    lock = threading.Lock()  # ``openssl ts`` updates the serial file

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            routes = {"/tsa": "sha256.cnf", "/sha512-only": "sha512.cnf"}
            query = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path not in routes:
                self.send_error(404)
                return
            with lock:
                reply = openssl_reply(authority.directory / routes[self.path], query)
            self.send_response(200)
            self.send_header("Content-Type", "application/timestamp-reply")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
