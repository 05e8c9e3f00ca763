"""HTTPS through the pinned transport: connected to the checked address, verified for the name.

A real TLS server on 127.0.0.1 with a certificate for ``tls.test`` from a throwaway CA. The name
is in no DNS: the connection arrives only because it is pinned to the address that was checked,
and TLS sends the URL's name for SNI and checks the certificate against it.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import ssl
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
from agentkit_guardrail_web import WebGuardrail
from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from agentkit_core import GuardrailViolation

LAB = [ipaddress.ip_network("127.0.0.1/32")]


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _certificate(
    subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, signer: ec.EllipticCurvePrivateKey
) -> x509.Certificate:
    now = dt.datetime.now(dt.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(_name(issuer))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(hours=1))
    )
    if subject == issuer:  # the CA
        builder = builder.add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
        builder = builder.add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            True,
        )
    else:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(subject)]), False)
    return builder.sign(signer, hashes.SHA256())


@dataclass
class TLSServer:
    port: int
    ca_file: Path
    #: the SNI name of every handshake
    names: list[str | None] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = f"secure hello for {self.headers.get('Host', '')}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def tls_server(tmp_path: Path) -> Iterator[TLSServer]:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = _certificate("agentkit test CA", ca_key, "agentkit test CA", ca_key)
    key = ec.generate_private_key(ec.SECP256R1())
    leaf = _certificate("tls.test", key, "agentkit test CA", ca_key)
    (tmp_path / "ca.pem").write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "leaf.pem").write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "leaf.key").write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "leaf.pem", tmp_path / "leaf.key")
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    httpd.daemon_threads = True
    spec = TLSServer(httpd.server_address[1], tmp_path / "ca.pem")
    context.sni_callback = lambda sock, name, ctx: spec.names.append(name)  # type: ignore[assignment]
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.02,), daemon=True)
    thread.start()
    try:
        yield spec
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


def _resolver(answer: str):  # type: ignore[no-untyped-def]
    async def resolve(host: str, port: int) -> list[str]:
        return [answer]

    return resolve


async def test_https_is_pinned_to_the_checked_address_and_verified_for_the_name(
    tls_server: TLSServer,
) -> None:
    verify = ssl.create_default_context(cafile=str(tls_server.ca_file))
    guard = WebGuardrail(allow_private_networks=LAB)
    async with guard.fetcher(resolver=_resolver("127.0.0.1"), verify=verify) as fetch:
        response = await fetch.get(f"https://tls.test:{tls_server.port}/")
    assert response.status_code == 200
    assert response.text == f"secure hello for tls.test:{tls_server.port}"
    assert tls_server.names == ["tls.test"]  # SNI is the URL's name, not the pinned address


async def test_a_certificate_for_another_name_is_refused(tls_server: TLSServer) -> None:
    verify = ssl.create_default_context(cafile=str(tls_server.ca_file))
    guard = WebGuardrail(allow_private_networks=LAB)
    async with guard.fetcher(resolver=_resolver("127.0.0.1"), verify=verify) as fetch:
        with pytest.raises(GuardrailViolation, match=r"no connection could be made") as info:
            await fetch.get(f"https://other.test:{tls_server.port}/")
    assert "certificate" in str(info.value).lower()
    assert tls_server.names == ["other.test"]


async def test_an_untrusted_certificate_is_refused(tls_server: TLSServer) -> None:
    async with WebGuardrail(allow_private_networks=LAB).fetcher(
        resolver=_resolver("127.0.0.1")
    ) as fetch:  # the system's CAs, which do not know the test CA
        with pytest.raises(GuardrailViolation, match=r"CERTIFICATE_VERIFY_FAILED"):
            await fetch.get(f"https://tls.test:{tls_server.port}/")
