"""Self-signed TLS material: a throwaway CA, serving certificates and client certificates.

For serving webhooks in development (``self_signed_cert``; controller-runtime leaves this to
cert-manager in production) and for the test API server (HTTPS on the loopback addresses, client
certificates with CN = user and O = groups, as kube-apiserver's x509 authenticator reads them).
EC P-256 keys keep generation fast enough to do per test session.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

VALIDITY = datetime.timedelta(days=365)
# Backdate notBefore a little so a peer with a slightly slow clock accepts a fresh certificate.
CLOCK_SKEW = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class CertKeyPair:
    """A PEM certificate and its unencrypted PKCS#8 PEM private key."""

    cert_pem: bytes
    key_pem: bytes

    @property
    def cert(self) -> x509.Certificate:
        """The parsed certificate."""
        return x509.load_pem_x509_certificate(self.cert_pem)

    def write(self, directory: str | os.PathLike[str], stem: str) -> tuple[Path, Path]:
        """Write ``STEM.crt`` and ``STEM.key`` (mode 0600) into ``directory``; return both paths."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        cert_path, key_path = directory / f"{stem}.crt", directory / f"{stem}.key"
        cert_path.write_bytes(self.cert_pem)
        key_path.touch(mode=0o600)
        key_path.chmod(0o600)  # touch() keeps the mode of a file that already exists
        key_path.write_bytes(self.key_pem)
        return cert_path, key_path


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _pair(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> CertKeyPair:
    return CertKeyPair(
        cert.public_bytes(serialization.Encoding.PEM),
        key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        ),
    )


def _builder(
    subject: x509.Name,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    validity: datetime.timedelta = VALIDITY,
) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - CLOCK_SKEW)
        .not_valid_after(now + validity)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(public_key), critical=False)
    )


def generate_ca(common_name: str = "framework-ca", validity: datetime.timedelta = VALIDITY) -> CertKeyPair:
    """A self-signed CA certificate allowed to sign end-entity certificates only."""
    key = _new_key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    cert = (
        _builder(name, name, key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            _key_usage(signs_certificates=True),
            critical=True,
        )
        .sign(key, hashes.SHA256())
    )
    return _pair(cert, key)


def _key_usage(*, signs_certificates: bool) -> x509.KeyUsage:
    """ECDSA signing; a CA also signs certificates and CRLs."""
    return x509.KeyUsage(
        digital_signature=True,
        content_commitment=False,
        key_encipherment=False,
        data_encipherment=False,
        key_agreement=False,
        key_cert_sign=signs_certificates,
        crl_sign=signs_certificates,
        encipher_only=False,
        decipher_only=False,
    )


def _issue(
    ca: CertKeyPair,
    subject: x509.Name,
    usage: x509.ObjectIdentifier,
    sans: Sequence[x509.GeneralName] = (),
    validity: datetime.timedelta = VALIDITY,
) -> CertKeyPair:
    ca_cert = ca.cert
    ca_key = serialization.load_pem_private_key(ca.key_pem, password=None)
    if not isinstance(ca_key, ec.EllipticCurvePrivateKey):
        raise TypeError("the CA key must be an EC key as made by generate_ca")
    key = _new_key()
    builder = (
        _builder(subject, ca_cert.subject, key.public_key(), validity)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(
            _key_usage(signs_certificates=False),
            critical=True,
        )
        .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
    )
    if sans:
        builder = builder.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
    return _pair(builder.sign(ca_key, hashes.SHA256()), key)


def _general_name(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def issue_serving_cert(
    ca: CertKeyPair,
    hosts: Iterable[str] = ("127.0.0.1", "::1", "localhost"),
    validity: datetime.timedelta = VALIDITY,
) -> CertKeyPair:
    """A serverAuth certificate whose SANs are ``hosts`` (IP literals as IPAddress, others as DNSName),
    valid for ``validity`` from now."""
    hosts = list(hosts)
    if not hosts:
        raise ValueError("a serving certificate needs at least one host")
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hosts[0])])
    return _issue(ca, subject, ExtendedKeyUsageOID.SERVER_AUTH, [_general_name(h) for h in hosts], validity)


def issue_client_cert(ca: CertKeyPair, user: str, groups: Iterable[str] = ()) -> CertKeyPair:
    """A clientAuth certificate for ``user`` (CN) in ``groups`` (one O attribute each, as kube-apiserver's
    X.509 client certificate authentication reads them)."""
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
    attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, user))
    return _issue(ca, x509.Name(attributes), ExtendedKeyUsageOID.CLIENT_AUTH)


def self_signed_cert(
    directory: str | os.PathLike[str],
    hosts: Iterable[str] = ("localhost", "127.0.0.1", "::1"),
    ca_name: str = "framework-webhook-ca",
) -> tuple[Path, Path, bytes]:
    """Write ``tls.crt``/``tls.key`` for ``hosts`` (signed by a new CA whose common name is ``ca_name``,
    the issuer a client sees: name what serves) into ``directory``.

    Returns ``(cert_path, key_path, ca_pem)``; trust ``ca_pem`` (e.g. a webhook's ``caBundle``, or
    ``ca_certs=`` in a client). For development and tests only: the CA key is thrown away.
    """
    ca = generate_ca(ca_name)
    cert_path, key_path = issue_serving_cert(ca, hosts).write(directory, "tls")
    return cert_path, key_path, ca.cert_pem
