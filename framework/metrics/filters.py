"""Authentication and authorization of ``/metrics`` callers by the API server, as controller-runtime's
``pkg/metrics/filters.WithAuthenticationAndAuthorization``.

The caller's bearer token is checked with a ``TokenReview``; the user it names must be allowed ``get``
on the non-resource URL ``/metrics`` (a ``SubjectAccessReview``), which a ClusterRole grants::

    rules:
    - nonResourceURLs: ["/metrics"]
      verbs: ["get"]

The process' own client sends the reviews, so it needs ``create`` on ``tokenreviews``
(authentication.k8s.io) and ``subjectaccessreviews`` (authorization.k8s.io), nothing else.

Answers are cached as the delegating authenticator and authorizer of ``k8s.io/apiserver`` cache them
with controller-runtime's settings: a token's review for 1 minute (authenticated or not), an allowed
decision for 5 minutes and a denied one for 30 seconds, so a Prometheus scraping every few seconds
costs the API server a review now and then, not two per scrape. A review that fails (the API server
unreachable) is not cached and answers 500.

Refusals are plain text as Go's ``http.Error``: ``401 Unauthorized`` without a valid token, ``403`` naming
the user and the permission that is missing.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import structlog

from framework.server import Request, Response, RouteHandler

__all__ = [
    "ALLOW_CACHE_TTL",
    "DENY_CACHE_TTL",
    "TOKEN_CACHE_TTL",
    "AuthenticatedUser",
    "DelegatingAuth",
    "ReviewFailed",
]

log = structlog.get_logger("framework.metrics")

TOKEN_CACHE_TTL = 60.0
"""Seconds a TokenReview's answer is reused (controller-runtime's ``CacheTTL``: 1 minute)."""
ALLOW_CACHE_TTL = 300.0
"""Seconds an allowed SubjectAccessReview is reused (``AllowCacheTTL``: 5 minutes)."""
DENY_CACHE_TTL = 30.0
"""Seconds a denied SubjectAccessReview is reused (``DenyCacheTTL``: 30 seconds)."""
REVIEW_TIMEOUT = 10.0
"""Seconds a review may take (controller-runtime's ``TokenAccessReviewTimeout``)."""
_CACHE_SIZE = 4096  # entries per cache: random tokens cannot grow the process without bound

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class _TTLCache(Generic[K, V]):
    """A bounded LRU of ``key -> (value, expiry)``; thread-safe."""

    def __init__(self, size: int, now: Callable[[], float]) -> None:
        self._size = size
        self._now = now
        self._lock = threading.Lock()
        self._items: OrderedDict[K, tuple[V, float]] = OrderedDict()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            if found[1] <= self._now():
                del self._items[key]
                return None
            self._items.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, ttl: float) -> None:
        with self._lock:
            self._items[key] = (value, self._now() + ttl)
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


@dataclass(frozen=True)
class AuthenticatedUser:
    """Who a TokenReview says the token belongs to."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_review(cls, user: dict[str, Any]) -> AuthenticatedUser:
        extra = user.get("extra") or {}
        return cls(
            name=str(user.get("username") or ""),
            uid=str(user.get("uid") or ""),
            groups=tuple(str(g) for g in user.get("groups") or ()),
            extra=tuple(sorted((str(k), tuple(str(v) for v in vs or ())) for k, vs in extra.items())),
        )


class ReviewFailed(Exception):
    """The API server did not answer a review (not cached; the caller gets a 500)."""


class DelegatingAuth:
    """Checks callers with the API server through ``client`` (a :class:`~framework.client.Client`).

    ``filter(handler)`` wraps a route handler; ``authenticate(token)`` and ``authorize(user, verb,
    path)`` are the two steps. ``clock`` (``monotonic()``) drives the cache expiry.
    """

    def __init__(
        self,
        client: Any,
        *,
        token_ttl: float = TOKEN_CACHE_TTL,
        allow_ttl: float = ALLOW_CACHE_TTL,
        deny_ttl: float = DENY_CACHE_TTL,
        clock: Any = None,
    ) -> None:
        self.client = client
        self.token_ttl, self.allow_ttl, self.deny_ttl = token_ttl, allow_ttl, deny_ttl
        now = clock.monotonic if clock is not None else time.monotonic
        self._tokens: _TTLCache[bytes, AuthenticatedUser] = _TTLCache(_CACHE_SIZE, now)
        self._decisions: _TTLCache[tuple[Any, ...], tuple[bool, str]] = _TTLCache(_CACHE_SIZE, now)

    # -- the two steps --------------------------------------------------------------------------------

    def authenticate(self, token: str) -> AuthenticatedUser | None:
        """The token's user, or ``None`` if the API server does not accept it; raises
        :class:`ReviewFailed` when the review cannot be made."""
        key = hashlib.sha256(token.encode()).digest()  # the cache never holds a token itself
        cached = self._tokens.get(key)
        if cached is not None:
            return None if cached is _UNAUTHENTICATED else cached
        review = self._create(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}},
        )
        status = review.get("status") or {}
        user = (
            AuthenticatedUser.from_review(status.get("user") or {}) if status.get("authenticated") else None
        )
        if user is not None and not user.name:
            user = None
        self._tokens.put(key, user or _UNAUTHENTICATED, self.token_ttl)
        return user

    def authorize(self, user: AuthenticatedUser, verb: str, path: str) -> tuple[bool, str]:
        """``(allowed, reason)`` of ``verb`` on the non-resource URL ``path`` for ``user``; raises
        :class:`ReviewFailed` when the review cannot be made."""
        key = (user, verb, path)
        cached = self._decisions.get(key)
        if cached is not None:
            return cached
        spec: dict[str, Any] = {
            "user": user.name,
            "groups": list(user.groups),
            "nonResourceAttributes": {"path": path, "verb": verb},
        }
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        review = self._create(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec},
        )
        status = review.get("status") or {}
        decision = (bool(status.get("allowed")) and not status.get("denied"), str(status.get("reason") or ""))
        self._decisions.put(key, decision, self.allow_ttl if decision[0] else self.deny_ttl)
        return decision

    def _create(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            answer = self.client.request("POST", path, body=body, timeout=REVIEW_TIMEOUT)
        except Exception as error:  # network, 403 for the process' own RBAC, 5xx: nothing to cache
            raise ReviewFailed(f"{body['kind']}: {error}") from error
        if not isinstance(answer, dict):
            raise ReviewFailed(f"{body['kind']}: the API server answered no object")
        return answer

    # -- the filter -----------------------------------------------------------------------------------

    def filter(self, handler: RouteHandler) -> RouteHandler:
        """``handler`` behind authentication (401) and authorization (403) of the request's path."""

        def serve(request: Request) -> Response:
            token = _bearer_token(request.headers.get("Authorization"))
            try:
                user = self.authenticate(token) if token else None
            except ReviewFailed as error:
                log.error("metrics authentication failed", error=str(error))
                return Response.text("Authentication failed\n", 500)
            if user is None:
                return Response.text("Unauthorized\n", 401)
            verb, path = request.method.lower(), request.path
            try:
                allowed, reason = self.authorize(user, verb, path)
            except ReviewFailed as error:
                log.error("metrics authorization failed", user=user.name, error=str(error))
                return Response.text(f"Authorization for user {user.name} failed\n", 500)
            if not allowed:
                log.debug("metrics authorization denied", user=user.name, reason=reason)
                return Response.text(
                    f"Authorization denied for user {user.name}: {verb} on the non-resource URL {path} "
                    f'is not allowed (a ClusterRole with nonResourceURLs: ["{path}"], verbs: ["{verb}"] '
                    "bound to the user grants it)\n",
                    403,
                )
            return handler(request)

        return serve


_UNAUTHENTICATED = AuthenticatedUser(name="")
"""The cached answer "the token is not valid" (a cache miss is ``None``)."""


def _bearer_token(header: str | None) -> str:
    """The token of ``Authorization: Bearer <token>`` (the scheme in any case, as k8s.io/apiserver's
    bearertoken authenticator), else ``""``."""
    if not header:
        return ""
    scheme, _, token = header.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""
