"""ServiceAccount tokens as kube-apiserver issues them: signed JWTs (10-6).

A TokenRequest answers a JWT with the claims of kube-apiserver's bound tokens
(``pkg/serviceaccount/claims.go``): ``iss``, ``sub`` (``system:serviceaccount:NS:NAME``), ``aud``
(the request's audiences, else the server's), ``iat``/``nbf``/``exp``, ``jti`` and the private
``kubernetes.io`` claim naming the namespace and ServiceAccount (and the bound object, if any).
Clients that decode the token (to read its expiry or subject) therefore work as against a cluster.

The signing key is an ECDSA P-256 key (ES256, one of the algorithms kube-apiserver accepts for
``--service-account-signing-key-file``), made when the first token is requested.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import uuid
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)  # --api-audiences defaults to the issuer


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


class TokenSigner:
    """Signs ServiceAccount JWTs with a key of its own."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._key: ec.EllipticCurvePrivateKey | None = None
        self._kid = ""

    def _signing_key(self) -> tuple[ec.EllipticCurvePrivateKey, str]:
        with self._lock:
            if self._key is None:
                self._key = ec.generate_private_key(ec.SECP256R1())
                der = self._key.public_key().public_bytes(Encoding.DER, PublicFormat.SubjectPublicKeyInfo)
                self._kid = _b64(hashlib.sha256(der).digest())  # kube-apiserver's key id: SHA-256 of the key
            return self._key, self._kid

    def sign(
        self,
        namespace: str,
        name: str,
        uid: str,
        audiences: list[str],
        expiration_seconds: int,
        bound: dict[str, Any] | None = None,
    ) -> tuple[str, int]:
        """A token for ``system:serviceaccount:NAMESPACE:NAME``; returns it and its expiry (Unix)."""
        key, kid = self._signing_key()
        now = int(time.time())
        exp = now + expiration_seconds
        private: dict[str, Any] = {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}
        if bound and bound.get("kind") in ("Pod", "Secret", "Node"):
            private[bound["kind"].lower()] = {"name": bound.get("name", ""), "uid": bound.get("uid", "")}
        claims = {
            "aud": list(audiences),
            "exp": exp,
            "iat": now,
            "iss": ISSUER,
            "jti": str(uuid.uuid4()),
            "kubernetes.io": private,
            "nbf": now,
            "sub": f"system:serviceaccount:{namespace}:{name}",
        }
        header = {"alg": "ES256", "kid": kid}
        signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}".encode()
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")  # JWS: raw R || S
        return f"{signing_input.decode()}.{_b64(signature)}", exp
