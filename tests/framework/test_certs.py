"""Unit tests for framework.certs: SANs, usages, and a real TLS handshake."""

from __future__ import annotations

import ipaddress
import socket
import ssl
import stat
import threading

import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from framework.certs import generate_ca, issue_client_cert, issue_serving_cert


@pytest.fixture(scope="module")
def ca():
    return generate_ca()


def test_ca_is_self_signed_ec_ca(ca):
    cert = ca.cert
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "framework-ca"
    assert cert.issuer == cert.subject
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is True
    assert isinstance(cert.public_key(), ec.EllipticCurvePublicKey)
    assert cert.public_key().curve.name == "secp256r1"
    cert.verify_directly_issued_by(cert)
    validity = cert.not_valid_after_utc - cert.not_valid_before_utc
    assert 365 <= validity.days <= 366


def test_serving_cert_sans_and_usage(ca):
    serving = issue_serving_cert(ca)
    cert = serving.cert
    cert.verify_directly_issued_by(ca.cert)
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert sans.get_values_for_type(x509.IPAddress) == [
        ipaddress.ip_address("127.0.0.1"),
        ipaddress.ip_address("::1"),
    ]
    assert sans.get_values_for_type(x509.DNSName) == ["localhost"]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.SERVER_AUTH]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca is False


def test_serving_cert_custom_hosts(ca):
    sans = issue_serving_cert(
        ca, hosts=["api.example.test", "10.0.0.1"]
    ).cert.extensions.get_extension_for_class(x509.SubjectAlternativeName)
    assert sans.value.get_values_for_type(x509.DNSName) == ["api.example.test"]
    assert sans.value.get_values_for_type(x509.IPAddress) == [ipaddress.ip_address("10.0.0.1")]


def test_client_cert_subject_and_usage(ca):
    cert = issue_client_cert(ca, "alice", ["system:masters", "devs"]).cert
    cert.verify_directly_issued_by(ca.cert)
    assert cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value == "alice"
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "system:masters",
        "devs",
    ]
    usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(usages) == [ExtendedKeyUsageOID.CLIENT_AUTH]


def test_write_creates_files_with_private_key_mode(ca, tmp_path):
    cert_path, key_path = ca.write(tmp_path / "sub", "ca")
    assert cert_path == tmp_path / "sub" / "ca.crt"
    assert key_path == tmp_path / "sub" / "ca.key"
    assert cert_path.read_bytes() == ca.cert_pem
    assert key_path.read_bytes() == ca.key_pem
    assert stat.S_IMODE(key_path.stat().st_mode) == 0o600


@pytest.mark.parametrize("server_hostname", ["127.0.0.1", "localhost"])
def test_mutual_tls_handshake_on_loopback(ca, tmp_path, server_hostname):
    """A real handshake: the client verifies the serving cert by CA + SAN, the server the client cert."""
    serving_cert, serving_key = issue_serving_cert(ca).write(tmp_path, "serving")
    client_cert, client_key = issue_client_cert(ca, "alice", ["devs"]).write(tmp_path, "client")
    ca_path, _ = ca.write(tmp_path, "ca")

    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(serving_cert, serving_key)
    server_ctx.load_verify_locations(ca_path)
    server_ctx.verify_mode = ssl.CERT_REQUIRED
    client_ctx = ssl.create_default_context(cafile=str(ca_path))
    client_ctx.load_cert_chain(client_cert, client_key)

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    seen: dict = {}

    def serve() -> None:
        conn, _ = listener.accept()
        with server_ctx.wrap_socket(conn, server_side=True) as tls:
            seen["peer"] = tls.getpeercert()
            tls.sendall(tls.recv(5).upper())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            client_ctx.wrap_socket(raw, server_hostname=server_hostname) as tls,
        ):
            tls.sendall(b"hello")
            assert tls.recv(5) == b"HELLO"
            server_cert = tls.getpeercert()
    finally:
        thread.join(timeout=10)
        listener.close()

    assert ("DNS", "localhost") in server_cert["subjectAltName"]
    assert ("IP Address", "127.0.0.1") in server_cert["subjectAltName"]
    subject = dict(rdn[0] for rdn in seen["peer"]["subject"])
    assert subject == {"organizationName": "devs", "commonName": "alice"}


def test_handshake_fails_for_a_foreign_ca(ca, tmp_path):
    other_ca_path, _ = generate_ca("other").write(tmp_path, "other")
    serving_cert, serving_key = issue_serving_cert(ca).write(tmp_path, "serving")
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(serving_cert, serving_key)
    client_ctx = ssl.create_default_context(cafile=str(other_ca_path))

    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server_errors: list[Exception] = []

    def serve() -> None:
        conn, _ = listener.accept()
        with conn:
            try:
                server_ctx.wrap_socket(conn, server_side=True)
            except ssl.SSLError as exc:
                server_errors.append(exc)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with (
            socket.create_connection(("127.0.0.1", port), timeout=10) as raw,
            pytest.raises(ssl.SSLCertVerificationError),
        ):
            client_ctx.wrap_socket(raw, server_hostname="127.0.0.1")
    finally:
        thread.join(timeout=10)
        listener.close()
    assert server_errors, "the server side must see the aborted handshake"
