"""Authentication: who a request is (kube-apiserver's request authenticators, k8s.io/apiserver
``pkg/authentication``).

Authentication order (22-1): client certificate, bearer token (static users, then ServiceAccount
tokens), then anonymous when enabled. Authorization is in ``authorizer.py``.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from framework.apiserver.auth import tokens
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.storage.store import Storage

MASTERS = "system:masters"
AUTHENTICATED = "system:authenticated"
UNAUTHENTICATED = "system:unauthenticated"
RBAC_GROUP = "rbac.authorization.k8s.io"


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: dict[str, list[str]] = field(default_factory=dict, hash=False, compare=False)

    def with_authenticated(self) -> UserInfo:
        if self.name == "system:anonymous" or AUTHENTICATED in self.groups:
            return self
        return UserInfo(self.name, self.uid, (*self.groups, AUTHENTICATED), self.extra)

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"username": self.name, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = self.extra
        return out


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")


class Authenticator:
    def __init__(self, storage: Storage, anonymous: bool = False) -> None:
        self.storage = storage
        self.anonymous = anonymous
        self.tokens: dict[str, UserInfo] = {}
        self.sa_tokens: dict[str, tokens.TokenClaims] = {}  # ServiceAccount tokens this server issued
        self.signer = tokens.TokenSigner()

    def add_token(self, user: UserInfo, token: str | None = None) -> str:
        token = token or secrets.token_urlsafe(24)
        self.tokens[token] = user
        return token

    def mint_service_account_token(
        self, private: dict[str, Any], audiences: list[str] | None = None, expiration_seconds: int = 3600
    ) -> tuple[str, tokens.TokenClaims]:
        """A signed JWT with the private claims ``private`` (``tokens.py``) and what checks it later."""
        token, claims = self.signer.sign(private, list(audiences or tokens.API_AUDIENCES), expiration_seconds)
        self.sa_tokens[token] = claims
        return token, claims

    def token_user(self, token: str) -> UserInfo | None:
        return self.check_token(token)[0]

    def check_token(
        self, token: str, audiences: Sequence[str] = tokens.API_AUDIENCES
    ) -> tuple[UserInfo | None, str, list[str]]:
        """The token's user, or None and why not (kube-apiserver's union of authenticator errors), and
        the ``audiences`` it is good for. A request to the API asks for the API's audiences; a
        TokenReview for those it names. A static token is good for the API's audiences only
        (``WrapAudienceAgnosticToken``): asked for none of them, it does not authenticate."""
        user = self.tokens.get(token)
        if user is not None:
            good = [a for a in audiences if a in tokens.API_AUDIENCES]
            if not good:
                return None, "invalid bearer token", []
            return user.with_authenticated(), "", good
        claims = self.sa_tokens.get(token)
        if claims is None:
            return None, "invalid bearer token", []
        good = claims.audiences_for(audiences)
        if not good:  # checked before the token's validity, as pkg/serviceaccount/jwt.go does
            return None, f"[invalid bearer token, {claims.audience_error(audiences)}]", []
        sa, err = tokens.validate(claims, self._get)
        if sa is None:
            # Tokens die with their ServiceAccount and with the object they are bound to.
            return None, f"[invalid bearer token, {err}]", []
        ns = sa["namespace"]
        info = UserInfo(
            f"system:serviceaccount:{ns}:{sa['name']}",
            sa["uid"],
            ("system:serviceaccounts", f"system:serviceaccounts:{ns}"),
            dict(sorted(sa["extra"].items())),  # Go's JSON writes map keys sorted
        )
        return info.with_authenticated(), "", good

    def _get(self, resource: str, namespace: str, name: str) -> dict | None:
        return self.storage.get(resource, (namespace, name))

    def authenticate(self, headers: Any, peercert: dict | None) -> UserInfo:
        if peercert:
            user = _cert_user(peercert)
            if user is not None:
                return user.with_authenticated()
        auth = headers.get("Authorization", "")
        if auth:
            scheme, _, token = auth.partition(" ")
            if scheme.lower() != "bearer" or not token.strip():
                raise unauthorized()
            user = self.token_user(token.strip())
            if user is None:
                raise unauthorized()  # an unknown token is 401 even with anonymous on (22-1)
            return user
        if self.anonymous:
            return UserInfo("system:anonymous", "", (UNAUTHENTICATED,))
        raise unauthorized()


def _cert_user(peercert: dict) -> UserInfo | None:
    cn, groups = None, []
    for rdn in peercert.get("subject", ()):
        for key, value in rdn:
            if key == "commonName":
                cn = value
            elif key == "organizationName":
                groups.append(value)
    return UserInfo(cn, "", tuple(groups)) if cn else None
