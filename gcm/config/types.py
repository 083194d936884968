"""``controllermanager.config.gardener.cloud/v1alpha1`` ``ControllerManagerConfiguration`` as dataclasses.

Attribute names are the JSON names in snake_case (``gardenClientConnection.acceptContentTypes`` →
``garden_client_connection.accept_content_types``); ``to_dict()`` gives the JSON form back. Optional
fields are ``None`` until :func:`gcm.config.defaults.set_defaults` runs; after ``load_config`` every
field with a default is set. Durations are :class:`~framework.meta.duration.Duration` (float seconds
that print as Go duration strings).

Sections of Gardener controllers gcm does not implement are kept verbatim in
``controllers.unimplemented`` (a dict by JSON name); nothing reads them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

from framework.meta import labels
from framework.meta.duration import Duration

__all__ = [
    "API_VERSION",
    "DEFAULT_CONTROLLER_CONCURRENT_SYNCS",
    "DEFAULT_HEALTH_PROBES_PORT",
    "DEFAULT_LOCK_OBJECT_NAME",
    "DEFAULT_LOCK_OBJECT_NAMESPACE",
    "DEFAULT_METRICS_PORT",
    "DEFAULT_WEBHOOK_PORT",
    "KIND",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "ClientConnectionConfiguration",
    "ControllerManagerConfiguration",
    "ControllerManagerControllerConfiguration",
    "DebuggingConfiguration",
    "EventControllerConfiguration",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LeaderElectionConfiguration",
    "LegacyHTTPSServer",
    "LegacyTLSServer",
    "ProjectControllerConfiguration",
    "QuotaConfiguration",
    "Server",
    "ServerConfiguration",
    "WebhookListener",
    "WebhookServer",
    "WebhookSwitch",
    "WebhookTLS",
    "WebhooksConfiguration",
    "to_dict",
    "workers",
]

GROUP = "controllermanager.config.gardener.cloud"
API_VERSION = f"{GROUP}/v1alpha1"
KIND = "ControllerManagerConfiguration"

LOG_LEVELS = ("debug", "info", "error")
LOG_FORMATS = ("json", "text")

DEFAULT_CONTROLLER_CONCURRENT_SYNCS = 5
DEFAULT_LOCK_OBJECT_NAMESPACE = "garden"
DEFAULT_LOCK_OBJECT_NAME = "gardener-controller-manager-leader-election"
DEFAULT_HEALTH_PROBES_PORT = 2718
DEFAULT_METRICS_PORT = 2719
DEFAULT_WEBHOOK_PORT = 2721

_ZERO_DURATION = Duration(0)  # Go's zero metav1.Duration (= unset for the leader election durations)


def _json(name: str, **extra: Any) -> dict[str, Any]:
    return {"json": name, **extra}


# --- k8s.io/component-base/config/v1alpha1 ---------------------------------------------------------


@dataclass
class ClientConnectionConfiguration:
    """``gardenClientConnection``: how gcm talks to the garden API server."""

    kubeconfig: str = ""
    """Path of a kubeconfig file; "" = in-cluster. ``KUBECONFIG`` overrides it (``apply_env_overrides``)."""
    accept_content_types: str = ""
    """``Accept`` header of the client; not defaulted."""
    content_type: str = ""
    """Content type of request bodies; not defaulted."""
    qps: float = 0.0
    """Client-side rate limit (requests per second); 0 → 50."""
    burst: int = 0
    """Rate-limit burst; 0 → 100; must be ≥ 0."""


@dataclass
class LeaderElectionConfiguration:
    """``leaderElection``: a ``coordination.k8s.io/v1`` Lease ``resource_namespace/resource_name``.

    As in Go, where the three durations are value types, a zero duration means "unset" and is defaulted.
    """

    leader_elect: bool | None = None
    lease_duration: Duration = _ZERO_DURATION
    renew_deadline: Duration = _ZERO_DURATION
    retry_period: Duration = _ZERO_DURATION
    resource_lock: str = ""
    resource_name: str = ""
    resource_namespace: str = ""


@dataclass
class DebuggingConfiguration:
    """``debugging``: profiling handlers on the metrics server."""

    enable_profiling: bool | None = None
    enable_contention_profiling: bool | None = None


# --- metav1.LabelSelector ----------------------------------------------------------------------------


@dataclass
class LabelSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: list[str] = field(default_factory=list)


@dataclass
class LabelSelector:
    """``metav1.LabelSelector``; the empty selector matches everything."""

    match_labels: dict[str, str] = field(default_factory=dict)
    match_expressions: list[LabelSelectorRequirement] = field(default_factory=list)

    def as_selector(self) -> labels.Selector:
        """``metav1.LabelSelectorAsSelector``; ``ValueError`` for an invalid selector."""
        return labels.label_selector_as_selector(to_dict(self))

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        """``metav1.LabelSelectorAsSelector(s).Matches(labels)``; ``ValueError`` if it is invalid."""
        return self.as_selector().matches(labels)

    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions


# --- controllers -------------------------------------------------------------------------------------


@dataclass
class QuotaConfiguration:
    """``controllers.project.quotas[]``: a default ResourceQuota for the projects the selector matches."""

    config: dict[str, Any] = field(default_factory=dict)
    """A ``v1`` ResourceQuota object (as a dict); only ``metadata.labels``, ``metadata.annotations`` and
    ``spec.hard`` are used."""
    project_selector: LabelSelector | None = None
    """Which Projects get this quota; ``None`` → ``{}`` (all) by defaulting. First matching entry wins."""


def workers(concurrent_syncs: int | None) -> int:
    """The worker count for a ``concurrentSyncs`` value: unset is the default (5); ``0`` means one
    worker, as controller-runtime runs a controller whose ``MaxConcurrentReconciles`` is 0."""
    if concurrent_syncs is None:
        return DEFAULT_CONTROLLER_CONCURRENT_SYNCS
    return max(1, int(concurrent_syncs))


@dataclass
class ProjectControllerConfiguration:
    """``controllers.project``: the four project reconcilers (main, stale, activity, resourcequota)."""

    concurrent_syncs: int | None = None
    minimum_lifetime_days: int | None = None
    stale_grace_period_days: int | None = None
    stale_expiration_time_days: int | None = None
    stale_sync_period: Duration | None = None
    quotas: list[QuotaConfiguration] = field(default_factory=list)
    extension_roles: bool | None = None
    """gcm's addition: whether members' ``extension:<r>`` roles get their aggregating ClusterRole and
    RoleBinding (defaulted to true, as Gardener always does). Writing a ClusterRole with an
    ``aggregationRule`` needs rights equivalent to cluster-admin, which ``manifests/deploy`` does not
    grant: it sets this to false (docs/rbac.md). False: no extension objects are written, leftovers of
    the project are deleted, and a Project whose members use extension roles gets a Warning event."""

    @property
    def workers(self) -> int:
        """Workers of each of the four project reconcilers (see :func:`workers`)."""
        return workers(self.concurrent_syncs)


@dataclass
class EventControllerConfiguration:
    """``controllers.event``: deletes non-Shoot Events after ``ttl_non_shoot_events``."""

    concurrent_syncs: int | None = None
    ttl_non_shoot_events: Duration | None = None

    @property
    def workers(self) -> int:
        """Workers of the Event controller (see :func:`workers`)."""
        return workers(self.concurrent_syncs)


@dataclass
class ControllerManagerControllerConfiguration:
    """``controllers``."""

    cache_sync_timeout: Duration | None = None
    """How long to wait for informer caches to sync (``2m``)."""
    project: ProjectControllerConfiguration | None = None
    """Always present after defaulting."""
    event: EventControllerConfiguration | None = None
    """``None`` = Event controller disabled (never defaulted into existence)."""
    unimplemented: dict[str, Any] = field(default_factory=dict, metadata={"extra": True})
    """Sections of Gardener controllers gcm does not implement (``bastion``, ``seed``, ...), verbatim."""


# --- servers -----------------------------------------------------------------------------------------


@dataclass
class Server:
    """An HTTP listener; ``bind_address`` "" = all interfaces."""

    bind_address: str = ""
    port: int = 0


@dataclass
class WebhookTLS:
    server_cert_dir: str = ""
    """Directory with ``tls.crt`` and ``tls.key`` (reloaded when they change)."""


@dataclass
class WebhookServer:
    """``server.webhooks`` (gcm's addition, modelled on gardener-admission-controller): the HTTPS
    listener of the admission webhooks; port 0 → 2721."""

    bind_address: str = ""
    port: int = 0
    tls: WebhookTLS = field(default_factory=WebhookTLS)


@dataclass
class LegacyTLSServer:
    server_cert_path: str = ""
    server_key_path: str = ""


@dataclass
class LegacyHTTPSServer:
    """Legacy ``server.https`` (GCM until v1.10): the webhook listener with PEM file paths."""

    bind_address: str = ""
    port: int = 0
    tls: LegacyTLSServer | None = None


@dataclass(frozen=True)
class WebhookListener:
    """Where to serve webhooks, resolved from ``server.webhooks`` or the legacy ``server.https``.

    Either ``cert_dir`` (``tls.crt``/``tls.key`` inside) or ``cert_path``/``key_path`` is set, or none
    when the configuration names no certificate; ``source`` is the config path it came from.
    """

    bind_address: str
    port: int
    cert_dir: str | None = None
    cert_path: str | None = None
    key_path: str | None = None
    source: str = "server.webhooks"


@dataclass
class ServerConfiguration:
    """``server``."""

    health_probes: Server | None = None
    """``/healthz``, ``/readyz``; port 0 → 2718."""
    metrics: Server | None = None
    """``/metrics``; port 0 → 2719."""
    webhooks: WebhookServer | None = None
    """HTTPS admission webhooks (gcm's addition); ``None`` = not configured."""
    https: LegacyHTTPSServer | None = None
    """Legacy webhook listener; used only when ``webhooks`` is not set."""
    http: Server | None = None
    """Legacy (until v1.52) combined metrics/health listener: accepted and ignored."""

    def webhook_listener(self) -> WebhookListener | None:
        """The webhook listener to run: ``webhooks`` if set, else the legacy ``https``, else ``None``."""
        if self.webhooks is not None:
            return WebhookListener(
                bind_address=self.webhooks.bind_address,
                port=self.webhooks.port or DEFAULT_WEBHOOK_PORT,
                cert_dir=self.webhooks.tls.server_cert_dir or None,
                source="server.webhooks",
            )
        if self.https is not None:
            tls = self.https.tls or LegacyTLSServer()
            return WebhookListener(
                bind_address=self.https.bind_address,
                port=self.https.port or DEFAULT_WEBHOOK_PORT,
                cert_path=tls.server_cert_path or None,
                key_path=tls.server_key_path or None,
                source="server.https",
            )
        return None


# --- webhooks ----------------------------------------------------------------------------------------


@dataclass
class WebhookSwitch:
    """One webhook's switch: ``enabled: false`` turns it off; absent or ``true`` = on."""

    enabled: bool | None = None


@dataclass
class WebhooksConfiguration:
    """``webhooks`` (gcm's addition, in the manner of gardener-resource-manager's
    ``webhooks.<name>.enabled``): which of the webhooks the listener (``server.webhooks`` or legacy
    ``server.https``) serves. Without a listener every webhook is off anyway."""

    namespace_deletion: WebhookSwitch | None = None
    """``/webhooks/validate-namespace-deletion``."""
    kubeconfig_secrets: WebhookSwitch | None = None
    """``/webhooks/validate-kubeconfig-secrets``."""


# --- the configuration -------------------------------------------------------------------------------


@dataclass
class ControllerManagerConfiguration:
    """The Gardener controller manager's component configuration."""

    api_version: str = API_VERSION
    kind: str = KIND
    garden_client_connection: ClientConnectionConfiguration = field(
        default_factory=ClientConnectionConfiguration
    )
    controllers: ControllerManagerControllerConfiguration = field(
        default_factory=ControllerManagerControllerConfiguration
    )
    leader_election: LeaderElectionConfiguration | None = None
    log_level: str = ""
    log_format: str = ""
    server: ServerConfiguration = field(default_factory=ServerConfiguration)
    debugging: DebuggingConfiguration | None = None
    feature_gates: dict[str, bool] | None = None
    webhooks: WebhooksConfiguration | None = None
    """Per-webhook switches (gcm's addition); absent = every webhook on."""

    def webhook_enabled(self, name: str) -> bool:
        """Whether ``webhooks.<name>`` (the attribute name, e.g. ``kubeconfig_secrets``) is on."""
        switch = getattr(self.webhooks, name, None) if self.webhooks is not None else None
        return switch is None or switch.enabled is not False

    def to_dict(self) -> dict[str, Any]:
        """The JSON/YAML form (camelCase keys, Go duration strings, ``None`` fields omitted)."""
        return to_dict(self)


def json_name(f: Any) -> str:
    """The JSON key of a dataclass field: ``metadata["json"]`` or the camelCase of its name."""
    if "json" in f.metadata:
        return f.metadata["json"]
    head, *rest = f.name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def to_dict(obj: Any) -> Any:
    """Dataclasses → dicts with JSON names (``None`` omitted), Durations → Go strings, recursively."""
    if isinstance(obj, Duration):
        return str(obj)
    if is_dataclass(obj) and not isinstance(obj, type):
        out: dict[str, Any] = {}
        for f in fields(obj):
            value = getattr(obj, f.name)
            if f.metadata.get("extra"):
                out.update({k: to_dict(v) for k, v in value.items()})
            elif value is not None:
                out[json_name(f)] = to_dict(value)
        return out
    if isinstance(obj, dict):
        return {k: to_dict(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [to_dict(v) for v in obj]
    return obj
