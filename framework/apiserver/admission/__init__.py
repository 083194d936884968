"""Admission webhooks: the server calls Mutating/ValidatingWebhookConfigurations like
kube-apiserver's ``MutatingAdmissionWebhook`` and ``ValidatingAdmissionWebhook`` plugins.

How a write is admitted
-----------------------
The REST layer (``rest/``) is synchronous and runs on the server's event loop; webhooks are remote
HTTPS calls and must not block that loop (a webhook may well call back into this server). So the HTTP
layer hands create/update/patch/delete/deletecollection to :class:`Admission`, which runs the
synchronous REST operation up to three times, awaiting the webhooks in between:

1. *mutate*: the operation runs (dry) until just before built-in validation; there the object is
   captured and the matching mutating webhooks are called in order (configuration name, then list
   order; ``reinvocationPolicy: IfNeeded`` webhooks once more if a later one changed the object). Their
   JSONPatches are applied in turn.
2. *validate*: the operation runs (dry) again with the mutated object substituted before validation, so
   built-in validation (and the schema of a custom resource) judges the mutated object; the object as it
   would be persisted is captured and the matching validating webhooks are called (concurrently).
3. *commit*: the operation runs for real with the same substitution. If the stored object changed while
   the webhooks were called (another writer got in between), everything starts over, as kube-apiserver's
   optimistic update loop would (at most :data:`MAX_ATTEMPTS` times, then 409).

When no webhook's rules can match the request, the operation simply runs once (no overhead). DELETE
(21-7) reviews the stored object as ``oldObject`` at the point where the deletion would change
something — a Namespace is reviewed before it is marked Terminating; ``deletecollection`` reviews each
object. Writes of the in-process controllers (namespace controller, garbage collector) do not go through
webhooks.

Calls
-----
``clientConfig.url`` is called as given; ``clientConfig.service`` is resolved through
``APIServer.webhook_service_map[(namespace, name, port)] = "host:port"`` (there is no cluster network),
while TLS still verifies the name ``NAME.NAMESPACE.svc`` against ``caBundle`` (system roots without
one). Requests and responses follow 21-4/21-5 (AdmissionReview ``v1`` or ``v1beta1``, whichever the
webhook lists first); failures and denials produce kube-apiserver's Status messages (21-5, 21-6).
"""

from __future__ import annotations

from framework.apiserver.admission.chain import Admission

__all__ = ["Admission"]
