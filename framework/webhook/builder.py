"""``WebhookBuilder``: a kind's defaulting and validating webhooks on the manager's webhook server, as
controller-runtime's ``builder.WebhookManagedBy(mgr, &T{})`` (pkg/builder/webhook.go)::

    WebhookBuilder(mgr).for_("cache.example.com/v1alpha1", "Memcached") \\
        .with_defaulter(default_memcached) \\
        .with_validator(on_create=check, on_update=lambda old, new: check(new)) \\
        .complete()

registers ``/mutate-cache-example-com-v1alpha1-memcached`` and
``/validate-cache-example-com-v1alpha1-memcached`` (controller-runtime's paths: the group's dots as
dashes, the version, the kind in lower case) on ``mgr.webhook_server``.

A kind with several versions adds ``.with_conversion(hub="v2", spokes={"v1": CronJobV1()})``: the kind
joins the conversion scheme served at ``/convert`` (registered once per server, as controller-runtime
registers it when a kind is convertible; see ``framework.webhook.conversion``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from framework.meta.schema import GroupVersionKind, parse_group_version
from framework.webhook.conversion import CONVERT_PATH, ConversionScheme, Convertible
from framework.webhook.typed import CustomDefaulter, CustomValidator, DefaultFunc, Warnings

__all__ = ["WebhookBuilder", "mutate_path", "validate_path"]

_CUSTOM_PATH = re.compile(r"^((/[a-zA-Z0-9-_]+)+|/)$")  # controller-runtime's webhookPathStringValidation


def _suffix(gvk: GroupVersionKind) -> str:
    return f"{gvk.group.replace('.', '-')}-{gvk.version}-{gvk.kind.lower()}"


def mutate_path(gvk: GroupVersionKind) -> str:
    """``/mutate-<group with dashes>-<version>-<kind>`` (``generateMutatePath``)."""
    return "/mutate-" + _suffix(gvk)


def validate_path(gvk: GroupVersionKind) -> str:
    """``/validate-<group with dashes>-<version>-<kind>`` (``generateValidatePath``)."""
    return "/validate-" + _suffix(gvk)


def _check_custom_path(path: str) -> str:
    if not _CUSTOM_PATH.match(path):
        raise ValueError(f"custom path {path!r} does not match {_CUSTOM_PATH.pattern}")
    return path


class WebhookBuilder:
    """Builds and registers the webhooks of one kind; ``complete()`` registers them.

    ``mgr`` is a :class:`~framework.manager.Manager` made with ``webhook_server=WebhookServer(...)``.
    A path already registered on the server raises ValueError (two webhooks for one kind would
    silently shadow each other otherwise).
    """

    def __init__(self, mgr: Any) -> None:
        self._mgr = mgr
        self._api_version: str | None = None
        self._kind = ""
        self._default: DefaultFunc | None = None
        self._validate: dict[str, Any] | None = None
        self._default_path: str | None = None
        self._validate_path: str | None = None
        self._conversion: tuple[str, Mapping[str, Convertible]] | None = None

    def for_(self, api_version: str, kind: str) -> WebhookBuilder:
        """The kind the webhooks serve, e.g. ``("cache.example.com/v1alpha1", "Memcached")``."""
        self._api_version, self._kind = api_version, kind
        return self

    def with_defaulter(self, fn: DefaultFunc) -> WebhookBuilder:
        """``fn(obj)`` changes the object in place; the framework computes the patch."""
        self._default = fn
        return self

    def with_validator(
        self,
        on_create: Callable[[dict[str, Any]], Warnings] | None = None,
        on_update: Callable[[dict[str, Any], dict[str, Any]], Warnings] | None = None,
        on_delete: Callable[[dict[str, Any]], Warnings] | None = None,
    ) -> WebhookBuilder:
        """Callbacks return warnings and raise ``AdmissionDenied`` / ``Invalid`` to refuse."""
        self._validate = {"on_create": on_create, "on_update": on_update, "on_delete": on_delete}
        return self

    def with_conversion(self, hub: str, spokes: Mapping[str, Convertible]) -> WebhookBuilder:
        """Serve the kind's CRD conversion: ``hub`` is the hub version (``"v2"``), ``spokes`` the other
        versions' converters (``convert_to(obj)`` to the hub, ``convert_from(hub)`` back)."""
        self._conversion = (hub, spokes)
        return self

    def with_defaulter_custom_path(self, path: str) -> WebhookBuilder:
        self._default_path = _check_custom_path(path)
        return self

    def with_validator_custom_path(self, path: str) -> WebhookBuilder:
        self._validate_path = _check_custom_path(path)
        return self

    def build(self) -> dict[str, CustomDefaulter | CustomValidator]:
        """The handlers by path, without registering them."""
        if self._api_version is None:
            raise ValueError("WebhookBuilder: call for_(api_version, kind) before complete()")
        if self._default is None and self._validate is None and self._conversion is None:
            raise ValueError(
                f"WebhookBuilder for {self._kind}: nothing to register "
                "(with_defaulter(...), with_validator(...) and/or with_conversion(...))"
            )
        handlers: dict[str, CustomDefaulter | CustomValidator] = {}
        if self._default is not None:
            d = CustomDefaulter(self._api_version, self._kind, self._default)
            handlers[self._default_path or mutate_path(d.gvk)] = d
        if self._validate is not None:
            v = CustomValidator(self._api_version, self._kind, **self._validate)
            handlers[self._validate_path or validate_path(v.gvk)] = v
        return handlers

    def complete(self) -> dict[str, CustomDefaulter | CustomValidator]:
        """Register the webhooks on ``mgr.webhook_server``; returns the admission handlers by path (the
        conversion, if any, joins the server's ``/convert`` scheme)."""
        server = getattr(self._mgr, "webhook_server", None)
        if server is None:
            raise ValueError(
                "WebhookBuilder: the manager has no webhook server; create it with "
                "Manager(client, webhook_server=WebhookServer(...))"
            )
        handlers = self.build()
        taken = [p for p in handlers if p in server.webhooks]
        if taken:
            raise ValueError(f"webhook path {taken[0]} is already registered on the webhook server")
        if self._conversion is not None:
            assert self._api_version is not None
            scheme = server.conversions.get(CONVERT_PATH)
            if scheme is None:
                scheme = ConversionScheme()
                server.register_conversion(CONVERT_PATH, scheme)
            hub, spokes = self._conversion
            scheme.add(parse_group_version(self._api_version).group, self._kind, hub, spokes)
        for path, handler in handlers.items():
            server.register(path, handler)
        return handlers
