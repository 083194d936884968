"""Loading ``ControllerManagerConfiguration`` files: decode, default, validate (as Gardener's
``cmd/gardener-controller-manager/app/options.go``).

``load_config(source)`` reads YAML or JSON (a path, a ``Path``, file text, or ``None`` for the built-in
minimal config = all defaults), checks ``apiVersion``/``kind``, decodes non-strictly, applies defaults
and validates. Every problem found along the way — values of the wrong type, Go duration strings that do
not parse, invalid quantities in quota templates, validation errors — is collected with its field path
and raised together as one :class:`~gcm.config.errors.ConfigError`.

Non-strict: unknown fields are ignored and logged as warnings with their full path and the nearest
known field when one is close (``controlers`` -> ``controllers``: a typo must not silently turn a
controller off); the sections of Gardener controllers gcm does not implement (kept in
``controllers.unimplemented``) and legacy fields of old files (``kubernetesLogLevel``, ``server.http``,
``leaderElection.lockObject*``, ``controllers.plant``, ...) are logged at debug level
(:func:`log_ignored_fields`, ``gcm.config`` logger). The legacy ``server.https`` becomes the webhook
listener when ``server.webhooks`` is absent.
"""

from __future__ import annotations

import difflib
import json
import os
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any

import structlog
import yaml

from framework.meta.duration import Duration, DurationError, parse_duration
from framework.meta.quantity import quantity_from_json
from gcm.config.defaults import set_defaults
from gcm.config.errors import ConfigError, FieldError, invalid, not_supported, required
from gcm.config.types import (
    API_VERSION,
    KIND,
    ControllerManagerConfiguration,
    ControllerManagerControllerConfiguration,
    QuotaConfiguration,
    json_name,
)
from gcm.config.validation import LEGACY_RESOURCE_LOCKS, validate

__all__ = [
    "IGNORED_LEGACY",
    "IGNORED_UNIMPLEMENTED",
    "IGNORED_UNKNOWN",
    "UNIMPLEMENTED_CONTROLLERS",
    "DecodeResult",
    "IgnoredField",
    "apply_env_overrides",
    "decode_config",
    "default_config",
    "load_config",
    "log_ignored_fields",
    "parse_config_text",
]

log = structlog.get_logger("gcm.config")

# Sections of today's Gardener controller manager that gcm accepts but does not implement.
UNIMPLEMENTED_CONTROLLERS = frozenset(
    {
        "bastion",
        "certificateSigningRequest",
        "cloudProfile",
        "namespacedCloudProfile",
        "controllerDeployment",
        "controllerDeploymentReference",
        "controllerRegistration",
        "exposureClass",
        "quota",
        "secretBinding",
        "credentialsBinding",
        "seed",
        "seedExtensionsCheck",
        "seedBackupBucketsCheck",
        "seedReference",
        "shootMaintenance",
        "shootQuota",
        "shootHibernation",
        "shootReference",
        "shootRetry",
        "shootConditions",
        "shootStatusLabel",
        "shootMigration",
        "managedSeedSet",
        "shootState",
    }
)

# Fields of older Gardener versions: accepted and ignored (path → what replaced them).
LEGACY_FIELDS: dict[str, str] = {
    "kubernetesLogLevel": "removed from Gardener",
    "clientConnection": "old name of gardenClientConnection; not read",
    "seedClientConnection": "removed from Gardener",
    "shootClientConnection": "removed from Gardener",
    "shootBackup": "removed from Gardener",
    "discovery": "removed from Gardener",
    "server.http": "replaced by server.healthProbes and server.metrics (Gardener v1.52)",
    "leaderElection.lockObjectNamespace": "replaced by leaderElection.resourceNamespace (Gardener v1.36)",
    "leaderElection.lockObjectName": "replaced by leaderElection.resourceName (Gardener v1.36)",
    "controllers.plant": "Plant controller removed (Gardener v1.54)",
    "controllers.shoot": "moved out of the controller manager",
    "controllers.shootCare": "moved to gardenlet",
    "controllers.backupInfrastructure": "removed from Gardener",
    "controllers.backupBucket": "moved to gardenlet",
    "controllers.backupEntry": "moved to gardenlet",
    "controllers.controllerInstallation": "moved to gardenlet",
    "controllers.managedSeed": "moved to gardenlet",
    "controllers.seedAPIServerNetworkPolicy": "moved to gardenlet",
}

IGNORED_UNKNOWN = "unknown"
IGNORED_LEGACY = "legacy"
IGNORED_UNIMPLEMENTED = "unimplemented"


@dataclass(frozen=True)
class IgnoredField:
    """A field the loader accepted without using it: ``kind`` is unknown, legacy or unimplemented."""

    path: str
    kind: str
    note: str = ""
    # The nearest known field at the same level, for an unknown one that looks like a typo.
    suggestion: str = ""


@dataclass
class DecodeResult:
    config: ControllerManagerConfiguration
    errors: list[FieldError] = field(default_factory=list)
    ignored: list[IgnoredField] = field(default_factory=list)


# --- decoding ----------------------------------------------------------------------------------------


class _Decoder:
    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.ignored: list[IgnoredField] = []

    def error(self, err: FieldError) -> None:
        self.errors.append(err)

    def ignore(self, path: str, kind: str, note: str = "", suggestion: str = "") -> None:
        self.ignored.append(IgnoredField(path, kind, note, suggestion))

    def decode(self, tp: Any, raw: Any, path: str) -> Any:
        """``raw`` (not ``None``) as ``tp``; on a type error records it and returns ``_INVALID``."""
        origin = typing.get_origin(tp)
        if origin in (types.UnionType, typing.Union):
            (inner,) = [a for a in typing.get_args(tp) if a is not type(None)]
            return self.decode(inner, raw, path)
        if tp is Any:
            return raw
        if tp is str:
            if isinstance(raw, str):
                return raw
            return self._type_error(path, raw, "must be a string")
        if tp is bool:
            if isinstance(raw, bool):
                return raw
            return self._type_error(path, raw, "must be a boolean (true or false)")
        if tp is int:
            if isinstance(raw, int) and not isinstance(raw, bool):
                return raw
            return self._type_error(path, raw, "must be an integer")
        if tp is float:
            if isinstance(raw, int | float) and not isinstance(raw, bool):
                return float(raw)
            return self._type_error(path, raw, "must be a number")
        if tp is Duration:
            if not isinstance(raw, str):
                return self._type_error(path, raw, 'must be a duration string such as "1h30m" or "90s"')
            try:
                return parse_duration(raw)
            except DurationError as exc:
                return self._type_error(path, raw, str(exc))
        if origin is list:
            if not isinstance(raw, list):
                return self._type_error(path, raw, "must be a list")
            (item_tp,) = typing.get_args(tp)
            out = []
            for i, item in enumerate(raw):
                if item is None:
                    item = _zero(item_tp)
                    if item is None:
                        continue
                value = self.decode(item_tp, item, f"{path}[{i}]")
                if value is not _INVALID:
                    out.append(value)
            return out
        if origin is dict:
            if not isinstance(raw, dict):
                return self._type_error(path, raw, "must be an object")
            _, value_tp = typing.get_args(tp)
            out_map = {}
            for key, item in raw.items():
                key = _key(key)
                if item is None:
                    item = _zero(value_tp)
                    if item is None:
                        continue
                value = self.decode(value_tp, item, f"{path}[{key}]")
                if value is not _INVALID:
                    out_map[key] = value
            return out_map
        if isinstance(tp, type) and is_dataclass(tp):
            if not isinstance(raw, dict):
                return self._type_error(path, raw, "must be an object")
            return self._decode_dataclass(tp, raw, path)
        raise TypeError(f"unsupported config field type {tp!r}")  # a bug in types.py

    def _type_error(self, path: str, raw: Any, detail: str) -> Any:
        self.error(invalid(path, raw, detail))
        return _INVALID

    def _decode_dataclass(self, cls: type, raw: dict, path: str) -> Any:
        hints = _hints(cls)
        by_json = {}
        extra_field = None
        for declared in fields(cls):
            if declared.metadata.get("extra"):
                extra_field = declared
            else:
                by_json[json_name(declared)] = declared
        kwargs: dict[str, Any] = {}
        extras: dict[str, Any] = {}
        for key, value in raw.items():
            key = _key(key)
            child = f"{path}.{key}" if path else key
            f = by_json.get(key)
            if f is None:
                self._unknown(cls, key, value, child, extras, list(by_json))
                continue
            if child in LEGACY_FIELDS:
                self.ignore(child, IGNORED_LEGACY, LEGACY_FIELDS[child])
            if value is None:
                continue  # null = absent, as for Go's pointers
            decoded = self.decode(hints[f.name], value, child)
            if decoded is not _INVALID:
                kwargs[f.name] = decoded
        if extra_field is not None:
            kwargs[extra_field.name] = extras
        obj = cls(**kwargs)
        if cls is QuotaConfiguration:
            self._check_resource_quota(obj.config, f"{path}.config", "config" in raw)
        return obj

    def _unknown(
        self, cls: type, key: str, value: Any, path: str, extras: dict[str, Any], known: list[str]
    ) -> None:
        if path in ("apiVersion", "kind"):
            return
        if cls is ControllerManagerControllerConfiguration and (
            key in UNIMPLEMENTED_CONTROLLERS or path in LEGACY_FIELDS
        ):
            extras[key] = value
            if path in LEGACY_FIELDS:
                self.ignore(path, IGNORED_LEGACY, LEGACY_FIELDS[path])
            else:
                self.ignore(path, IGNORED_UNIMPLEMENTED, "controller not implemented by gcm")
            return
        if path in LEGACY_FIELDS:
            self.ignore(path, IGNORED_LEGACY, LEGACY_FIELDS[path])
        else:
            if cls is ControllerManagerControllerConfiguration:
                known = [*known, *sorted(UNIMPLEMENTED_CONTROLLERS)]
            close = difflib.get_close_matches(key, known, n=1, cutoff=0.75)
            prefix = path[: len(path) - len(key)]
            self.ignore(path, IGNORED_UNKNOWN, suggestion=prefix + close[0] if close else "")

    def _check_resource_quota(self, obj: dict[str, Any], path: str, present: bool) -> None:
        """What decoding into ``corev1.ResourceQuota`` would reject: wrong types and bad quantities."""
        if not present:
            self.error(required(path, "a v1 ResourceQuota object is required"))
            return
        metadata = obj.get("metadata")
        if metadata is not None:
            if not isinstance(metadata, dict):
                self.error(invalid(f"{path}.metadata", metadata, "must be an object"))
            else:
                for name in ("labels", "annotations"):
                    self._check_string_map(metadata.get(name), f"{path}.metadata.{name}")
        spec = obj.get("spec")
        if spec is None:
            return
        if not isinstance(spec, dict):
            self.error(invalid(f"{path}.spec", spec, "must be an object"))
            return
        hard = spec.get("hard")
        if hard is None:
            return
        if not isinstance(hard, dict):
            self.error(invalid(f"{path}.spec.hard", hard, "must be an object"))
            return
        for name, quantity in hard.items():
            problem = _quantity_error(quantity)
            if problem:
                self.error(invalid(f"{path}.spec.hard[{_key(name)}]", quantity, problem))

    def _check_string_map(self, value: Any, path: str) -> None:
        if value is None:
            return
        if not isinstance(value, dict):
            self.error(invalid(path, value, "must be an object"))
            return
        for k, v in value.items():
            if not isinstance(v, str):
                self.error(invalid(f"{path}[{_key(k)}]", v, "must be a string"))


class _Invalid:
    def __repr__(self) -> str:
        return "<invalid>"


_INVALID: Any = _Invalid()

_HINTS: dict[type, dict[str, Any]] = {}


def _hints(cls: type) -> dict[str, Any]:
    if cls not in _HINTS:
        _HINTS[cls] = typing.get_type_hints(cls)
    return _HINTS[cls]


def _zero(tp: Any) -> Any:
    """What ``null`` decodes to inside lists and maps: Go's zero value (``None`` = drop the entry)."""
    if is_dataclass(tp):
        return {}
    return {str: "", int: 0, float: 0.0, bool: False}.get(tp)


def _key(key: Any) -> str:
    """YAML keys as sigs.k8s.io/yaml turns them into JSON keys."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    return str(key)


def _quantity_error(value: Any) -> str | None:
    """Why decoding into a ``resource.Quantity`` would reject ``value`` (``None`` when it parses)."""
    try:
        quantity_from_json(value)
    except ValueError as exc:
        return str(exc)
    return None


def decode_config(raw: Mapping[str, Any] | None) -> DecodeResult:
    """Decode a parsed document into an undefaulted configuration, collecting type errors.

    ``apiVersion`` and ``kind`` must be the ControllerManagerConfiguration's; otherwise the result
    holds only those errors (nothing else is decoded).
    """
    dec = _Decoder()
    raw = dict(raw or {})
    api_version, kind = raw.get("apiVersion"), raw.get("kind")
    if not api_version:
        dec.error(required("apiVersion", f"must be {API_VERSION!r}"))
    elif api_version != API_VERSION:
        dec.error(not_supported("apiVersion", api_version, [API_VERSION]))
    if not kind:
        dec.error(required("kind", f"must be {KIND!r}"))
    elif kind != KIND:
        dec.error(not_supported("kind", kind, [KIND]))
    if dec.errors:
        return DecodeResult(ControllerManagerConfiguration(), dec.errors, dec.ignored)
    cfg = dec._decode_dataclass(ControllerManagerConfiguration, raw, "")
    le = cfg.leader_election
    if le is not None and le.resource_lock in LEGACY_RESOURCE_LOCKS:
        dec.ignore(
            "leaderElection.resourceLock",
            IGNORED_LEGACY,
            f"resource lock {le.resource_lock!r} is no longer supported; gcm uses a Lease",
        )
    if cfg.server.webhooks is not None and cfg.server.https is not None:
        dec.ignore("server.https", IGNORED_LEGACY, "server.webhooks is set and takes precedence")
    return DecodeResult(cfg, dec.errors, dec.ignored)


# --- reading -----------------------------------------------------------------------------------------


def parse_config_text(text: str | bytes, source: str | None = None) -> dict[str, Any]:
    """The document of a YAML or JSON file as a dict; :class:`ConfigError` if it is neither."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise ConfigError([f"the file is not UTF-8 text: {exc}"], source) from None
    text = text.lstrip("\ufeff")
    stripped = text.lstrip()
    if not stripped:
        raise ConfigError(
            [f"the file is empty; it needs at least apiVersion: {API_VERSION} and kind: {KIND}"], source
        )
    doc: Any
    if stripped.startswith("{"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError([f"the file is not valid JSON: {exc}"], source) from None
    else:
        try:
            doc = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise ConfigError([f"the file is not valid YAML or JSON: {_one_line(exc)}"], source) from None
    if not isinstance(doc, dict):
        raise ConfigError(
            [
                "the file must contain one YAML or JSON object (a ControllerManagerConfiguration), "
                f"not a {_kind_of(doc)}"
            ],
            source,
        )
    return doc


def _one_line(exc: Exception) -> str:
    """A YAML error as ``line L, column C: problem (context)``, without PyYAML's source snippet."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None)
    if mark is not None and problem:
        text = f"line {mark.line + 1}, column {mark.column + 1}: {problem}"
        context = getattr(exc, "context", None)
        return f"{text} ({context})" if context else text
    return " ".join(str(exc).split())


def _kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, list):
        return "list"
    if isinstance(value, str):
        return "string"
    return type(value).__name__


def log_ignored_fields(ignored: list[IgnoredField]) -> None:
    """Log what the loader ignored: unknown fields (and a legacy resource lock, which changes what gcm
    does) as warnings, legacy and unimplemented sections at debug level."""
    for item in ignored:
        if item.kind == IGNORED_LEGACY and item.path == "leaderElection.resourceLock":
            log.warning("legacy leader election resource lock", field=item.path, note=item.note)
        elif item.kind == IGNORED_UNIMPLEMENTED:
            log.debug("ignoring configuration of a controller gcm does not implement", field=item.path)
        elif item.kind == IGNORED_LEGACY:
            log.debug("ignoring legacy configuration field", field=item.path, note=item.note)
        elif item.suggestion:
            log.warning("ignoring unknown configuration field", field=item.path, did_you_mean=item.suggestion)
        else:
            log.warning("ignoring unknown configuration field", field=item.path)


def load_config(
    source: str | os.PathLike[str] | bytes | None = None,
    *,
    text: str | bytes | None = None,
    ignored: list[IgnoredField] | None = None,
) -> ControllerManagerConfiguration:
    """Load, default and validate a ``ControllerManagerConfiguration``.

    ``source`` is a file path (``str`` or ``PathLike``), or the document itself (``bytes``, or a ``str``
    that contains a newline or starts with ``{``); ``text=`` passes the document explicitly. Without
    either, the built-in minimal config (all defaults) is returned. Raises :class:`ConfigError` listing
    every problem. The fields the loader ignored are appended to ``ignored`` when given (to be logged
    with :func:`log_ignored_fields` once logging is configured), else logged right away.
    """
    name: str | None = None
    if text is None and source is not None:
        if isinstance(source, bytes) or (
            isinstance(source, str) and ("\n" in source or source.lstrip().startswith("{"))
        ):
            text = source
        else:
            path = Path(source)
            name = str(path)
            try:
                text = path.read_bytes()
            except OSError as exc:
                reason = exc.strerror or str(exc)
                raise ConfigError([f"cannot read config file {name!r}: {reason}"], name) from None
    if text is None:
        raw: dict[str, Any] = {"apiVersion": API_VERSION, "kind": KIND}
    else:
        raw = parse_config_text(text, name)

    result = decode_config(raw)
    if ignored is None:
        log_ignored_fields(result.ignored)
    else:
        ignored.extend(result.ignored)
    if result.errors and any(e.field in ("apiVersion", "kind") for e in result.errors):
        raise ConfigError(result.errors, name)
    cfg = set_defaults(result.config)
    errors = result.errors + validate(cfg)
    if errors:
        raise ConfigError(errors, name)
    return cfg


def default_config() -> ControllerManagerConfiguration:
    """The built-in minimal configuration: every field at its default."""
    return load_config(None)


def apply_env_overrides(
    cfg: ControllerManagerConfiguration, environ: Mapping[str, str] | None = None
) -> ControllerManagerConfiguration:
    """Gardener's start-up override: a non-empty ``KUBECONFIG`` replaces
    ``gardenClientConnection.kubeconfig`` (``environ`` defaults to ``os.environ``); returns ``cfg``."""
    env = os.environ if environ is None else environ
    kubeconfig = env.get("KUBECONFIG", "")
    if kubeconfig:
        cfg.garden_client_connection.kubeconfig = kubeconfig
    return cfg
