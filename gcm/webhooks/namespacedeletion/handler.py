"""The namespace-deletion validator (Gardener's ``pkg/admissioncontroller/.../namespacedeletion``).

A project namespace may only go through its Project: a DELETE of a namespace that belongs to a Project is
allowed when the namespace is already being deleted, or when the Project is being deleted and no Shoots
remain in the namespace (listed live from the API server); otherwise it is refused (403 Forbidden).

Namespace and Project are read from the manager's cache; when the cache says NotFound they are read
live once more (a deliberate deviation, the one a TODO in Gardener's handler.go asks for: a stale
cache must not wrongly allow).
"""

from __future__ import annotations

import time

import structlog

from framework.client import Client, NotFound, Reader
from framework.markers.rbac import rbac
from framework.markers.webhook import webhook
from framework.meta.object import get_labels, is_being_deleted
from framework.webhook import AdmissionRequest, AdmissionResponse, allowed, denied, errored
from gcm.apis.constants import GROUP_CORE, LABEL_PROJECT_NAME, PROJECT, SHOOT, WEBHOOK_NAMESPACE_DELETION

log = structlog.get_logger("gcm.webhooks.namespacedeletion")

PATH = "/webhooks/validate-namespace-deletion"
WEBHOOK_NAME = WEBHOOK_NAMESPACE_DELETION
PROJECT_API_VERSION = PROJECT[0]
TIMEOUT = 10.0  # the overall time budget of one review (as Gardener's handler.go)


def internal_error(cause: str | BaseException) -> AdmissionResponse:
    """``apierrors.NewInternalError``: 500 InternalError with the cause as message suffix and cause."""
    text = str(cause)
    return AdmissionResponse(
        False,
        {
            "status": "Failure",
            "code": 500,
            "reason": "InternalError",
            "message": f"Internal error occurred: {text}",
            "details": {"causes": [{"message": text}]},
        },
    )


def forbidden(namespace: str, reason: str) -> AdmissionResponse:
    """``apierrors.NewForbidden(Resource("Namespace"), namespace, reason)``."""
    return denied(
        f'Namespace "{namespace}" is forbidden: {reason}',
        403,
        "Forbidden",
        details={"name": namespace, "kind": "Namespace"},
    )


# Live reads when the cache may lag: the Namespace and its Project (get); Shoots (list, limit 1).
@rbac(groups="", resources="namespaces", verbs="get")
@rbac(groups=GROUP_CORE, resources="projects", verbs="get")
@rbac(groups=GROUP_CORE, resources="shoots", verbs="list")
# Its rule in manifests/deploy/webhook.yaml (hand-written: docs/webhooks.md; a test keeps them equal).
@webhook(
    path=PATH,
    name=WEBHOOK_NAME,
    groups="",
    versions="v1",
    resources="namespaces",
    operations="DELETE",
    scope="Cluster",
)
class NamespaceDeletionHandler:
    """``handler(AdmissionRequest) -> AdmissionResponse`` for ``framework.webhook.WebhookServer``.

    ``reader`` reads from the cache (``mgr.client``), ``api_reader`` from the API server
    (``mgr.api_reader``, a ``Client``: its reads take a ``timeout``).
    """

    def __init__(self, reader: Reader, api_reader: Client, timeout: float = TIMEOUT) -> None:
        self.reader = reader
        self.api_reader = api_reader
        self.timeout = timeout

    def __call__(self, req: AdmissionRequest) -> AdmissionResponse:
        if req.operation != "DELETE":
            return allowed()
        if tuple(req.resource) != ("", "v1", "namespaces"):
            return errored(
                400,
                f"unexpected resource {req.resource.group}/{req.resource.version}, "
                f"Resource={req.resource.resource}: this webhook validates namespaces",
            )
        if req.old_object is None:
            # controller-runtime decodes oldObject for DELETE before the validator runs
            # (pkg/webhook/admission/validator_custom.go).
            return errored(400, "there is no content to decode")
        deadline = time.monotonic() + self.timeout
        name = req.name
        try:
            namespace = self._get("v1", "Namespace", name, deadline)
        except NotFound:
            return allowed()
        except Exception as e:  # any read failure is an internal error, as in Gardener
            return internal_error(e)
        project_name = get_labels(namespace).get(LABEL_PROJECT_NAME)
        if not project_name:
            return allowed()
        try:
            project = self._get(*PROJECT, project_name, deadline)
        except NotFound:
            return allowed()
        except Exception as e:
            return internal_error(e)
        if namespace["metadata"].get("deletionTimestamp"):
            return allowed()  # deletion is under way; repeated DELETEs must not fail
        if is_being_deleted(project):
            try:
                has_shoots = self._has_shoots(name, deadline)
            except Exception as e:
                return internal_error(e)
            if not has_shoots:
                return allowed()
            reason = f'deletion of namespace "{name}" is not permitted (it still contains Shoots)'
        else:
            reason = (
                f'direct deletion of namespace "{name}" is not permitted (you must delete the '
                f'corresponding project "{project_name}")'
            )
        log.info("rejected namespace deletion", namespace=name, user=req.username, reason=reason)
        return forbidden(name, reason)

    @staticmethod
    def _left(deadline: float) -> float:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the namespace-deletion webhook ran out of time")
        return left

    def _get(self, api_version: str, kind: str, name: str, deadline: float) -> dict:
        """From the cache; a NotFound there is confirmed by a live read (stale caches must not allow)."""
        try:
            return self.reader.get(api_version, kind, name)
        except NotFound:
            return self.api_reader.get(api_version, kind, name, timeout=self._left(deadline))

    def _has_shoots(self, namespace: str, deadline: float) -> bool:
        """Whether the namespace holds a Shoot: a live, metadata-only list with ``limit=1``."""
        result = self.api_reader.list(
            *SHOOT, namespace, limit=1, metadata_only=True, timeout=self._left(deadline)
        )
        return bool((result or {}).get("items"))
