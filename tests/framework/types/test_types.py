"""``framework.types``: generated from the catalog (the committed files are what ``hack/gen-types.py``
writes now), cheap to skip (``import framework`` does not load them) and checked by mypy: a reconciler
reading typed fields passes, one reading a misspelled field fails."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import cast, get_type_hints

import mypy.api
import pytest

ROOT = Path(__file__).resolve().parents[3]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_types", ROOT / "hack/gen-types.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_committed_types_are_current() -> None:
    gen = _generator()
    fresh = gen.generate()
    committed = {p for p in (ROOT / "framework/types").glob("*.py")}
    assert committed == set(fresh), "run hack/gen-types.py"
    stale = [p.name for p, text in fresh.items() if p.read_text() != text]
    assert not stale, f"stale, run hack/gen-types.py: {stale}"


MIRRORS = Path("/work/.mirror")


@pytest.mark.skipif(not (MIRRORS / "kubernetes+api/repo").is_dir(), reason="no kubernetes/api mirror (CI)")
def test_go_markers_regenerate_to_the_committed_file() -> None:
    spec = importlib.util.spec_from_file_location("gen_k8s_markers", ROOT / "hack/gen-k8s-markers.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = gen
    spec.loader.exec_module(gen)
    try:
        fresh = gen.render(gen.generate(MIRRORS))
    except FileNotFoundError as e:
        pytest.skip(f"a mirror is missing: {e}")
    assert fresh == (ROOT / "hack/k8s-markers.json").read_text()


def test_importing_framework_does_not_import_the_types() -> None:
    code = (
        "import sys, framework, framework.client; "
        "print([m for m in sys.modules if m.startswith('framework.types')])"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_views_are_plain_dicts_at_run_time() -> None:
    from framework.types import apps_v1, core_v1, meta_v1

    obj = {"metadata": {"name": "web"}, "spec": {"selector": {}, "template": {}, "replicas": 2}}
    deployment = cast(apps_v1.Deployment, obj)
    assert deployment is obj and type(deployment) is dict
    hints = get_type_hints(apps_v1.DeploymentSpec, include_extras=True)
    assert "replicas" in hints and "template" in hints
    assert apps_v1.DeploymentSpec.__required_keys__ >= {"selector", "template"}
    assert "containers" in core_v1.PodSpec.__required_keys__
    assert "name" in get_type_hints(meta_v1.ObjectMeta)
    # Python keywords as JSON names (NetworkPolicyIngressRule.from) are fields too.
    from framework.types import networking_v1

    assert "from" in get_type_hints(networking_v1.NetworkPolicyIngressRule)


GOOD = """
from typing import Any, cast

from framework.types import apps_v1, batch_v1, core_v1


def reconcile(obj: dict[str, Any]) -> str:
    deployment = cast(apps_v1.Deployment, obj)
    replicas: int = deployment["spec"].get("replicas", 1)
    pod = deployment["spec"]["template"].get("spec")
    containers: list[core_v1.Container] = pod["containers"] if pod else []
    image = containers[0].get("image", "") if containers else ""
    name = deployment.get("metadata", {}).get("name", "")
    labels: dict[str, str] = deployment.get("metadata", {}).get("labels", {})
    job = cast(batch_v1.CronJob, obj)
    schedule: str = job["spec"]["schedule"]
    return f"{name} {replicas} {image} {labels} {schedule}"
"""

BAD = """
from typing import Any, cast

from framework.types import apps_v1


def reconcile(obj: dict[str, Any]) -> int:
    deployment = cast(apps_v1.Deployment, obj)
    return deployment["spec"]["replica"]
"""


@pytest.fixture(scope="module")
def mypy_run(tmp_path_factory) -> tuple[str, str]:
    """One mypy run over both reconcilers (its own cache directory)."""
    tmp = tmp_path_factory.mktemp("mypy")
    (tmp / "good_reconciler.py").write_text(textwrap.dedent(GOOD))
    (tmp / "bad_reconciler.py").write_text(textwrap.dedent(BAD))
    stdout, stderr, _ = mypy.api.run(
        [
            "--cache-dir",
            str(tmp / ".mypy_cache"),
            "--python-version",
            "3.11",
            "--no-error-summary",
            "--follow-imports=silent",
            str(tmp / "good_reconciler.py"),
            str(tmp / "bad_reconciler.py"),
        ]
    )
    return stdout, stderr


def test_mypy_accepts_a_reconciler_reading_typed_fields(mypy_run) -> None:
    stdout, stderr = mypy_run
    assert "good_reconciler.py" not in stdout, stdout
    assert not stderr


def test_mypy_rejects_a_misspelled_field(mypy_run) -> None:
    stdout, _ = mypy_run
    assert 'bad_reconciler.py:9: error: TypedDict "DeploymentSpec" has no key "replica"' in stdout, stdout


def test_every_builtin_view_maps_to_a_schema() -> None:
    """What a custom resource may embed: every view maps, except types Kubernetes declares recursively
    (refused, as controller-gen refuses them)."""
    import importlib
    import pkgutil
    import typing

    import framework.types
    from framework.generate.schema import GenerateError, SchemaBuilder

    builder = SchemaBuilder()
    mapped, refused = 0, set()
    for info in pkgutil.iter_modules(framework.types.__path__):
        module = importlib.import_module(f"framework.types.{info.name}")
        for obj in vars(module).values():
            if isinstance(obj, type) and typing.is_typeddict(obj) and obj.__module__ == module.__name__:
                try:
                    builder.type_schema(obj)
                    mapped += 1
                except GenerateError as e:
                    assert "recursive type" in str(e), str(e)
                    refused.add(str(e).partition(":")[0])
    assert mapped > 700
    assert refused == {"CompositePodGroupTemplate.compositePodGroupTemplates"}
