"""What the stale and activity reconcilers read from the manager's cache, and the indexes they look up.

Bindings are cached cluster-wide once and looked up through indexes, so a stale check costs a few
dictionary lookups per Project instead of a cluster-wide list per Project:

- SecretBindings by ``secretRef`` (``<namespace>/<name>``) and by each ``quotas[]`` entry;
- CredentialsBindings by ``credentialsRef`` (``<apiVersion>|<kind>|<namespace>/<name>``) and by each
  ``quotas[]`` entry;
- Shoots by the binding they use (``<namespace>/<secretBindingName>``,
  ``<namespace>/<credentialsBindingName>``).

A reference without a namespace means the binding's own namespace (what Gardener's API server
defaults it to); this can only make a Project count as *in use*, never stale.

Secrets (and InternalSecrets) are listed and watched as ``PartialObjectMetadata``, so their data never
reaches gcm; :func:`secret_metadata_only` also drops ``managedFields`` and kubectl's
``last-applied-configuration`` annotation (which would hold the data again), and everything but
``apiVersion``, ``kind`` and ``metadata`` should a full object arrive.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from framework.manager import CacheOptions
from framework.meta.object import get_namespace
from gcm.apis.constants import (
    BACKUP_ENTRY,
    CREDENTIALS_BINDING,
    INTERNAL_SECRET,
    PLANT,
    PROJECT,
    QUOTA,
    SECRET_BINDING,
    SHOOT,
    WORKLOAD_IDENTITY,
)
from gcm.apis.constants import LABEL_CREDENTIALS_BINDING_REFERENCE as LABEL_CREDENTIALS_BINDING_REF
from gcm.apis.constants import LABEL_SECRET_BINDING_REFERENCE as LABEL_SECRET_BINDING_REF

__all__ = [
    "BACKUP_ENTRY",
    "CREDENTIALS_BINDING",
    "INTERNAL_SECRET",
    "LABEL_CREDENTIALS_BINDING_REF",
    "LABEL_SECRET_BINDING_REF",
    "NAMESPACE",
    "PLANT",
    "PROJECT",
    "QUOTA",
    "SECRET",
    "SECRET_BINDING",
    "SHOOT",
    "WORKLOAD_IDENTITY",
    "cache_options",
    "secret_metadata_only",
]

NAMESPACE = ("v1", "Namespace")
SECRET = ("v1", "Secret")

# Index names are prefixed so they never share a name (and so a function) with another controller's.
INDEX_SECRET_BINDING_SECRET_REF = "gcm.stale/secretbinding-secretref"
INDEX_SECRET_BINDING_QUOTA = "gcm.stale/secretbinding-quota"
INDEX_CREDENTIALS_BINDING_REF = "gcm.stale/credentialsbinding-credentialsref"
INDEX_CREDENTIALS_BINDING_QUOTA = "gcm.stale/credentialsbinding-quota"
INDEX_SHOOT_SECRET_BINDING = "gcm.stale/shoot-secretbinding"
INDEX_SHOOT_CREDENTIALS_BINDING = "gcm.stale/shoot-credentialsbinding"

_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def secret_metadata_only(obj: Any) -> Any:
    """Cache transform for Secrets and InternalSecrets: metadata only, never data."""
    if not isinstance(obj, dict):
        return obj
    meta = obj.get("metadata")
    if isinstance(meta, dict):
        meta.pop("managedFields", None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict) and _LAST_APPLIED in annotations:
            meta["annotations"] = {k: v for k, v in annotations.items() if k != _LAST_APPLIED}
    return {k: obj[k] for k in ("apiVersion", "kind", "metadata") if k in obj}


def cache_options() -> dict[tuple[str, str], CacheOptions]:
    """The Manager's cache options these controllers need (fixed when the Manager is constructed)."""
    return {
        SECRET: CacheOptions(transform=secret_metadata_only, metadata_only=True),
        INTERNAL_SECRET: CacheOptions(transform=secret_metadata_only, metadata_only=True),
    }


def _ns(obj: dict) -> str:
    return get_namespace(obj)


def ref_key(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def credentials_ref_key(api_version: str, kind: str, namespace: str, name: str) -> str:
    return f"{api_version}|{kind}|{namespace}/{name}"


def _quota_keys(binding: dict) -> list[str]:
    out = []
    for q in binding.get("quotas") or ():
        if isinstance(q, dict) and q.get("name"):
            out.append(ref_key(q.get("namespace") or _ns(binding), q["name"]))
    return sorted(set(out))


def secret_binding_secret_ref(binding: dict) -> list[str]:
    ref = binding.get("secretRef") or {}
    if not isinstance(ref, dict) or not ref.get("name"):
        return []
    return [ref_key(ref.get("namespace") or _ns(binding), ref["name"])]


def credentials_binding_ref(binding: dict) -> list[str]:
    ref = binding.get("credentialsRef") or {}
    if not isinstance(ref, dict) or not ref.get("name"):
        return []
    return [
        credentials_ref_key(
            ref.get("apiVersion") or "",
            ref.get("kind") or "",
            ref.get("namespace") or _ns(binding),
            ref["name"],
        )
    ]


def shoot_secret_binding(shoot: dict) -> list[str]:
    name = (shoot.get("spec") or {}).get("secretBindingName")
    return [ref_key(_ns(shoot), name)] if name else []


def shoot_credentials_binding(shoot: dict) -> list[str]:
    name = (shoot.get("spec") or {}).get("credentialsBindingName")
    return [ref_key(_ns(shoot), name)] if name else []


INDEXES: Mapping[tuple[str, str], Mapping[str, Callable[[dict], list[str]]]] = {
    SECRET_BINDING: {
        INDEX_SECRET_BINDING_SECRET_REF: secret_binding_secret_ref,
        INDEX_SECRET_BINDING_QUOTA: _quota_keys,
    },
    CREDENTIALS_BINDING: {
        INDEX_CREDENTIALS_BINDING_REF: credentials_binding_ref,
        INDEX_CREDENTIALS_BINDING_QUOTA: _quota_keys,
    },
    SHOOT: {
        INDEX_SHOOT_SECRET_BINDING: shoot_secret_binding,
        INDEX_SHOOT_CREDENTIALS_BINDING: shoot_credentials_binding,
    },
}
