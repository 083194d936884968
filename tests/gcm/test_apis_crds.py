"""gcm's CRDs in ``manifests/crds`` are generated from the typed declarations in ``gcm.apis``
(``framework.generate.crd``): the committed files are what the generator writes now, one per kind."""

from __future__ import annotations

from pathlib import Path

from framework.generate.crd import generate_crds
from gcm.apis import core_v1beta1, security_v1alpha1

CRDS = Path(__file__).resolve().parents[2] / "manifests" / "crds"


def test_manifests_crds_are_generated_from_gcm_apis() -> None:
    generated = {
        path.rsplit("/", 1)[1]: text
        for path, text in generate_crds([core_v1beta1, security_v1alpha1]).items()
    }
    assert sorted(generated) == sorted(p.name for p in CRDS.glob("*.yaml"))
    stale = [name for name, text in generated.items() if (CRDS / name).read_text() != text]
    assert not stale, f"regenerate manifests/crds from gcm/apis: {stale}"


def test_typed_views_read_plain_objects() -> None:
    project: core_v1beta1.Project = {
        "metadata": {"name": "dev"},
        "spec": {
            "namespace": "garden-dev",
            "members": [{"kind": "User", "name": "alice", "roles": ["admin"]}],
        },
    }
    spec = project.get("spec", {})
    assert [m["name"] for m in spec.get("members", [])] == ["alice"]
    assert spec.get("namespace") == "garden-dev"
