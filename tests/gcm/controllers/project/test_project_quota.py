"""The default ResourceQuota ``gardener`` of the main reconciler.

The end-to-end tests run only the ``project`` controller (as Gardener's integration test does), so the
per-shoot adjustments of ``project-resourcequota`` do not mix in.
"""

from __future__ import annotations

import copy

import pytest

from framework.client.patch import create_merge_patch
from gcm.config import LabelSelector, LabelSelectorRequirement, QuotaConfiguration
from gcm.controllers.project.project.reconciler import desired_quota, merge_quota, select_quota
from tests.gcm.controllers.project import project_harness as h

P = h.P
SHOOTS = "count/shoots.core.gardener.cloud"


def quota_cfg(hard: dict, selector: dict | None = None) -> dict:
    return {
        "config": {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"labels": {"quota": "label"}, "annotations": {"quota": "annotation"}},
            "spec": {"hard": hard},
        },
        "projectSelector": {} if selector is None else selector,
    }


@pytest.fixture
def quota_env(make_env):
    env = make_env(h.make_config(quotas=[quota_cfg({SHOOTS: "100"})]), controllers=("project",))
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Ready")
    return env


def quota(env) -> dict:
    return env.get("v1", "ResourceQuota", "gardener", "garden-p1")


def test_b17_default_quota_created(quota_env):
    q = quota(quota_env)
    assert q["spec"]["hard"] == {SHOOTS: "100"}
    assert q["metadata"]["labels"] == {"quota": "label"}
    assert q["metadata"]["annotations"] == {"quota": "annotation"}
    p = quota_env.project("p1")
    assert q["metadata"]["ownerReferences"] == [
        {
            "apiVersion": P,
            "kind": "Project",
            "name": "p1",
            "uid": p["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]


def test_b18_extra_metadata_kept(quota_env):
    patched = quota_env.admin.patch(
        "v1",
        "ResourceQuota",
        "gardener",
        {"metadata": {"labels": {"extra": "l"}, "annotations": {"extra": "a"}}},
        "garden-p1",
    )
    quota_env.wait_cached(patched)
    quota_env.reconcile_again("p1")
    q = quota(quota_env)
    assert q["metadata"]["labels"] == {"quota": "label", "extra": "l"}
    assert q["metadata"]["annotations"] == {"quota": "annotation", "extra": "a"}


def test_b19_raised_values_kept(quota_env):
    patched = quota_env.admin.patch(
        "v1", "ResourceQuota", "gardener", {"spec": {"hard": {SHOOTS: "101"}}}, "garden-p1"
    )
    quota_env.wait_cached(patched)
    quota_env.reconcile_again("p1")
    assert quota(quota_env)["spec"]["hard"] == {SHOOTS: "101"}


def test_b20_new_config_key_added(quota_env):
    quota_env.stop()
    quota_env.start(h.make_config(quotas=[quota_cfg({SHOOTS: "100", "count/secrets": "42"})]))
    h.wait_for(lambda: "count/secrets" in quota(quota_env)["spec"]["hard"], message="new key")
    assert quota(quota_env)["spec"]["hard"] == {SHOOTS: "100", "count/secrets": "42"}


def test_b21_key_not_in_config_removed(quota_env):
    patched = quota_env.admin.patch(
        "v1", "ResourceQuota", "gardener", {"spec": {"hard": {"count/configmaps": "7"}}}, "garden-p1"
    )
    quota_env.wait_cached(patched)
    quota_env.reconcile_again("p1")
    assert quota(quota_env)["spec"]["hard"] == {SHOOTS: "100"}


def test_quota_for_generated_namespace_and_no_match(make_env):
    cfg = h.make_config(quotas=[quota_cfg({SHOOTS: "3"}, {"matchLabels": {"tier": "paid"}})])
    env = make_env(cfg, controllers=("project",))
    env.create_project("paid", labels={"tier": "paid"})
    env.create_project("free")
    paid, free = env.wait_phase("paid", "Ready"), env.wait_phase("free", "Ready")
    assert env.get("v1", "ResourceQuota", "gardener", paid["spec"]["namespace"])["spec"]["hard"] == {
        SHOOTS: "3"
    }
    assert env.get("v1", "ResourceQuota", "gardener", free["spec"]["namespace"]) is None


def test_invalid_selector_fails_project(make_env):
    cfg = h.make_config(quotas=[quota_cfg({SHOOTS: "3"})])
    cfg.controllers.project.quotas[0].project_selector = LabelSelector(
        match_expressions=[LabelSelectorRequirement("k", "Bogus", [])]
    )
    env = make_env(cfg, controllers=("project",))
    env.create_project("p1", namespace="garden-p1")
    env.wait_phase("p1", "Failed")
    ev = env.wait_event("p1", "NamespaceReconcileFailed")
    assert ev["note"].startswith("Error while setting up ResourceQuota: ")


# --- unit (22-25) ---------------------------------------------------------------------------------------


def q(name: str, selector: LabelSelector | None) -> QuotaConfiguration:
    return QuotaConfiguration(config={"metadata": {"name": name}}, project_selector=selector)


def test_b22_no_quota_selected():
    assert select_quota([], {"a": "b"}) is None
    assert select_quota([q("x", LabelSelector(match_labels={"role": "foo"}))], {"a": "b"}) is None
    assert select_quota([q("x", None)], {"a": "b"}) is None  # an unset selector matches nothing
    with pytest.raises(ValueError):
        select_quota([q("x", LabelSelector(match_expressions=[LabelSelectorRequirement("k", "In", [])]))], {})


def test_b23_first_match_wins():
    a, b = q("A", LabelSelector()), q("B", LabelSelector())
    assert select_quota([q("x", LabelSelector(match_labels={"role": "foo"})), a, b], {}) is a


PROJECT = {"metadata": {"name": "p1", "uid": "uid-1"}}
CONFIG = {
    "metadata": {"labels": {"l": "1"}, "annotations": {"a": "1"}},
    "spec": {"hard": {SHOOTS: "10", "count/secrets": 10}},
}
OWNER = {
    "apiVersion": P,
    "kind": "Project",
    "name": "p1",
    "uid": "uid-1",
    "controller": True,
    "blockOwnerDeletion": True,
}


def test_b24_new_quota():
    d = desired_quota(PROJECT, "garden-p1", CONFIG, None)
    assert d["metadata"]["ownerReferences"] == [OWNER]
    assert d["metadata"]["labels"] == {"l": "1"} and d["metadata"]["annotations"] == {"a": "1"}
    assert d["spec"]["hard"] == {SHOOTS: "10", "count/secrets": "10"}


def test_b25_existing_quota_merged():
    unrelated = {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "other"}
    live = {
        "metadata": {"name": "gardener", "namespace": "garden-p1", "ownerReferences": [unrelated]},
        "spec": {"hard": {SHOOTS: "50"}},
    }
    d = desired_quota(PROJECT, "garden-p1", CONFIG, live)
    assert d["metadata"]["ownerReferences"] == [unrelated, OWNER]
    assert d["spec"]["hard"] == {SHOOTS: "50", "count/secrets": "10"}
    assert d["metadata"]["labels"] == {"l": "1"} and d["metadata"]["annotations"] == {"a": "1"}
    merged = copy.deepcopy(live)
    merge_quota(PROJECT, CONFIG, merged)
    patch = create_merge_patch(live, merged)
    assert patch["spec"] == {"hard": {"count/secrets": "10"}}
    again = copy.deepcopy(d)
    merge_quota(PROJECT, CONFIG, again)
    assert create_merge_patch(d, again) == {}
