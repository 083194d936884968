"""``Client``: a raw-JSON Kubernetes client on the official package's configuration and auth.

Objects are plain dicts decoded with orjson — never the official model classes, which cost ~10x the
CPU and ~3x the memory. Kinds are resolved to URLs through :class:`~framework.client.RESTMapper`.
Every request passes a client-side token bucket (client-go's 5 qps / burst 10 by default), 429s (and
5xx answers carrying ``Retry-After``) are retried after the delay the server asks for, and failures
raise the typed errors of :mod:`framework.client.errors`.
"""

from __future__ import annotations

import copy
import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlencode

import orjson
import structlog
import urllib3
from prometheus_client import CollectorRegistry

from framework.meta import jsoncodec
from framework.meta.object import get_metadata

from . import decode, errors
from .config import SERVICE_ACCOUNT_DIR, RESTConfig, in_cluster_config, load_kubeconfig
from .deadline import check_deadline
from .interfaces import FieldSelectorArg, LabelSelectorArg, PatchType, Reader
from .metrics import ERROR_CODE, HostStats, rest_client_collector
from .rate_limit import MonotonicClock, SystemClock, TokenBucket
from .rest_mapper import RESTMapper, RESTMapping
from .selectors import field_selector_string, label_selector_string
from .transport import AuthHeaders, HostTransport, before_send, default_user_agent
from .watch import Watch

__all__ = ["PATCH_CONTENT_TYPES", "Client", "PatchType", "TimeoutSpec"]

# Metadata-only responses (PartialObjectMetadata), with plain JSON as the fallback.
METADATA_ACCEPT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"
METADATA_LIST_ACCEPT = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"


log = structlog.get_logger("framework.client")

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "strategic": "application/strategic-merge-patch+json",
    "apply": "application/apply-patch+yaml",
}
TimeoutSpec = float | tuple[float | None, float | None] | None
"""Seconds for both connect and read, or ``(connect, read)``; ``None`` means the client default."""

_MAX_RETRY_AFTER = 60.0
_IDEMPOTENT = frozenset({"GET", "HEAD"})


_WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
# urllib3 retries and redirects off, built once (urllib3 would build one per request from ``False``).
_NO_RETRIES = urllib3.Retry(total=False, redirect=False)


class Client:
    """A thread-safe Kubernetes API client returning plain dicts.

    Build it with :meth:`from_kubeconfig`, :meth:`in_cluster` or :meth:`from_configuration`.

    Args:
        configuration: a ``kubernetes.client.Configuration`` (host, TLS, credentials, proxy).
        qps: client-side token-bucket rate (requests per second); ``0`` or less disables throttling.
        burst: token-bucket capacity.
        max_retries: how many times a 429 (or a 5xx with ``Retry-After``, or a broken idempotent
            request) is retried before the error is raised.
        timeout: default per-request timeout, seconds or ``(connect, read)``.
        user_agent: the ``User-Agent`` header (default ``gcm-framework/VERSION (OS/ARCH) python/X.Y``).
        clock: object with ``monotonic()`` and ``sleep()`` for throttling and retry waits.
        namespace: the default namespace reported by :attr:`namespace` (taken from the kubeconfig
            context or the service account when built by the constructors); methods never apply it
            implicitly.
        pool_maxsize: connections kept per host (default: the Configuration's, at least 16).
        gc_pause_bytes: responses at least this large are decoded with the cyclic GC paused (see
            :mod:`framework.client.decode`); ``None`` never pauses it.
        registry: a Prometheus registry for client-go's ``rest_client_*`` metrics
            (:mod:`framework.client.metrics`); ``None`` (the default) records none. A
            :class:`~framework.manager.Manager` makes the client it is given report to the manager's
            registry, so ``/metrics`` shows them; a client made for a script or a test needs none.
    """

    def __init__(
        self,
        configuration: Any,
        *,
        qps: float = 5.0,
        burst: int = 10,
        max_retries: int = 10,
        timeout: TimeoutSpec = (10.0, 60.0),
        user_agent: str | None = None,
        clock: MonotonicClock | None = None,
        namespace: str | None = None,
        pool_maxsize: int | None = None,
        gc_pause_bytes: int | None = decode.DEFAULT_GC_PAUSE_BYTES,
        registry: CollectorRegistry | None = None,
    ) -> None:
        self.configuration = configuration
        self.host = str(configuration.host).rstrip("/")
        self.clock: MonotonicClock = clock or SystemClock()
        self.rate_limiter = TokenBucket(qps, burst, self.clock)
        self.max_retries = max(0, int(max_retries))
        self.timeout = _timeout(timeout) or urllib3.Timeout(connect=10.0, read=60.0)
        self.user_agent = user_agent or default_user_agent()
        self.namespace = namespace or "default"
        self.gc_pause_bytes = gc_pause_bytes
        self._auth = AuthHeaders(configuration)
        self._transport = HostTransport(configuration, self.host, pool_maxsize)
        self.mapper = RESTMapper(lambda path: self.request("GET", path))
        self.metrics_registry: CollectorRegistry | None = None
        self._rest_stats: HostStats | None = None
        if registry is not None:
            self.report_metrics_to(registry)

    # -- construction ---------------------------------------------------------------------------------

    @classmethod
    def from_configuration(cls, configuration: Any, **kwargs: Any) -> Client:
        """A client for an existing ``kubernetes.client.Configuration`` (keyword args as ``__init__``)."""
        return cls(configuration, **kwargs)

    @classmethod
    def from_config(cls, config: RESTConfig, **kwargs: Any) -> Client:
        """A client for a :class:`~framework.client.config.RESTConfig` (:func:`~framework.client.get_config`),
        with its namespace as :attr:`namespace` unless ``namespace`` is given (keyword args as
        ``__init__``)."""
        kwargs.setdefault("namespace", config.namespace)
        return cls(config.configuration, **kwargs)

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike | None = None, context: str | None = None, **kwargs: Any
    ) -> Client:
        """A client for a kubeconfig context, loaded by ``kubernetes.config`` (exec and token plugins,
        client certificates, ``KUBECONFIG`` with several files when ``path`` is ``None``).
        :func:`~framework.client.get_config` searches the usual places instead (flag, ``$KUBECONFIG``,
        in-cluster, ``~/.kube/config``)."""
        cfg, namespace = load_kubeconfig(os.fspath(path) if path is not None else None, context)
        kwargs.setdefault("namespace", namespace)
        return cls(cfg, **kwargs)

    @classmethod
    def in_cluster(
        cls, service_account_dir: str | os.PathLike[str] = SERVICE_ACCOUNT_DIR, **kwargs: Any
    ) -> Client:
        """A client from the pod's service account (``token``, ``ca.crt`` and ``namespace`` in
        ``service_account_dir``; the token re-read as it rotates)."""
        return cls.from_config(in_cluster_config(service_account_dir), **kwargs)

    #: Called as ``write_guard(method, path)`` before every attempt of a write (POST, PUT, PATCH, DELETE,
    #: retries included); it raises to refuse the write. The manager sets it so a leader whose lease
    #: ran out writes nothing.
    write_guard: Callable[[str, str], None] | None = None

    #: What answers :meth:`get` and :meth:`list` instead of the API server (:meth:`with_cache`).
    cache: Reader | None = None
    #: Kinds ``(apiVersion, kind)`` read live although :attr:`cache` is set.
    disable_for: frozenset[tuple[str, str]] = frozenset()

    def with_cache(self, cache: Reader | None, *, disable_for: Iterable[tuple[str, str]] = ()) -> Client:
        """This client with ``cache`` in front of its reads, as controller-runtime's
        ``client.Options.Cache{Reader, DisableFor}``: ``get`` and ``list`` of every kind not in
        ``disable_for`` are answered by ``cache`` (the manager's: its informers, started on the first
        read of a kind), everything else (writes, watches, :meth:`request`) goes to the API server.

        The copy shares this client's connections, rate limiter, discovery and credentials.
        ``cache=None`` gives a client reading everything live.
        """
        clone = copy.copy(self)
        clone.cache = cache
        clone.disable_for = frozenset(disable_for)
        return clone

    def reading_live(self, *kinds: tuple[str, str]) -> Client:
        """This client, reading ``kinds`` live as well (added to :attr:`disable_for`), e.g. to re-check a
        decision on fresh objects of one kind while the others come from the cache."""
        if self.cache is None:
            return self
        return self.with_cache(self.cache, disable_for=self.disable_for.union(kinds))

    def report_metrics_to(self, registry: CollectorRegistry | None) -> None:
        """Count this client's requests in ``registry``'s ``rest_client_*`` metrics from now on
        (``None``: stop counting). Copies made later (:meth:`with_cache`) report there too."""
        self.metrics_registry = registry
        if registry is None:
            self._rest_stats = None
            return
        host = urllib3.util.parse_url(self.host)
        netloc = host.host or "none"
        if host.port is not None:
            netloc = f"{netloc}:{host.port}"
        self._rest_stats = rest_client_collector(registry).stats_for(netloc)

    def close(self) -> None:
        """Close pooled connections. Open watches keep their own connection until closed."""
        self._transport.clear()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- low level ------------------------------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: TimeoutSpec = None,
    ) -> Any:
        """Send one request (throttled, retried) and return the decoded JSON body.

        ``body`` may be bytes (sent as is) or anything orjson encodes; ``params`` values that are
        ``None`` are left out and booleans become ``true``/``false``. A non-JSON answer is returned as
        bytes, an empty one as ``None``. Errors raise :class:`~framework.client.errors.APIError`.
        """
        resp = self._send(
            method,
            path,
            params=params,
            body=body,
            content_type=content_type,
            headers=headers,
            timeout=timeout,
        )
        data = resp.data
        if not data:
            return None
        ctype = resp.headers.get("Content-Type", "")
        if "json" in ctype or not ctype:
            try:
                return decode.loads(data, self.gc_pause_bytes)
            except orjson.JSONDecodeError:
                if "json" in ctype:
                    raise errors.APIError(
                        resp.status, "InternalError", f"{method} {path}: invalid JSON in response"
                    ) from None
        return data

    def _send(
        self,
        method: str,
        path: str,
        *,
        params: Mapping[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: TimeoutSpec | urllib3.Timeout = None,
        stream: bool = False,
    ) -> urllib3.BaseHTTPResponse:
        check_deadline()
        method = method.upper()
        stats = self._rest_stats
        if stats is None:
            return self._attempts(method, path, params, body, content_type, headers, timeout, stream, None)
        # client-go's request latency: the whole call, throttling and retries included, any outcome.
        started = time.monotonic()
        resp = None
        try:
            resp = self._attempts(method, path, params, body, content_type, headers, timeout, stream, stats)
            return resp
        finally:
            size = len(resp.data) if resp is not None and not stream else None
            stats.call(method, time.monotonic() - started, size)

    def _attempts(
        self,
        method: str,
        path: str,
        params: Mapping[str, Any] | None,
        body: Any,
        content_type: str | None,
        headers: Mapping[str, str] | None,
        timeout: TimeoutSpec | urllib3.Timeout,
        stream: bool,
        stats: HostStats | None,
    ) -> urllib3.BaseHTTPResponse:
        query = _query(params)
        target = path + "?" + query if query else path
        url = self.host + target
        payload = body if body is None or isinstance(body, bytes) else jsoncodec.dumps(body)
        t = timeout if isinstance(timeout, urllib3.Timeout) else (_timeout(timeout) or self.timeout)
        attempt = 0
        while True:
            waited = self.rate_limiter.accept()
            if waited > 1.0:
                log.info("client-side throttling", waited=round(waited, 3), method=method, path=path)
            hdrs = {"Accept": "application/json", "User-Agent": self.user_agent, **self._auth.get()}
            if payload is not None:
                hdrs["Content-Type"] = content_type or "application/json"
            if headers:
                hdrs.update(headers)
            # Asked before every attempt, not once per call: a retry (Retry-After, throttling) can be
            # sent long after the first try, e.g. by a process paused meanwhile past its lease; and
            # asked again as the request's first byte goes out (transport.before_send).
            guard = None
            if self.write_guard is not None and method in _WRITE_METHODS:
                self.write_guard(method, path)
                guard = functools.partial(self.write_guard, method, path)
            try:
                try:
                    with before_send(guard):
                        resp = self._transport.urlopen(
                            method,
                            target,
                            body=payload,
                            headers=hdrs,
                            timeout=t,
                            retries=_NO_RETRIES,
                            redirect=False,
                            preload_content=not stream,
                        )
                except urllib3.exceptions.HTTPError:
                    if stats is not None:  # no answer: client-go counts the attempt as "<error>"
                        stats.attempt(method, waited, len(payload) if payload else 0, ERROR_CODE)
                    raise
            except urllib3.exceptions.NewConnectionError as e:  # before ConnectTimeoutError: a subclass
                raise errors.NetworkError(0, "NetworkError", f"{method} {url}: {e}") from e
            except urllib3.exceptions.TimeoutError as e:
                raise errors.Timeout(0, "Timeout", f"{method} {url}: client-side timeout: {e}") from e
            except urllib3.exceptions.ProtocolError as e:
                # A pooled keep-alive connection the server already closed: safe to resend a read.
                if method in _IDEMPOTENT and attempt < self.max_retries:
                    attempt += 1
                    self.clock.sleep(min(0.05 * 2**attempt, 1.0))
                    continue
                raise errors.NetworkError(0, "NetworkError", f"{method} {url}: {e}") from e
            except urllib3.exceptions.HTTPError as e:
                raise errors.NetworkError(0, "NetworkError", f"{method} {url}: {e}") from e
            if stats is not None:
                stats.attempt(method, waited, len(payload) if payload else 0, str(resp.status))
            warning = resp.headers.get("Warning")
            if warning:
                log.warning("API warning", method=method, path=path, warning=warning)
            if resp.status < 400:
                return resp
            data = resp.read() if stream else resp.data
            if stream:
                resp.release_conn()
            err = errors.from_response(resp.status, data, resp.headers)
            delay = self._retry_delay(err, "Retry-After" in resp.headers, attempt)
            if delay is None:
                if stats is not None:
                    stats.response(method, len(data))
                raise err
            attempt += 1
            log.info(
                "retrying request",
                method=method,
                path=path,
                status=err.status,
                reason=err.reason,
                delay=delay,
                attempt=attempt,
            )
            self.clock.sleep(delay)

    def _retry_delay(self, err: errors.APIError, has_retry_after: bool, attempt: int) -> float | None:
        if attempt >= self.max_retries:
            return None
        if err.status == 429:
            return min(err.retry_after if err.retry_after is not None else 1.0, _MAX_RETRY_AFTER)
        if err.status >= 500 and has_retry_after and err.retry_after is not None:
            return min(err.retry_after, _MAX_RETRY_AFTER)
        return None

    # -- mapping --------------------------------------------------------------------------------------

    def mapping(self, api_version: str, kind: str) -> RESTMapping:
        """The REST mapping of a kind (cached discovery; raises ``NoKindMatchError`` if unknown)."""
        return self.mapper.mapping(api_version, kind)

    def _resolve(
        self, api_version: str, kind: str, namespace: str | None, *, collection: bool
    ) -> tuple[RESTMapping, str | None]:
        m = self.mapper.mapping(api_version, kind)
        return m, m.scoped_namespace(namespace, collection=collection)

    # -- reads ----------------------------------------------------------------------------------------

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool | None = None,
        subresource: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Read one object (``NotFound`` if there is none).

        ``metadata_only`` asks for a ``PartialObjectMetadata`` (only ``metadata``; the ``apiVersion`` and
        ``kind`` of the kind read, as the cache has it). ``subresource`` reads e.g. ``status`` or ``scale``.
        With a :attr:`cache` the object comes from it (``timeout`` does not apply; a ``subresource``
        is refused with ``ValueError``).
        """
        cache = self.cache
        if cache is not None and not (self.disable_for and (api_version, kind) in self.disable_for):
            if subresource is not None:
                _not_cached(api_version, kind, subresource=subresource)
            return cache.get(api_version, kind, name, namespace, metadata_only=metadata_only)
        m, ns = self._resolve(api_version, kind, namespace, collection=False)
        headers = {"Accept": METADATA_ACCEPT} if metadata_only else None
        obj = self.request("GET", m.path(ns, name, subresource), headers=headers, timeout=timeout)
        if metadata_only and isinstance(obj, dict) and obj.get("kind") == "PartialObjectMetadata":
            obj["apiVersion"], obj["kind"] = api_version, m.kind
        return obj

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        metadata_only: bool | None = None,
        limit: int | None = None,
        continue_: str | None = None,
        resource_version: str | None = None,
        resource_version_match: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """List objects (across all namespaces when a namespaced kind gets no ``namespace``).

        ``label_selector``: a string, a map of labels or a ``LabelSelector`` dict; ``field_selector``: a
        string or a map of exact matches (see :mod:`framework.client.interfaces`). ``metadata_only``
        asks for a ``PartialObjectMetadataList`` (items carry only ``metadata``).

        Returns the List dict (``items``, ``metadata.resourceVersion``, ``metadata.continue``). Items
        lacking ``apiVersion``/``kind`` (built-in lists omit them) get them filled in, as client-go's
        unstructured decoding does, so listed and watched objects look alike.

        With a :attr:`cache` the List comes from it (``timeout`` does not apply; paging and
        resourceVersion options are refused with ``ValueError``).
        """
        cache = self.cache
        if cache is not None and not (self.disable_for and (api_version, kind) in self.disable_for):
            if limit is not None or continue_ or resource_version is not None or resource_version_match:
                _not_cached(
                    api_version,
                    kind,
                    limit=limit,
                    continue_=continue_,
                    resource_version=resource_version,
                    resource_version_match=resource_version_match,
                )
            return cache.list(
                api_version,
                kind,
                namespace,
                label_selector=label_selector,
                field_selector=field_selector,
                metadata_only=metadata_only,
            )
        m, ns = self._resolve(api_version, kind, namespace, collection=True)
        params = {
            "labelSelector": label_selector_string(label_selector),
            "fieldSelector": field_selector_string(field_selector),
            "limit": limit,
            "continue": continue_,
            "resourceVersion": resource_version,
            "resourceVersionMatch": resource_version_match,
        }
        headers = {"Accept": METADATA_LIST_ACCEPT} if metadata_only else None
        result = self.request("GET", m.path(ns), params=params, headers=headers, timeout=timeout)
        if metadata_only:
            # As controller-runtime's metadata client restores the GVK asked for, and as the cache
            # serves them: a metadata-only Deployment is still a Deployment.
            result["apiVersion"], result["kind"] = api_version, m.kind + "List"
        for item in result.get("items") or ():
            if metadata_only or "kind" not in item:
                item["kind"] = m.kind
            if metadata_only or "apiVersion" not in item:
                item["apiVersion"] = api_version
        return result

    def watch(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        resource_version: str | None = None,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        timeout_seconds: int | None = None,
        allow_watch_bookmarks: bool = True,
        read_timeout: float | None = None,
        *,
        send_initial_events: bool | None = None,
        resource_version_match: str | None = None,
        metadata_only: bool = False,
    ) -> Watch:
        """Open a watch; returns a :class:`~framework.client.watch.Watch` of ``(type, object)`` tuples.

        The request is sent before this returns, so HTTP errors (bad selector, 429 after retries)
        raise here; ``ERROR`` events raise while iterating. ``timeout_seconds`` asks the server to end
        the stream; ``read_timeout`` is the client-side inactivity limit (``None``: wait forever).
        """
        m, ns = self._resolve(api_version, kind, namespace, collection=True)
        params = {
            "watch": "true",
            "resourceVersion": resource_version,
            "labelSelector": label_selector_string(label_selector),
            "fieldSelector": field_selector_string(field_selector),
            "timeoutSeconds": timeout_seconds,
            "allowWatchBookmarks": True if allow_watch_bookmarks else None,
            "sendInitialEvents": send_initial_events,
            "resourceVersionMatch": resource_version_match,
        }
        path = m.path(ns)
        t = urllib3.Timeout(connect=self.timeout.connect_timeout, read=read_timeout)
        headers = {"Accept": METADATA_ACCEPT} if metadata_only else None
        resp = self._send("GET", path, params=params, headers=headers, timeout=t, stream=True)
        return Watch(resp, path=path, resource_version=resource_version, read_timeout=read_timeout)

    # -- writes ---------------------------------------------------------------------------------------

    def create(
        self,
        obj: Mapping[str, Any],
        dry_run: bool = False,
        field_manager: str | None = None,
        *,
        field_validation: str | None = None,
        subresource: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Create ``obj`` (its ``apiVersion``, ``kind`` and ``metadata.namespace`` pick the URL)."""
        api_version, kind, name, namespace = _identity(obj)
        m, ns = self._resolve(api_version, kind, namespace, collection=True)
        if m.namespaced and ns is None:
            raise ValueError(f"{kind} ({api_version}) is namespaced: metadata.namespace is required")
        path = m.path(ns, name, subresource) if subresource else m.path(ns)
        params = _write_params(dry_run, field_manager, field_validation)
        return self.request("POST", path, params=params, body=obj, timeout=timeout)

    def update(
        self,
        obj: Mapping[str, Any],
        dry_run: bool = False,
        field_manager: str | None = None,
        *,
        field_validation: str | None = None,
        subresource: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Replace ``obj`` (PUT). Include ``metadata.resourceVersion`` for optimistic concurrency."""
        api_version, kind, name, namespace = _identity(obj)
        if not name:
            raise ValueError("update needs metadata.name")
        m, ns = self._resolve(api_version, kind, namespace, collection=False)
        params = _write_params(dry_run, field_manager, field_validation)
        return self.request("PUT", m.path(ns, name, subresource), params=params, body=obj, timeout=timeout)

    def update_status(
        self,
        obj: Mapping[str, Any],
        dry_run: bool = False,
        field_manager: str | None = None,
        *,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Replace the ``status`` of ``obj`` through its ``/status`` subresource."""
        return self.update(obj, dry_run, field_manager, subresource="status", timeout=timeout)

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        *,
        dry_run: bool = False,
        field_validation: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Patch an object. ``patch_type``: ``merge`` (RFC 7386), ``json`` (RFC 6902, a list of ops),
        ``strategic`` (built-in kinds only) or ``apply`` (server-side apply: the full desired object,
        sent as JSON with ``application/apply-patch+yaml``; needs ``field_manager``, may ``force``).
        """
        content_type = PATCH_CONTENT_TYPES.get(patch_type)
        if content_type is None:
            raise ValueError(f"patch_type must be one of {sorted(PATCH_CONTENT_TYPES)}, not {patch_type!r}")
        if patch_type == "apply":
            if not field_manager:
                raise ValueError("an apply patch requires field_manager")
        elif force is not None:
            raise ValueError("force is only valid for apply patches")
        if patch_type == "json" and not isinstance(patch, list | tuple | bytes | str):
            raise ValueError("a JSON patch is a list of operations")
        m, ns = self._resolve(api_version, kind, namespace, collection=False)
        params = _write_params(dry_run, field_manager, field_validation)
        if force is not None:
            params["force"] = force
        body = patch.encode() if isinstance(patch, str) else patch
        return self.request(
            "PATCH",
            m.path(ns, name, subresource),
            params=params,
            body=body,
            content_type=content_type,
            timeout=timeout,
        )

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_owner: str,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
        field_validation: str | None = None,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` as field manager ``field_owner`` (controller-runtime's
        ``client.Apply`` with ``client.FieldOwner``); apiVersion, kind, name and namespace come from
        ``obj``, which holds only the fields this manager wants to own.

        A field another manager owns with a different value is a ``Conflict`` unless ``force``
        (``client.ForceOwnership``) takes it over. ``subresource="status"`` applies the status.
        """
        api_version, kind, name, namespace = _identity(obj)
        if not name:
            raise ValueError("apply needs metadata.name")
        return self.patch(
            api_version,
            kind,
            name,
            obj,
            namespace,
            "apply",
            subresource,
            field_owner,
            force or None,
            dry_run=dry_run,
            field_validation=field_validation,
            timeout=timeout,
        )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        grace_period_seconds: int | None = None,
        *,
        dry_run: bool = False,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Delete an object; returns the response (a ``Status``, or the object while finalizers remain).

        ``preconditions``: ``{"uid": ..., "resourceVersion": ...}`` (a mismatch raises ``Conflict``).
        ``propagation_policy``: ``Background``, ``Foreground`` or ``Orphan``.
        """
        m, ns = self._resolve(api_version, kind, namespace, collection=False)
        options = _delete_options(propagation_policy, preconditions, grace_period_seconds, dry_run)
        return self.request("DELETE", m.path(ns, name), body=options or None, timeout=timeout)

    def delete_collection(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        propagation_policy: str | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
        timeout: TimeoutSpec = None,
    ) -> dict[str, Any]:
        """Delete every matching object of a collection; returns the response (usually the List)."""
        m, ns = self._resolve(api_version, kind, namespace, collection=True)
        if m.namespaced and ns is None:
            raise ValueError(f"{kind} ({api_version}) is namespaced: delete_collection needs a namespace")
        options = _delete_options(propagation_policy, None, grace_period_seconds, dry_run)
        params = {
            "labelSelector": label_selector_string(label_selector),
            "fieldSelector": field_selector_string(field_selector),
        }
        return self.request("DELETE", m.path(ns), params=params, body=options or None, timeout=timeout)


# --- helpers ----------------------------------------------------------------------------------------


def _not_cached(api_version: str, kind: str, **live_only: Any) -> None:
    """``ValueError`` if a read the cache answers asks for what only the API server serves."""
    given = sorted(k for k, v in live_only.items() if v is not None)
    if given:
        raise ValueError(
            f"{', '.join(given)}: not served by the cache; read {kind} ({api_version}) live "
            "(mgr.api_reader, or disable_for)"
        )


def _timeout(spec: TimeoutSpec) -> urllib3.Timeout | None:
    if spec is None:
        return None
    if isinstance(spec, tuple):
        connect, read = spec
        return urllib3.Timeout(connect=connect, read=read)
    return urllib3.Timeout(connect=float(spec), read=float(spec))


def _query(params: Mapping[str, Any] | None) -> str:
    if not params:
        return ""
    items = []
    for k, v in params.items():
        if v is None:
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        items.append((k, str(v)))
    return urlencode(items)


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str | None, str | None]:
    try:
        api_version = obj["apiVersion"]
        kind = obj["kind"]
    except (KeyError, TypeError):
        raise ValueError("the object needs apiVersion and kind") from None
    meta = get_metadata(obj)
    return api_version, kind, meta.get("name") or None, meta.get("namespace") or None


def _write_params(dry_run: bool, field_manager: str | None, field_validation: str | None) -> dict[str, Any]:
    return {
        "dryRun": "All" if dry_run else None,
        "fieldManager": field_manager,
        "fieldValidation": field_validation,
    }


def _delete_options(
    propagation_policy: str | None,
    preconditions: Mapping[str, str] | None,
    grace_period_seconds: int | None,
    dry_run: bool,
) -> dict[str, Any]:
    options: dict[str, Any] = {}  # no TypeMeta, as kubectl sends it: valid on every group's endpoint
    if propagation_policy is not None:
        options["propagationPolicy"] = propagation_policy
    if preconditions:
        options["preconditions"] = dict(preconditions)
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    if dry_run:
        options["dryRun"] = ["All"]
    return options
