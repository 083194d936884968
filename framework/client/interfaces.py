"""The client contract: :class:`Reader` and :class:`Writer`, as controller-runtime's ``client.Reader`` /
``client.Writer``.

Two implementations read: the live :class:`~framework.client.Client` (every call is a request) and the
manager's cache ``mgr.cache`` (:class:`~framework.manager.Cache`, answering from its informers, as
controller-runtime's ``cache.Cache`` is a Reader). The manager's client ``mgr.client`` is the live
client with that cache in front of its reads (:meth:`Client.with_cache
<framework.client.Client.with_cache>`); writes go to the API server. Code written against these
protocols runs on any of them, with the same results and the same errors: a namespaced kind read
without a namespace raises ``ValueError`` in each, a missing object raises ``NotFound`` in each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, runtime_checkable

__all__ = ["FieldSelectorArg", "LabelSelectorArg", "PatchType", "Reader", "ReaderWriter", "Writer"]

LabelSelectorArg = str | Mapping[str, Any] | None
"""A label selector: a string (``"app=web,tier in (a,b)"``), a map of labels that must all match
(``{"app": "web"}``, controller-runtime's ``MatchingLabels``), or a ``LabelSelector`` dict
(``{"matchLabels": {...}, "matchExpressions": [...]}``, as in a Deployment's ``spec.selector``)."""

FieldSelectorArg = str | Mapping[str, str] | None
"""A field selector: a string (``"metadata.name=x"``) or a map of exact matches (``MatchingFields``).
The cache answers it from the field index registered under that field's name
(``mgr.add_field_index(av, kind, "spec.nodeName", func)``); ``metadata.name`` and
``metadata.namespace`` need no index."""

PatchType = Literal["merge", "json", "strategic", "apply"]
"""How a patch is applied: JSON merge patch, JSON patch, strategic merge patch or server-side apply."""


@runtime_checkable
class Reader(Protocol):
    """Reads objects as plain dicts."""

    def get(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """One object; ``NotFound`` if there is none. ``namespace`` is required for namespaced kinds and
        forbidden for cluster-scoped ones (``ValueError``). ``metadata_only`` reads a
        PartialObjectMetadata (``None``: the reader's default, full objects unless the cache is
        configured metadata-only for the kind)."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: LabelSelectorArg = None,
        field_selector: FieldSelectorArg = None,
        metadata_only: bool | None = None,
    ) -> dict[str, Any]:
        """A List dict (``apiVersion``, ``kind`` = ``<Kind>List``, ``metadata.resourceVersion``,
        ``items``); a namespaced kind without ``namespace`` lists all namespaces."""
        ...


@runtime_checkable
class Writer(Protocol):
    """Writes objects; every call goes to the API server and returns the object it answers with."""

    def create(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Create ``obj``; ``AlreadyExists`` if the name is taken."""
        ...

    def update(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace ``obj`` (``Conflict`` if its ``metadata.resourceVersion`` is stale)."""
        ...

    def update_status(
        self, obj: Mapping[str, Any], *, dry_run: bool = False, field_manager: str | None = None
    ) -> dict[str, Any]:
        """Replace ``obj``'s status through the ``/status`` subresource."""
        ...

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        namespace: str | None = None,
        *,
        patch_type: PatchType = "merge",
        subresource: str | None = None,
        field_manager: str | None = None,
        force: bool | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Patch one object (``merge``, ``json``, ``strategic`` or ``apply``)."""
        ...

    def apply(
        self,
        obj: Mapping[str, Any],
        *,
        field_owner: str,
        force: bool = False,
        subresource: str | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Server-side apply ``obj`` (the fields this manager owns) as ``field_owner``."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        namespace: str | None = None,
        *,
        propagation_policy: str | None = None,
        preconditions: Mapping[str, str] | None = None,
        grace_period_seconds: int | None = None,
        dry_run: bool = False,
    ) -> dict[str, Any]:
        """Delete one object; ``NotFound`` if it is gone."""
        ...

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
    ) -> dict[str, Any]:
        """Delete every matching object of a collection (controller-runtime's ``DeleteAllOf``)."""
        ...


@runtime_checkable
class ReaderWriter(Reader, Writer, Protocol):
    """Both halves: what ``mgr.client`` and :class:`~framework.client.Client` are
    (controller-runtime's ``client.Client``)."""
