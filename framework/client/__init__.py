"""``framework.client`` — a fast, raw-JSON Kubernetes client with client-go's semantics.

Objects are plain ``dict``\\ s (decoded with orjson), never the official package's model classes;
configuration and authentication come from the official ``kubernetes`` package (kubeconfig contexts,
exec/token plugins, client certificates, in-cluster service accounts). Kinds are addressed by
``apiVersion`` + ``kind`` and resolved through discovery, which is cached and re-read on a miss, so a
CRD installed while the program runs is found without a restart.

Quick tour::

    from framework.client import Client, Conflict, Gone, NotFound

    # --kubeconfig flag, $KUBECONFIG, in-cluster, ~/.kube/config (controller-runtime's GetConfig order)
    client = Client.from_config(get_config(kubeconfig_flag))
    # or Client.from_kubeconfig(path, context), Client.in_cluster()

    cm = client.create({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "default"},
        "data": {"color": "blue"},
    })
    cm = client.get("v1", "ConfigMap", "settings", namespace="default")
    cm["data"]["color"] = "green"
    try:
        client.update(cm)  # carries metadata.resourceVersion: a concurrent writer makes this Conflict
    except Conflict:
        ...  # re-read and try again

    client.patch("v1", "ConfigMap", "settings", {"data": {"size": "L"}}, namespace="default")
    client.patch("v1", "ConfigMap", "settings", [{"op": "remove", "path": "/data/size"}],
                 namespace="default", patch_type="json")

    # Server-side apply: apiVersion, kind, name and namespace come from the object.
    client.apply({"apiVersion": "v1", "kind": "ConfigMap",
                  "metadata": {"name": "settings", "namespace": "default"}, "data": {"size": "M"}},
                 field_owner="my-controller")

    # Lists return the List dict; a namespaced kind without a namespace lists all namespaces.
    # Selectors: a string, a label map ({"app": "web"}) or a LabelSelector dict (matchLabels/...).
    page = client.list("v1", "ConfigMap", label_selector="app=web", limit=500)
    items, rv, cont = page["items"], page["metadata"]["resourceVersion"], page["metadata"].get("continue")

    # Watches yield (type, object); BOOKMARK objects carry only metadata.resourceVersion.
    with client.watch("v1", "ConfigMap", namespace="default", resource_version=rv,
                      timeout_seconds=300, read_timeout=90) as w:
        for event_type, obj in w:  # w.close() from another thread ends the loop
            ...
    # An ERROR event raises: Gone (410) means "relist", Timeout means the stream went silent.

    # Custom resources work the same once their CRD is established:
    client.update_status(widget)  # PUT .../widgets/NAME/status
    client.delete("example.com/v1", "Widget", "w1", namespace="default",
                  preconditions={"resourceVersion": widget["metadata"]["resourceVersion"]})

``Client`` and the manager's cached client (``mgr.client``, a ``Client`` whose reads the manager's
cache answers: ``client.with_cache(reader, disable_for=[...])``) share one contract, :class:`Reader` +
:class:`Writer` (:mod:`framework.client.interfaces`): same arguments, same List dicts, same errors.
Write helpers against ``ReaderWriter`` (or ``Reader`` for what only reads) and they run on either.

Errors are typed (:mod:`framework.client.errors`): ``NotFound``, ``AlreadyExists``, ``Conflict``,
``Invalid`` (see ``err.causes``), ``Forbidden``, ``Unauthorized``, ``Gone``, ``TooManyRequests``,
``ServerError``, ``Timeout``, ``BadRequest``, ``MethodNotAllowed``, ``UnsupportedMediaType``, all
subclasses of ``APIError`` (``status``, ``reason``, ``message``, ``details``, ``body``,
``retry_after``); ``NetworkError`` when no answer came back. An unknown kind raises
``NoKindMatchError`` (a ``LookupError``); passing a namespace for a cluster-scoped kind (or none for a
namespaced object) raises ``ValueError``.

Throttling and retries follow client-go: a token bucket of ``qps=5``, ``burst=10`` per client
(``Client.from_kubeconfig(qps=50, burst=100)`` to raise it, ``qps=0`` to disable), 429 answers retried
after their ``Retry-After`` up to ``max_retries`` times (then ``TooManyRequests``), per-request
timeouts (``timeout=(connect, read)`` on the client or on any call). ``client.request(method, path,
params=..., body=...)`` is the escape hatch for anything else (discovery, ``/version``, subresources).
The client is thread-safe; share one per process. ``Client(..., registry=CollectorRegistry())``
counts client-go's ``rest_client_*`` metrics there (:mod:`framework.client.metrics`); by default a
client counts nothing, and a Manager makes its client count on the manager's registry. Large
responses (>= 1 MiB) are decoded with the cyclic GC paused (``gc_pause_bytes``); ``gc_paused()``
offers the same for your own bulk work.
"""

from .client import PATCH_CONTENT_TYPES, Client, PatchType
from .config import ConfigError, ConfigSource, RESTConfig, get_config
from .deadline import check_deadline, deadline
from .decode import gc_paused
from .errors import (
    AlreadyExists,
    APIError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    MethodNotAllowed,
    NetworkError,
    NotAcceptable,
    NotFound,
    ServerError,
    Timeout,
    TooManyRequests,
    Unauthorized,
    UnsupportedMediaType,
)
from .interfaces import Reader, ReaderWriter, Writer
from .patch import create_merge_patch, with_optimistic_lock
from .rate_limit import TokenBucket
from .rest_mapper import NoKindMatchError, NoResourceMatchError, RESTMapper, RESTMapping
from .watch import Watch

__all__ = [
    "PATCH_CONTENT_TYPES",
    "APIError",
    "AlreadyExists",
    "BadRequest",
    "Client",
    "ConfigError",
    "ConfigSource",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MethodNotAllowed",
    "NetworkError",
    "NoKindMatchError",
    "NoResourceMatchError",
    "NotAcceptable",
    "NotFound",
    "PatchType",
    "RESTConfig",
    "RESTMapper",
    "RESTMapping",
    "Reader",
    "ReaderWriter",
    "ServerError",
    "Timeout",
    "TokenBucket",
    "TooManyRequests",
    "Unauthorized",
    "UnsupportedMediaType",
    "Watch",
    "Writer",
    "check_deadline",
    "create_merge_patch",
    "deadline",
    "gc_paused",
    "get_config",
    "with_optimistic_lock",
]
