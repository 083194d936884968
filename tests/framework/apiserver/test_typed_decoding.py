"""Built-in kinds are decoded as kube-apiserver's Go decoder does: wrong JSON types are refused with Go's
error and store nothing, unknown fields are dropped with a warning (or refused under Strict), quantities
are stored in canonical form. Against the real server over HTTP (raw bodies the typed client cannot
send), plus a property test over every field of every built-in kind."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from typing import Any

import pytest

from framework.apiserver import catalog
from framework.apiserver.encoding.typed_decoding import model_types

ROOT = Path(__file__).resolve().parents[3]
CM = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"


def test_types_are_generated_from_the_installed_client() -> None:
    """types.json and descriptions.json are exactly what hack/gen-builtin-types.py derives from the
    client's models now."""
    spec = importlib.util.spec_from_file_location("gen_builtin_types", ROOT / "hack/gen-builtin-types.py")
    assert spec and spec.loader
    gen = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("gen_builtin_types", gen)
    spec.loader.exec_module(gen)
    types = gen.generate()
    assert gen.OUT.read_text() == gen.render(types)
    assert gen.DESCRIPTIONS.read_text() == gen.render(gen.generate_descriptions(types))
    assert gen.go_name("V1PodSpec") == "v1.PodSpec"
    assert gen.go_name("CoreV1Event") == "v1.Event"
    assert gen.go_name("V2HorizontalPodAutoscaler") == "v2.HorizontalPodAutoscaler"
    assert gen.go_name("V1beta1DeviceClass") == "v1beta1.DeviceClass"


def _pod(name: str, container: dict[str, Any]) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox", **container}]},
    }


@pytest.mark.parametrize(
    ("path", "body", "message"),
    [
        (
            CM,
            {"metadata": {"name": "a", "labels": ["x"]}},
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels "
            "of type map[string]string",
        ),
        (
            CM,
            {"metadata": {"name": "a"}, "data": {"a": 5}},
            "cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            CM,
            {"metadata": {"name": "a", "finalizers": "example.com/abc"}},
            "cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers of type []string",
        ),
        (
            PODS,
            _pod("a", {"ports": [{"containerPort": "80"}]}),
            "cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort "
            "of type int32",
        ),
        (
            PODS,
            {"metadata": {"name": "a"}, "spec": []},
            "cannot unmarshal array into Go struct field Pod.spec of type v1.PodSpec",
        ),
        (
            PODS,
            _pod("a", {"resources": {"limits": {"cpu": "lots"}}}),
            "quantities must match the regular expression",
        ),
        (
            PODS,
            _pod("a", {"tty": "yes"}),
            "cannot unmarshal string into Go struct field Container.spec.containers.tty of type bool",
        ),
    ],
)
def test_wrong_json_type_is_a_400_and_stores_nothing(raw, path: str, body: dict, message: str) -> None:
    """apiserver-emulator 3-1: the body is decoded into the kind's Go type before anything else."""
    kind = "Pod" if path == PODS else "ConfigMap"
    status, answer = raw.json("POST", path, body)
    assert status == 400, answer
    assert answer["reason"] == "BadRequest"
    assert answer["message"].startswith(f'{kind} in version "v1" cannot be handled as a {kind}: ')
    assert message in answer["message"]
    assert raw.json("GET", f"{path}/a")[0] == 404


def test_wrong_type_in_an_update_or_a_patch_changes_nothing(raw) -> None:
    assert raw.json("POST", CM, {"metadata": {"name": "keep"}, "data": {"a": "1"}})[0] == 201
    _, before = raw.json("GET", f"{CM}/keep")
    put = dict(before, data={"a": 2})
    status, answer = raw.json("PUT", f"{CM}/keep", put)
    assert (
        status == 400 and "cannot unmarshal number into Go struct field ConfigMap.data" in answer["message"]
    )
    r = raw.request(
        "PATCH",
        f"{CM}/keep",
        raw=b'{"data": {"a": true}}',
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert r.status == 422, r.data
    assert b"cannot unmarshal bool into Go struct field ConfigMap.data of type string" in r.data
    r = raw.request(
        "PATCH",
        f"{CM}/keep",
        raw=b'[{"op": "add", "path": "/metadata/labels", "value": "x"}]',
        headers={"Content-Type": "application/json-patch+json"},
    )
    assert r.status == 422, r.data
    _, after = raw.json("GET", f"{CM}/keep")
    assert after == before


def test_unknown_fields_are_dropped_with_a_warning(raw) -> None:
    body = _pod("w", {"bogus": 1})
    body["spec"]["nope"] = True
    r = raw.request("POST", PODS, body)
    assert r.status == 201, r.data
    warning = r.headers.get("Warning", "")
    assert 'unknown field \\"spec.containers[0].bogus\\"' in warning
    assert 'unknown field \\"spec.nope\\"' in warning
    _, stored = raw.json("GET", f"{PODS}/w")
    assert "nope" not in stored["spec"] and "bogus" not in stored["spec"]["containers"][0]


def test_unknown_fields_are_refused_under_strict_and_silent_under_ignore(raw) -> None:
    body = {"metadata": {"name": "s"}, "data": {"a": "1"}, "extra": 1}
    status, answer = raw.json("POST", CM + "?fieldValidation=Strict", body)
    assert status == 400
    assert answer["message"] == 'strict decoding error: unknown field "extra"'
    assert raw.json("GET", f"{CM}/s")[0] == 404
    r = raw.request("POST", CM + "?fieldValidation=Ignore", body)
    assert r.status == 201 and "Warning" not in r.headers


def test_quantities_are_stored_in_canonical_form(raw) -> None:
    resources = {"limits": {"cpu": 1.5, "memory": "1024Mi"}, "requests": {"cpu": "1000m", "memory": 1000}}
    assert raw.json("POST", PODS, _pod("q", {"resources": resources}))[0] == 201
    _, pod = raw.json("GET", f"{PODS}/q")
    assert pod["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1500m", "memory": "1Gi"},
        "requests": {"cpu": "1", "memory": "1k"},
    }


def test_a_number_is_quoted_only_when_it_does_not_fit_a_number_field(raw) -> None:
    status, answer = raw.json("POST", PODS, _pod("n", {"ports": [{"containerPort": 1.5}]}))
    assert status == 400
    assert answer["message"].endswith(
        "json: cannot unmarshal number 1.5 into Go struct field "
        "ContainerPort.spec.containers.ports.containerPort of type int32"
    )
    status, answer = raw.json("POST", PODS, _pod("n", {"ports": [{"containerPort": 2**31}]}))
    assert status == 400 and "cannot unmarshal number 2147483648 into Go struct field" in answer["message"]


def test_int_or_string_takes_both_and_nothing_else(raw) -> None:
    svc = "/api/v1/namespaces/default/services"
    ports = [{"name": "a", "port": 80, "targetPort": 8080}, {"name": "b", "port": 81, "targetPort": "http"}]
    assert raw.json("POST", svc, {"metadata": {"name": "ok"}, "spec": {"ports": ports}})[0] == 201
    bad = [{"port": 80, "targetPort": {"x": 1}}]
    status, answer = raw.json("POST", svc, {"metadata": {"name": "bad"}, "spec": {"ports": bad}})
    assert status == 400 and answer["message"].endswith(
        "json: cannot unmarshal object into Go value of type int32"
    )


# -- every field of every built-in kind ----------------------------------------------------------------

_WRONG: dict[str, Any] = {
    "string": 5,
    "bytes": 5,
    "int32": "x",
    "int64": 1.5,
    "float64": "x",
    "bool": "x",
    "time": 5,
    "intstr": {"x": 1},
    "quantity": True,
}
_MAX_DEPTH = 4
_SEED = 25  # fixed: every run sends the same sample, so a failure reproduces


def _wrong_bodies(model: str, depth: int = 0) -> list[tuple[str, Any, tuple[str, str]]]:
    """(dotted path, a JSON value holding a wrong type at that path, the field that holds it) for the
    fields of ``model``. The field is (model, field name and container suffix): the Go struct field the
    decoder refuses, the same for every kind that embeds ``model``."""
    if depth >= _MAX_DEPTH:
        return []
    out: list[tuple[str, Any, tuple[str, str]]] = []
    for name, t in model_types()[model]["fields"].items():
        if name in ("apiVersion", "kind"):
            continue
        for path, value, field in _wrong_values(t, depth):
            out.append((f"{name}{path}", {name: value}, field or (model, f"{name}{path}")))
    return out


def _wrong_values(t: str, depth: int) -> list[tuple[str, Any, tuple[str, str] | None]]:
    if t == "any":
        return []
    if t in _WRONG:
        return [("", _WRONG[t], None)]
    if t.startswith("[]"):
        return [("", "x", None)] + [(f"[]{p}", [v], f) for p, v, f in _wrong_values(t[2:], depth + 1)]
    if t.startswith("map:"):
        return [("", ["x"], None)] + [
            (f"{{}}{p}", {"k": v}, f) for p, v, f in _wrong_values(t[4:], depth + 1)
        ]
    nested = [(f".{p}", v, f) for p, v, f in _wrong_bodies(t[1:], depth + 1)]
    return [("", [1], None), *nested]


_CREATABLE = [
    e for e in catalog.builtin_resources() if "create" in e.verbs and e.model and e.model in model_types()
]
_ALL_CASES = [
    (e, path, body, field) for e in _CREATABLE for path, body, field in _wrong_bodies(e.model or "")
]


def _sample(cases: list[tuple[Any, str, Any, tuple[str, str]]]) -> list[tuple[Any, str, Any]]:
    """Every field once, through one kind picked with a fixed seed among those that embed it.

    All cases are about 6500 request pairs, two thirds of them the same fields again (ObjectMeta in
    every kind, PodSpec in every workload): over two minutes on a loaded CI machine for no field more.
    Each kind's own fields (``metadata``, ``spec``, ``status`` themselves) belong to that kind alone, so
    every kind stays covered.
    """
    by_field: dict[tuple[str, str], list[tuple[Any, str, Any]]] = {}
    for entry, path, body, field in cases:
        by_field.setdefault(field, []).append((entry, path, body))
    rng = random.Random(_SEED)
    return [rng.choice(choices) for choices in by_field.values()]


_CASES = _sample(_ALL_CASES)


def test_the_property_test_covers_every_creatable_kind_and_field() -> None:
    assert len(_CREATABLE) > 50
    assert {e.model for e, _, _ in _CASES} == {e.model for e in _CREATABLE}
    fields = {field for *_, field in _ALL_CASES}
    assert len(_CASES) == len(fields) > 1000
    assert len({(e.api_version, e.resource, path) for e, path, _ in _CASES}) == len(_CASES)


def _url(entry: Any) -> str:
    prefix = f"/apis/{entry.group}/{entry.version}" if entry.group else "/api/v1"
    return (
        f"{prefix}/namespaces/default/{entry.resource}" if entry.namespaced else f"{prefix}/{entry.resource}"
    )


def test_no_wrong_type_gets_a_5xx_or_is_stored(raw) -> None:
    """A wrong JSON type at every field (to depth 4) of the built-in models, each through one creatable
    kind that embeds it, and at every kind's own fields, is a 400 naming the kind, and nothing is
    stored."""
    failures = []
    for entry, path, body in _CASES:
        url = _url(entry)
        doc = {"apiVersion": entry.api_version, "kind": entry.kind, **body}
        if path.startswith("metadata."):
            doc["metadata"] = {"name": "wrong-type", **body["metadata"]}
        elif path != "metadata":
            doc["metadata"] = {"name": "wrong-type"}
        status, answer = raw.json("POST", url, doc)
        message = (answer or {}).get("message", "")
        if status != 400 or f"cannot be handled as a {entry.kind}: " not in message:
            failures.append((entry.resource, path, status, message[:200]))
        elif "get" in entry.verbs and raw.json("GET", f"{url}/wrong-type")[0] != 404:
            failures.append((entry.resource, path, "stored"))
    assert not failures, f"{len(failures)} of {len(_CASES)}: {failures[:10]}"
