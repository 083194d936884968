"""The files ``python -m framework create api`` and ``create webhook`` write, as
:class:`string.Template` texts. Names: those of :mod:`framework.scaffold.templates` plus ``group``
(the full API group), ``version``, ``kind``, ``plural``, ``scope``, ``module`` (the kind's module name),
``api_module`` (the import path of its types), ``group_short`` (the group as given, without the domain).
"""

from __future__ import annotations

from framework.scaffold.templates import project_test

TYPES = '''\
"""${kind}: the ${group}/${version} API (``generate`` writes its CRD from this)."""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

from framework.markers import MaxLength, resource
from framework.types.meta_v1 import Condition, ObjectMeta


class ${kind}Spec(TypedDict):
    """The desired state of a ${kind}."""

    foo: NotRequired[Annotated[str, MaxLength(64)]]
    """An example field of ${kind}: replace it with yours."""


class ${kind}Status(TypedDict):
    """The observed state of a ${kind}."""

    conditions: NotRequired[list[Condition]]
    """What the controller last observed: a Ready condition once it reconciled the ${kind}."""


@resource(
    group="${group}",
    version="${version}",
    kind="${kind}",
    plural="${plural}",
    scope="${scope}",
${storage})
class ${kind}(TypedDict):
    """${kind} is the Schema for the ${plural} API."""

    apiVersion: str
    kind: str
    metadata: ObjectMeta
    spec: NotRequired[${kind}Spec]
    status: NotRequired[${kind}Status]


API_VERSION = "${group}/${version}"
KIND = "${kind}"
'''

CONTROLLER = '''\
"""The ${kind} controller: reconciles ${group}/${version} ${kind} objects."""

from __future__ import annotations

from typing import cast

import structlog
from framework import Builder, Manager, NotFound, Request, Result
from framework.client import ReaderWriter
from framework.markers.rbac import rbac
from framework.meta.conditions import set_status_condition

from ${api_module} import API_VERSION, KIND, ${kind}

log = structlog.get_logger(__name__)


@rbac(
    groups=["${group}"],
    resources=["${plural}"],
    verbs=["get", "list", "watch", "create", "update", "patch", "delete"],
)
@rbac(
    groups=["${group}"],
    resources=["${plural}/status"],
    verbs=["get", "update", "patch"],
)
@rbac(
    groups=["${group}"],
    resources=["${plural}/finalizers"],
    verbs=["update"],
)
class ${kind}Reconciler:
    """Brings the cluster towards what a ${kind} asks for; level-triggered, so it reads the current
    state and converges it, however many events led here."""

    def __init__(self, client: ReaderWriter) -> None:
        self.client = client

    def reconcile(self, request: Request) -> Result | None:
        try:
            obj = self.client.get(API_VERSION, KIND, request.name, request.namespace)
        except NotFound:
            return None  # deleted: what it owns goes with the garbage collector
        ${module} = cast(${kind}, obj)  # typed reads: mypy knows the fields of ${kind}
        log.info("reconciling", generation=${module}["metadata"].get("generation"))
        # Your logic here: read ${module}.get("spec"), create or update what it asks for.
        conditions = obj.setdefault("status", {}).setdefault("conditions", [])
        ready = {
            "type": "Ready",
            "status": "True",
            "reason": "Reconciled",
            "message": "the ${kind} is reconciled",
            "observedGeneration": obj["metadata"].get("generation", 0),
        }
        if set_status_condition(conditions, ready):  # False: nothing changed, nothing to write
            self.client.update_status(obj)
        return None


def setup(mgr: Manager) -> None:
    """Add the ${kind} controller to the manager."""
    Builder(mgr).for_(API_VERSION, KIND).complete(${kind}Reconciler(mgr.client))
'''

CONTROLLER_TEST = project_test("controller_test.py.tmpl")

SAMPLE = """\
apiVersion: ${group}/${version}
kind: ${kind}
metadata:
  labels:
    app.kubernetes.io/name: ${project}
  name: ${module}-sample
spec:
  foo: bar
"""

WEBHOOK = '''\
"""Admission webhooks of ${group}/${version} ${kind}: ${what}."""

from __future__ import annotations

from typing import Any

from framework import Manager
from framework.meta import field
from framework.webhook import Invalid, WebhookBuilder

from ${api_module} import API_VERSION, KIND
${functions}

def setup(mgr: Manager) -> None:
    """Register the ${kind} webhooks on the manager's webhook server."""
    hooks = WebhookBuilder(mgr).for_(API_VERSION, KIND)
${chain}    hooks.complete()
'''

DEFAULTER = '''

def default(obj: dict[str, Any]) -> None:
    """Set the defaults of a ${kind} being created or updated (change ``obj`` in place)."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("foo", "default")
'''

VALIDATOR = '''

def validate(obj: dict[str, Any]) -> list[str]:
    """Refuse a ${kind} that must not be stored; the strings returned are warnings for the client."""
    foo = (obj.get("spec") or {}).get("foo")
    if foo == "invalid":
        raise Invalid(field.invalid("spec.foo", foo, "must not be 'invalid'"))
    return []


def validate_update(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    return validate(new)
'''

WEBHOOK_TEST = project_test("webhook_test.py.tmpl")

DEFAULTER_TEST = """

def test_defaults_are_set(manager):
    wait_for_webhooks(manager)
    created = manager.api_reader.create(new("${module}-defaulted"))
    assert created["spec"]["foo"] == "default"
"""

VALIDATOR_TEST = """

def test_an_invalid_object_is_refused(manager):
    wait_for_webhooks(manager)
    with pytest.raises(APIError) as refused:
        manager.api_reader.create(new("${module}-invalid", foo="invalid"))
    assert refused.value.status == 422
    assert "must not be 'invalid'" in str(refused.value)
"""

WEBHOOK_KUSTOMIZATION = """\
# The Service in front of the manager's webhook server. The manager writes the Mutating- and
# ValidatingWebhookConfiguration itself (managed-webhook-configuration in pyproject.toml). With
# cert-manager instead, list manifests.yaml (written by `python -m framework generate`) here too,
# and drop webhook_configuration= from the manager.
resources:
- service.yaml
"""

WEBHOOK_SERVICE = """\
apiVersion: v1
kind: Service
metadata:
  labels:
    app.kubernetes.io/name: ${project}
  name: webhook-service
  namespace: system
spec:
  ports:
  - port: 443
    protocol: TCP
    targetPort: 9443
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
"""

# -- create webhook --conversion ---------------------------------------------------------------------
# Names: those above plus ``hub`` (the hub version), ``spoke`` (one spoke version, in SPOKE), ``spokes``
# (the SPOKES entries), ``spoke_imports``, ``versions`` (every version, for the test).

HUB = '''\
"""${kind} ${hub} is the hub of the ${kind} conversions: every other version converts itself to ${hub}
and back (its ``${module}_conversion.py``), so the hub has no conversion code of its own (kubebuilder's
``Hub()`` marker)."""

HUB = "${hub}"
'''

SPOKE = '''\
"""${kind} ${spoke} to the hub version ${hub} and back, for the conversion webhook (served at
``/convert`` by ``${package}/webhooks/${module}_conversion.py``)."""

from __future__ import annotations

from typing import Any


class ${kind}${spoke_class}:
    """The ${spoke} spoke of ${kind}. Each function gets its own copy of the object and returns the
    converted one; the framework sets its ``apiVersion``. Only labels and annotations of the metadata
    may change."""

    def convert_to(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A ${spoke} ${kind} as ${hub} has it. The versions' fields are the same so far: map each field
        that differs here."""
        return obj

    def convert_from(self, hub: dict[str, Any]) -> dict[str, Any]:
        """A ${hub} ${kind} as ${spoke} has it."""
        return hub
'''

CONVERSION_WEBHOOK = '''\
"""The CRD conversion webhook of ${group} ${kind}: ${hub} is the hub, the other versions convert
through it. The CRD calls it through config/crd/patches/webhook_in_${plural}.yaml."""

from __future__ import annotations

from framework import Manager
from framework.webhook import WebhookBuilder

${imports}
SPOKES = {
${spokes}}


def setup(mgr: Manager) -> None:
    """Serve the ${kind} conversions at ``/convert`` of the manager's webhook server."""
    hooks = WebhookBuilder(mgr).for_(API_VERSION, KIND)
    hooks.with_conversion(hub="${hub}", spokes=SPOKES)
    hooks.complete()
'''

CONVERSION_TEST = project_test("conversion_test.py.tmpl")

CRD_WEBHOOK_PATCH = """\
# The conversion webhook of ${kind}: the API server calls /convert of the webhook Service (the manager)
# to show a ${kind} stored in one version in another. The Service's certificate authority goes into
# clientConfig.caBundle: cert-manager's CA injector writes it, or yourself (see the framework's
# docs/extension-guide.md, "Conversion webhooks").
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${plural}.${group}
spec:
  conversion:
    strategy: Webhook
    webhook:
      clientConfig:
        service:
          namespace: system
          name: webhook-service
          path: /convert
      conversionReviewVersions:
      - v1
"""
