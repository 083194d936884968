"""The ``project-resourcequota`` reconciler."""

from __future__ import annotations

import pytest

from framework.testing import consistently
from gcm.controllers.project.resourcequota import (
    PerShootResource,
    ResourceQuotaReconciler,
    project_namespace_predicate,
)
from tests.gcm.controllers.project import project_harness as h

SHOOTS, CM, SEC = "count/shoots.core.gardener.cloud", "count/configmaps", "count/secrets"
A_CM, A_SEC = "quota.gardener.cloud/configmaps-per-shoot", "quota.gardener.cloud/secrets-per-shoot"


@pytest.fixture
def project_env(env):
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    return env


def create_quota(env, name, hard, annotations=None, namespace="garden-p1"):
    meta = {"name": name, "namespace": namespace}
    if annotations:
        meta["annotations"] = annotations
    return env.admin.create(
        {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": meta, "spec": {"hard": hard}}
    )


def wait_quota(env, name, annotations, hard, namespace="garden-p1"):
    def check():
        q = env.get("v1", "ResourceQuota", name, namespace)
        have_ann = {k: v for k, v in (q["metadata"].get("annotations") or {}).items() if k in (A_CM, A_SEC)}
        return q if have_ann == annotations and q["spec"]["hard"] == hard else None

    return h.wait_for(check, message=f"quota {name}")


def settled(env, quota, namespace="garden-p1"):
    """The quota, unchanged (same resourceVersion) over the time the controller would need to act."""
    name, rv = quota["metadata"]["name"], quota["metadata"]["resourceVersion"]
    return consistently(
        lambda: (
            (q := env.get("v1", "ResourceQuota", name, namespace))["metadata"]["resourceVersion"] == rv and q
        ),
        duration=0.5,
        message=f"quota {name} untouched",
    )


def test_g69_quota_outside_project_namespace_untouched(env):
    env.create_namespace("other")
    q = create_quota(env, "q", {SHOOTS: "1", CM: "2", SEC: "4"}, namespace="other")
    after = settled(env, q, "other")
    assert after["metadata"]["resourceVersion"] == q["metadata"]["resourceVersion"]
    assert not (after["metadata"].get("annotations") or {})


def test_quota_in_a_namespace_a_project_names_but_gcm_refused_to_adopt_is_untouched(env):
    # The namespace lacks the project labels, so the Project fails; Gardener's controller would still
    # raise the quota (its predicate only asks whether a Project names the namespace). gcm does not:
    # the namespace is not gcm's.
    env.create_namespace("garden-foreign")
    env.create_project("p2", namespace="garden-foreign")
    env.wait_phase("p2", "Failed")
    q = create_quota(env, "q", {SHOOTS: "1", CM: "1", SEC: "1"}, namespace="garden-foreign")
    after = settled(env, q, "garden-foreign")
    assert after["spec"]["hard"] == {SHOOTS: "1", CM: "1", SEC: "1"}
    assert not (after["metadata"].get("annotations") or {})
    # ... while the same quota in an adopted project namespace is raised.
    env.create_namespace(
        "garden-adopted", labels={"gardener.cloud/role": "project", "project.gardener.cloud/name": "p3"}
    )
    env.create_project("p3", namespace="garden-adopted")
    env.wait_phase("p3", "Ready")
    create_quota(env, "q", {SHOOTS: "1", CM: "1", SEC: "1"}, namespace="garden-adopted")
    wait_quota(
        env, "q", {A_CM: "2", A_SEC: "4"}, {SHOOTS: "1", CM: "2", SEC: "4"}, namespace="garden-adopted"
    )


def test_g70_annotations_added_values_kept(project_env):
    create_quota(project_env, "q", {SHOOTS: "1", CM: "2", SEC: "4"})
    wait_quota(project_env, "q", {A_CM: "2", A_SEC: "4"}, {SHOOTS: "1", CM: "2", SEC: "4"})


def test_g71_no_keys_no_annotations(project_env):
    q = create_quota(project_env, "q", {SHOOTS: "1"})
    after = settled(project_env, q)
    assert after["metadata"]["resourceVersion"] == q["metadata"]["resourceVersion"]
    assert after["spec"]["hard"] == {SHOOTS: "1"}


def test_g72_low_values_raised(project_env):
    create_quota(project_env, "q", {SHOOTS: "1", CM: "1", SEC: "2"})
    wait_quota(project_env, "q", {A_CM: "2", A_SEC: "4"}, {SHOOTS: "1", CM: "2", SEC: "4"})


def test_g73_already_accounted(project_env):
    project_env.server.reset_request_counts()
    q = create_quota(project_env, "q", {SHOOTS: "1", CM: "2", SEC: "4"}, {A_CM: "2", A_SEC: "4"})
    after = settled(project_env, q)
    assert after["metadata"]["resourceVersion"] == q["metadata"]["resourceVersion"]
    assert ("patch", "resourcequotas") not in project_env.gcm_writes()


def test_g74_higher_annotations_lowered_only(project_env):
    create_quota(project_env, "q", {SHOOTS: "1", CM: "3", SEC: "5"}, {A_CM: "3", A_SEC: "5"})
    wait_quota(project_env, "q", {A_CM: "2", A_SEC: "4"}, {SHOOTS: "1", CM: "3", SEC: "5"})


def test_g75_lower_annotations_add_difference(project_env):
    create_quota(project_env, "q", {SHOOTS: "1", CM: "1", SEC: "3"}, {A_CM: "1", A_SEC: "3"})
    wait_quota(project_env, "q", {A_CM: "2", A_SEC: "4"}, {SHOOTS: "1", CM: "2", SEC: "4"})


def test_g76_shoot_count_used_without_shoot_key(project_env):
    for name in ("s1", "s2"):
        project_env.create_shoot(name, "garden-p1")
    h.wait_for(lambda: len(project_env.mgr.client.list(h.P, "Shoot", namespace="garden-p1")["items"]) == 2)
    create_quota(project_env, "q", {CM: "1", SEC: "1"})
    wait_quota(project_env, "q", {A_CM: "2", A_SEC: "4"}, {CM: "4", SEC: "8"})


# --- unit ---------------------------------------------------------------------------------------------


class IndexStub:
    def __init__(self, namespaces):
        self.namespaces = namespaces

    def list(self, api_version, kind, namespace=None, *, field_selector=None, **_):
        ns = field_selector["spec.namespace"]
        return {"items": [{"spec": {"namespace": ns}}] if ns in self.namespaces else []}


def test_g69_predicate_unit():
    pred = project_namespace_predicate(IndexStub({"garden-p1"}))
    inside = {"metadata": {"name": "q", "namespace": "garden-p1"}}
    outside = {"metadata": {"name": "q", "namespace": "other"}}
    assert (
        pred.create(inside) and pred.update(inside, inside) and pred.delete(inside) and pred.generic(inside)
    )
    assert not any(
        (pred.create(outside), pred.update(outside, outside), pred.delete(outside), pred.generic(outside))
    )


def quota(hard, annotations=None, deleting=False):
    meta = {"name": "q", "namespace": "garden-p1", "annotations": annotations or {}}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"metadata": meta, "spec": {"hard": hard}}


def test_compute_patch_unit():
    r = ResourceQuotaReconciler(None)
    assert r.compute_patch(quota({})) == {}
    assert r.compute_patch(quota({SHOOTS: "1", CM: "1"}, deleting=True)) == {}
    assert r.compute_patch(quota({SHOOTS: "10", CM: "5"})) == {
        "metadata": {"annotations": {A_CM: "2"}},
        "spec": {"hard": {CM: "20"}},
    }
    with pytest.raises(ValueError):
        r.compute_patch(quota({SHOOTS: "1", CM: "1"}, {A_CM: "two"}))
    # Annotation present but the key missing: the difference is added to zero.
    assert r.compute_patch(quota({SHOOTS: "2"}, {A_CM: "1", A_SEC: "4"})) == {
        "metadata": {"annotations": {A_CM: "2"}},
        "spec": {"hard": {CM: "2"}},
    }
    custom = ResourceQuotaReconciler(None, per_shoot_resources=(PerShootResource("gardener.cloud/x", CM, 3),))
    assert custom.compute_patch(quota({SHOOTS: "1", CM: "1"})) == {
        "metadata": {"annotations": {"gardener.cloud/x": "3"}},
        "spec": {"hard": {CM: "3"}},
    }


def test_counts_are_written_as_canonical_quantities():
    # Gardener multiplies resource.Quantity values; the result is written in canonical form ("2k").
    r = ResourceQuotaReconciler(None)
    assert r.compute_patch(quota({SHOOTS: "1k", CM: "1"}))["spec"]["hard"][CM] == "2k"
