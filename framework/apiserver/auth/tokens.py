"""ServiceAccount tokens as kube-apiserver issues and checks them: signed JWTs (10-6).

A TokenRequest answers a JWT with the claims of kube-apiserver's bound tokens
(``pkg/serviceaccount/claims.go``): ``iss``, ``sub`` (``system:serviceaccount:NS:NAME``), ``aud``
(the request's audiences, else the server's), ``iat``/``nbf``/``exp``, ``jti`` and the private
``kubernetes.io`` claim naming the namespace, the ServiceAccount and the object the token is bound to
(``pod``, ``secret`` or ``node``, each ``{name, uid}``; a Pod-bound token also names the Pod's node).
Clients that decode the token (to read its expiry or subject) therefore work as against a cluster.

Checking a token (:func:`validate`) follows the same file's validator: the token must not have
expired, the ServiceAccount and the bound object must still exist with the UIDs of the claims and not
have been deleting for longer than the leeway; the user's ``extra`` then names the Pod, the Node and the
credential (``JTI=...``).

The signing key is an ECDSA P-256 key (ES256, one of the algorithms kube-apiserver accepts for
``--service-account-signing-key-file``), made when the first token is requested.
"""

from __future__ import annotations

import base64
import hashlib
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from framework.meta.strconv import quote

ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)  # --api-audiences defaults to the issuer
LEEWAY = 60  # go-jose's jwt.DefaultLeeway: objects deleting for less than this still validate

# k8s.io/apiserver/pkg/authentication/serviceaccount and user: the keys of a token user's ``extra``.
POD_NAME_KEY = "authentication.kubernetes.io/pod-name"
POD_UID_KEY = "authentication.kubernetes.io/pod-uid"
NODE_NAME_KEY = "authentication.kubernetes.io/node-name"
NODE_UID_KEY = "authentication.kubernetes.io/node-uid"
CREDENTIAL_ID_KEY = "authentication.kubernetes.io/credential-id"

# Reads one stored object: (resource, namespace, name) -> object or None.
Getter = Callable[[str, str, str], "dict | None"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


@dataclass
class TokenClaims:
    """What the server keeps of a token it issued: the private ``kubernetes.io`` claim, ``jti``, ``exp``
    and ``aud``."""

    private: dict[str, Any]
    jti: str = ""
    exp: int = 0  # 0: no expiry known (tokens stored by an older server)
    # The token's audiences; empty for tokens stored by an older server, which count as the API's
    # (kube-apiserver treats a token without ``aud`` as a legacy token for the API audiences).
    aud: tuple[str, ...] = ()

    def as_stored(self) -> dict[str, Any]:
        return {"private": self.private, "jti": self.jti, "exp": self.exp, "aud": list(self.aud)}

    def audiences_for(self, requested: Sequence[str]) -> list[str]:
        """The requested audiences this token is good for, in the order requested
        (``authenticator.Audiences.Intersect`` in ``pkg/serviceaccount/jwt.go``)."""
        good = self.aud or API_AUDIENCES
        return [a for a in requested if a in good]

    def audience_error(self, requested: Sequence[str]) -> str:
        """The JWT authenticator's error for a token none of whose audiences was requested."""
        have = go_quoted(self.aud or API_AUDIENCES)
        return f"token audiences {have} is invalid for the target audiences {go_quoted(requested)}"

    @classmethod
    def from_stored(cls, value: object) -> TokenClaims:
        if isinstance(value, list):  # [namespace, name, uid]: a ServiceAccount-only token
            ns, name, uid = value[0], value[1], value[2]
            return cls({"namespace": ns, "serviceaccount": {"name": name, "uid": uid}})
        assert isinstance(value, dict)
        return cls(
            dict(value.get("private") or {}),
            value.get("jti") or "",
            int(value.get("exp") or 0),
            tuple(value.get("aud") or ()),
        )


def go_quoted(values: Sequence[str]) -> str:
    """A list of strings as Go's ``%q`` prints a ``[]string``: ``["a" "b"]``."""
    return "[" + " ".join(quote(v) for v in values) + "]"


def ref(obj: dict) -> dict[str, str]:
    """The ``{name, uid}`` of an object, as a private claim names it."""
    meta = obj.get("metadata") or {}
    return {"name": meta.get("name", ""), "uid": meta.get("uid", "")}


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
        self, private: dict[str, Any], audiences: list[str], expiration_seconds: int
    ) -> tuple[str, TokenClaims]:
        """A token with the private claims ``private`` (``namespace``, ``serviceaccount`` and the bound
        object's ``pod``/``secret``/``node``); returns it and what the server keeps to check it."""
        key, kid = self._signing_key()
        now = int(time.time())
        exp = now + expiration_seconds
        sa = private["serviceaccount"]
        jti = str(uuid.uuid4())
        claims = {
            "aud": list(audiences),
            "exp": exp,
            "iat": now,
            "iss": ISSUER,
            "jti": jti,
            "kubernetes.io": private,
            "nbf": now,
            "sub": f"system:serviceaccount:{private['namespace']}:{sa['name']}",
        }
        header = {"alg": "ES256", "kid": kid}
        signing_input = f"{_b64(orjson.dumps(header))}.{_b64(orjson.dumps(claims))}".encode()
        r, s = decode_dss_signature(key.sign(signing_input, ec.ECDSA(hashes.SHA256())))
        signature = r.to_bytes(32, "big") + s.to_bytes(32, "big")  # JWS: raw R || S
        return f"{signing_input.decode()}.{_b64(signature)}", TokenClaims(private, jti, exp, tuple(audiences))


def _deleting_too_long(obj: dict, now: float) -> bool:
    ts = (obj.get("metadata") or {}).get("deletionTimestamp")
    if not ts:
        return False
    when = datetime.fromisoformat(ts.replace("Z", "+00:00")).timestamp()
    return when < now - LEEWAY


INVALIDATED = "service account token has been invalidated"


def _check_bound(kind: str, bound: dict, obj: dict | None, now: float) -> str:
    """Why a token bound to ``obj`` (claimed as ``bound``) is no longer valid, or ""."""
    if obj is None:
        return INVALIDATED
    uid = ref(obj)["uid"]
    if uid != bound.get("uid"):
        return f"{kind} UID ({uid}) does not match service account {kind} ref claim ({bound.get('uid', '')})"
    return INVALIDATED if _deleting_too_long(obj, now) else ""


def validate(claims: TokenClaims, get: Getter, now: float | None = None) -> tuple[dict[str, Any] | None, str]:
    """The token's user as ``{name, uid, namespace, extra}``, or None and the validator's error."""
    now = time.time() if now is None else now
    if claims.exp and now > claims.exp + LEEWAY:
        return None, "service account token has expired"
    private = claims.private
    ns = private.get("namespace", "")
    sa_ref = private.get("serviceaccount") or {}
    sa = get("serviceaccounts", ns, sa_ref.get("name", ""))
    if sa is None:
        return None, f'serviceaccounts "{sa_ref.get("name", "")}" not found'
    if ref(sa)["uid"] != sa_ref.get("uid"):
        return None, f"service account UID ({ref(sa)['uid']}) does not match claim ({sa_ref.get('uid', '')})"
    if _deleting_too_long(sa, now):
        return None, f"service account {ns}/{sa_ref.get('name', '')} has been deleted"
    extra: dict[str, list[str]] = {}
    bound_to = [("secret", "secrets", ns), ("pod", "pods", ns)]
    if private.get("pod") is None:  # a Node-bound token (a Pod-bound one only names its Pod's node)
        bound_to.append(("node", "nodes", ""))
    for kind, resource, obj_ns in bound_to:
        bound = private.get(kind)
        if bound is not None:
            err = _check_bound(kind, bound, get(resource, obj_ns, bound.get("name", "")), now)
            if err:
                return None, err
    pod_ref, node_ref = private.get("pod"), private.get("node")
    if pod_ref is not None:
        extra[POD_NAME_KEY], extra[POD_UID_KEY] = [pod_ref.get("name", "")], [pod_ref.get("uid", "")]
    if node_ref is not None:
        extra[NODE_NAME_KEY] = [node_ref.get("name", "")]
        if node_ref.get("uid"):
            extra[NODE_UID_KEY] = [node_ref["uid"]]
    if claims.jti:
        extra[CREDENTIAL_ID_KEY] = [f"JTI={claims.jti}"]
    user = {"name": sa_ref.get("name", ""), "uid": sa_ref.get("uid", ""), "namespace": ns, "extra": extra}
    return user, ""
