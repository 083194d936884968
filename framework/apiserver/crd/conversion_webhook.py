"""Calling a CRD's conversion webhook (apiextensions-apiserver's ``webhook_converter.go``): one
``ConversionReview`` per conversion (a list's objects in one review), sent over TLS to
``spec.conversion.webhook.clientConfig`` with the admission webhooks' HTTP client (a ``service`` reaches
its address through ``APIServer.webhook_service_map``), the answer checked object by object, and every
failure worded as kube-apiserver words it (``conversion webhook for <gvk> failed: ...``)."""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING

import structlog

from framework.apiserver.admission.client import CallError
from framework.apiserver.crd import conversion
from framework.apiserver.crd.conversion import ConversionError
from framework.apiserver.machinery.jsonvalues import as_dict

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer

log = structlog.get_logger("framework.apiserver")

# The webhook client's request timeout (k8s.io/apiserver ``pkg/util/webhook``: 30 s by default);
# conversion requests carry no ``?timeout=`` parameter.
TIMEOUT = 30.0


class WebhookConverter:
    """Converts custom resources through their CRD's webhook, for ``server``."""

    def __init__(self, server: APIServer) -> None:
        self.server = server

    async def convert(
        self, crd: dict, objects: list[dict], desired: str, subject: str, as_list: bool
    ) -> list[dict]:
        """``objects`` (none already in ``desired``) converted to the apiVersion ``desired``, metadata
        restored; ``subject`` is the GVK the error texts name (the object's, or the list's). Raises
        ``ConversionError`` with kube-apiserver's text."""
        if not objects:
            return []
        name = as_dict(crd.get("metadata")).get("name") or ""
        uid = str(uuid.uuid4())
        review_version = conversion.review_api_version(crd)
        review = conversion.review_request(review_version, objects, desired, uid)
        client_config = as_dict(conversion.webhook_config(crd).get("clientConfig"))
        try:
            doc = await self.server.admission.client.post(client_config, review, TIMEOUT, timeout_param=False)
            answered = conversion.response_objects(review_version, doc, uid)
        except (CallError, ConversionError) as e:
            log.warning("conversion webhook failed", crd=name, error=str(e))
            raise ConversionError(f"conversion webhook for {subject} failed: {e}") from None
        if len(answered) != len(objects):
            raise ConversionError(
                f"conversion webhook for {subject} returned {len(answered)} objects, expected {len(objects)}"
            )
        out = []
        for i, (original, converted) in enumerate(zip(objects, answered, strict=True)):
            # Go's loop counts an object before checking it, so a list's messages name index + 1
            # (single objects always say index 0).
            where = f"invalid converted object at index {i + 1}" if as_list else "invalid object at index 0"
            problem = conversion.check_converted(original, converted, desired)
            if problem is not None:
                raise ConversionError(f"conversion webhook for {subject} returned {where}: {problem}")
            problem = conversion.check_identity(original, converted)
            if problem is not None:
                where = f"invalid converted object at index {i + 1}" if as_list else "invalid object"
                raise ConversionError(f"conversion webhook for {subject} returned {where}: {problem}")
            try:
                out.append(conversion.restore_metadata(original, converted))
            except ConversionError as e:
                where = f"invalid metadata in object at index {i + 1}" if as_list else "invalid metadata"
                raise ConversionError(f"conversion webhook for {subject} returned {where}: {e}") from None
        return out
