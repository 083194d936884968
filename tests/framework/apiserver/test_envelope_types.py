"""Wrong JSON types in the envelope (TypeMeta and ObjectMeta) of every kind answer kube-apiserver's 4xx.

The serializer reads ``apiVersion``/``kind`` first (400 "the object provided is unrecognized ...");
built-in kinds decode ObjectMeta with their Go struct (``ObjectMeta.metadata.name``), custom resources
decode it alone (``ObjectMeta.name``, first error in sorted key order); a patch whose result does not
decode is the patch handler's 422. Nothing is stored. Raw HTTP, so the bad types reach the server.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from framework.apiserver.encoding.typed_decoding import model_types

from .conftest import Raw
from .test_crd import GROUP, widget_crd

CM = "/api/v1/namespaces/default/configmaps"
WIDGETS = f"/apis/{GROUP}/v1/namespaces/default/widgets"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}


@pytest.fixture(scope="module")
def raw(module_server) -> Raw:
    module_server.install_crds([widget_crd()])
    return Raw(module_server)


def _send(raw: Raw, method: str, path: str, data: bytes, headers: dict | None = None) -> tuple[int, Any]:
    r = raw.request(method, path, raw=data, headers={"Content-Type": "application/json", **(headers or {})})
    return r.status, json.loads(r.data) if r.data else None


def _widget(name: str, **meta: Any) -> dict:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": "Widget",
        "metadata": {"name": name, **meta},
        "spec": {"size": 1},
    }


# -- TypeMeta: the serializer's Interpret --------------------------------------------------------------


@pytest.mark.parametrize("path", [CM, WIDGETS])
def test_a_non_string_api_version_or_kind_is_unrecognized(raw, path: str) -> None:
    kind = "ConfigMap" if path == CM else "Widget"
    body = b'{"apiVersion": 123, "kind": "ConfigMap", "metadata": {"name": "tm"}}'
    status, answer = _send(raw, "POST", path, body)
    assert status == 400 and answer["reason"] == "BadRequest"
    assert answer["message"] == (
        f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json "
        "parse error: json: cannot unmarshal number into Go struct field .apiVersion of type string "
        '({"apiVersion": 123, "kind": "C ...)'
    )
    status, answer = _send(raw, "POST", path, b'{"kind": ["x"], "metadata": {"name": "tm"}}')
    assert status == 400
    assert "json: cannot unmarshal array into Go struct field .kind of type string" in answer["message"]
    # encoding/json matches the keys case-insensitively
    status, answer = _send(raw, "POST", path, b'{"APIVERSION": true}')
    assert status == 400
    assert "cannot unmarshal bool into Go struct field .apiVersion of type string" in answer["message"]
    assert raw.json("GET", f"{path}/tm")[0] == 404


@pytest.mark.parametrize(
    ("data", "what", "summary"),
    [(b"[1, 2]", "array", "5b312c20325d"), (b'"cm"', "string", "22636d22"), (b"42", "number", "3432")],
)
def test_a_body_that_is_not_an_object_is_unrecognized(raw, data: bytes, what: str, summary: str) -> None:
    for path, kind in ((CM, "ConfigMap"), (WIDGETS, "Widget")):
        status, answer = _send(raw, "POST", path, data)
        assert status == 400, answer
        assert answer["message"] == (
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: json: cannot unmarshal {what} into Go value of type struct "
            '{ APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
            f'"json:\\"kind,omitempty\\"" }} ({summary})'
        )


def test_a_null_body_is_an_empty_object(raw) -> None:
    status, answer = _send(raw, "POST", CM, b"null")
    assert status == 422 and "name or generateName is required" in answer["message"]


def test_an_api_version_with_two_slashes_does_not_parse(raw) -> None:
    status, answer = _send(raw, "POST", CM, b'{"apiVersion": "a/b/c", "kind": "ConfigMap"}')
    assert status == 400
    assert answer["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): "
        "unexpected GroupVersion string: a/b/c ("
    )


# -- ObjectMeta -----------------------------------------------------------------------------------------


def test_custom_resource_metadata_is_decoded_alone_in_sorted_key_order(raw) -> None:
    status, answer = raw.json("POST", WIDGETS, _widget("om", labels={"a": 1}, annotations=5))
    assert status == 400, answer
    assert answer["message"] == (
        'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go '
        "struct field ObjectMeta.annotations of type map[string]string"
    )
    body = _widget("om")
    body["metadata"] = {"name": 5, "ownerReferences": [{"controller": "yes"}]}
    status, answer = raw.json("POST", WIDGETS, body)
    assert status == 400 and answer["message"].endswith(
        "cannot unmarshal number into Go struct field ObjectMeta.name of type string"
    )
    body["metadata"] = {"name": "om", "ownerReferences": [{"controller": "yes"}]}
    status, answer = raw.json("POST", WIDGETS, body)
    assert status == 400 and answer["message"].endswith(
        "cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool"
    )
    body["metadata"] = "om"
    status, answer = raw.json("POST", WIDGETS, body)
    assert status == 400 and answer["message"].endswith(
        "json: cannot unmarshal string into Go value of type v1.ObjectMeta"
    )
    assert raw.json("GET", f"{WIDGETS}/om")[0] == 404


def test_builtin_metadata_errors_name_the_whole_path(raw) -> None:
    status, answer = raw.json("POST", CM, {"metadata": {"name": 5}})
    assert status == 400
    assert answer["message"] == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into '
        "Go struct field ObjectMeta.metadata.name of type string"
    )
    status, answer = raw.json("POST", CM, {"metadata": []})
    assert status == 400 and answer["message"].endswith(
        "cannot unmarshal array into Go struct field ConfigMap.metadata of type v1.ObjectMeta"
    )


@pytest.mark.parametrize("path", [CM, WIDGETS])
def test_metadata_times_are_parsed_as_rfc3339(raw, path: str) -> None:
    body = _widget("t1") if path == WIDGETS else {"metadata": {"name": "t1"}}
    body["metadata"]["creationTimestamp"] = "yesterday"
    status, answer = raw.json("POST", path, body)
    assert status == 400
    assert answer["message"].endswith(
        'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"'
    )
    body["metadata"]["creationTimestamp"] = "2024-01-02T03:04:05+01:00"
    assert raw.json("POST", path + "?dryRun=All", body)[0] == 201


def test_dry_run_and_updates_refuse_wrong_types_too(raw) -> None:
    assert raw.json("POST", CM + "?dryRun=All", {"metadata": {"name": "d", "labels": 5}})[0] == 400
    assert raw.json("POST", CM, {"metadata": {"name": "upd"}})[0] == 201
    _, cm = raw.json("GET", f"{CM}/upd")
    status, answer = raw.json("PUT", f"{CM}/upd", {**cm, "metadata": {**cm["metadata"], "finalizers": "x"}})
    assert status == 400 and "ObjectMeta.metadata.finalizers of type []string" in answer["message"]
    assert raw.json("POST", WIDGETS, _widget("upd"))[0] == 201
    _, w = raw.json("GET", f"{WIDGETS}/upd")
    for sub in ("", "/status"):
        status, answer = raw.json(
            "PUT", f"{WIDGETS}/upd{sub}", {**w, "metadata": {**w["metadata"], "generation": "2"}}
        )
        assert status == 400, answer
        assert answer["message"].endswith(
            "cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"
        )
    assert raw.json("GET", f"{WIDGETS}/upd")[1] == w
    assert raw.json("GET", f"{CM}/upd")[1] == cm


@pytest.mark.parametrize("path", [CM, WIDGETS])
def test_a_patch_whose_result_does_not_decode_is_a_422(raw, path: str) -> None:
    body = _widget("pt") if path == WIDGETS else {"metadata": {"name": "pt"}}
    assert raw.json("POST", path, body)[0] == 201
    _, before = raw.json("GET", f"{path}/pt")
    field = "ObjectMeta.name" if path == WIDGETS else "ObjectMeta.metadata.name"
    for ctype, patch in (
        (MERGE, b'{"metadata": {"name": 5}}'),
        (JSON_PATCH, b'[{"op": "replace", "path": "/metadata/name", "value": 5}]'),
    ):
        status, answer = _send(raw, "PATCH", f"{path}/pt", patch, ctype)
        assert status == 422, answer
        assert answer["reason"] == "Invalid"
        assert answer["message"].startswith(' "" is invalid: patch: Invalid value: "{')
        assert answer["message"].endswith(
            f"json: cannot unmarshal number into Go struct field {field} of type string"
        )
        assert [c["field"] for c in answer["details"]["causes"]] == ["patch"]
        assert set(answer["details"]) == {"causes"}
    status, answer = _send(raw, "PATCH", f"{path}/pt", b'{"apiVersion": 7}', MERGE)
    assert (
        status == 422
        and "json: cannot unmarshal number into Go struct field .apiVersion" in answer["message"]
    )
    assert raw.json("GET", f"{path}/pt")[1] == before


def test_a_scale_is_decoded_as_a_scale(raw) -> None:
    deployments = "/apis/apps/v1/namespaces/default/deployments"
    labels = {"matchLabels": {"a": "b"}}
    template = {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    dep = {"metadata": {"name": "sc"}, "spec": {"selector": labels, "template": template}}
    assert raw.json("POST", deployments, dep)[0] == 201
    _, before = raw.json("GET", f"{deployments}/sc")
    scale = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": 5},
        "spec": {"replicas": 2},
    }
    status, answer = raw.json("PUT", f"{deployments}/sc/scale", scale)
    assert status == 400 and answer["message"] == (
        'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal number into Go struct '
        "field ObjectMeta.metadata.name of type string"
    )
    status, answer = raw.json("PUT", f"{deployments}/sc/scale", [2])
    assert status == 400 and answer["message"].startswith(
        "the object provided is unrecognized (must be of type Scale): "
    )
    status, answer = _send(raw, "PATCH", f"{deployments}/sc/scale", b'{"spec": {"replicas": "3"}}', MERGE)
    assert status == 422 and answer["message"].endswith(
        "json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32"
    )
    assert raw.json("GET", f"{deployments}/sc")[1] == before


def test_custom_resource_unknown_metadata_fields_follow_field_validation(raw) -> None:
    body = _widget("fv", foo=1)
    status, answer = raw.json("POST", WIDGETS + "?fieldValidation=Strict", body)
    assert status == 400
    assert answer["message"] == 'strict decoding error: unknown field "metadata.foo"'
    both = _widget("fv", foo=1)
    both["spec"]["unknown"] = True
    status, answer = raw.json("POST", WIDGETS + "?fieldValidation=Strict", both)
    assert status == 400  # one strict decoding error: metadata's fields first, then the schema's
    assert answer["message"] == (
        'strict decoding error: unknown field "metadata.foo", unknown field "spec.unknown"'
    )
    r = raw.request("POST", WIDGETS + "?fieldValidation=Warn", body)
    assert r.status == 201 and 'unknown field \\"metadata.foo\\"' in r.headers["Warning"]
    assert "foo" not in json.loads(r.data)["metadata"]
    r = raw.request("POST", WIDGETS + "?fieldValidation=Ignore", _widget("fv2", foo=1))
    assert r.status == 201 and "Warning" not in r.headers
    # built-in kinds alike (their Go struct)
    status, answer = raw.json("POST", CM + "?fieldValidation=Strict", {"metadata": {"name": "fv", "foo": 1}})
    assert status == 400 and answer["message"] == 'strict decoding error: unknown field "metadata.foo"'


def test_a_resource_version_on_create_is_refused_only_when_the_store_reads_it(raw) -> None:
    """The etcd3 store refuses an RV that parses as a non-zero number (kube-apiserver's 500); any other
    value is cleared, and a dry run never reaches the store."""
    status, answer = raw.json("POST", CM, {"metadata": {"name": "rv1", "resourceVersion": "12"}})
    assert status == 500 and answer["message"] == "resourceVersion should not be set on objects to be created"
    assert (
        raw.json("POST", CM + "?dryRun=All", {"metadata": {"name": "rv1", "resourceVersion": "12"}})[0] == 201
    )
    for i, rv in enumerate(("abc", "0", "-1")):
        status, created = raw.json("POST", CM, {"metadata": {"name": f"rv-ok{i}", "resourceVersion": rv}})
        assert status == 201 and created["metadata"]["resourceVersion"] not in (rv, "")


def test_a_watch_with_a_negative_timeout_ends_at_once(raw) -> None:
    """apiserver takes a negative timeoutSeconds as given: the watch's timer has already fired."""
    r = raw.stream(f"{CM}?watch=1&timeoutSeconds=-1", timeout=10.0)
    try:
        assert r.status == 200
        r.read()  # returns once the server ends the stream (the read timeout guards against a hang)
    finally:
        r.release_conn()


# -- every envelope field of every kind ----------------------------------------------------------------


def _leaves(model: str, prefix: str) -> Iterator[tuple[str, str]]:
    """(path, Go type) for every field of ``model`` and of the structs, lists and maps inside it; path
    segments: ``.name``, ``[0]`` for a list item, ``{a}`` for a map value."""
    for name, t in model_types()[model]["fields"].items():
        yield from _typed(f"{prefix}.{name}", t)


def _typed(path: str, t: str) -> Iterator[tuple[str, str]]:
    yield path, t
    if t.startswith("[]"):
        yield from _typed(f"{path}[0]", t[2:])
    elif t.startswith("map:") and t != "map:any":
        yield from _typed(f"{path}{{a}}", t[4:])
    elif t.startswith("#"):
        yield from _leaves(t[1:], path)


ENVELOPE = [
    ("apiVersion", "string"),
    ("kind", "string"),
    ("metadata", "#V1ObjectMeta"),
    *_leaves("V1ObjectMeta", "metadata"),
]


def _fits(t: str, v: Any) -> bool:
    """Whether Go's decoder takes ``v`` for type ``t`` (``null`` always fits)."""
    if v is None or t == "any":
        return True
    if t in ("string", "time"):
        return isinstance(v, str)
    if t == "bool":
        return isinstance(v, bool)
    if t == "int64":
        return not isinstance(v, bool) and isinstance(v, int | float) and float(v).is_integer()
    if t.startswith("[]"):
        return isinstance(v, list) and all(_fits(t[2:], x) for x in v)
    if t.startswith("map:"):
        return isinstance(v, dict) and all(_fits(t[4:], x) for x in v.values())
    return isinstance(v, dict)  # a struct: its fields are checked on their own


def _put(body: dict, path: str, value: Any) -> dict:
    """``body`` with ``value`` at ``path`` (containers created on the way)."""
    tokens = path.replace("[0]", ".[0]").replace("{a}", ".{a}").split(".")
    node: Any = body
    for token, nxt in itertools.pairwise(tokens):
        child: Any = [] if nxt == "[0]" else {}
        if token == "[0]":
            if not node:
                node.append(child)
            node = node[0]
        else:
            key = "a" if token == "{a}" else token
            node = node.setdefault(key, child)
    last = tokens[-1]
    if last == "[0]":
        node[:] = [value]
    else:
        node["a" if last == "{a}" else last] = value
    return body


_VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.text(max_size=4),
    st.lists(st.one_of(st.integers(), st.text(max_size=2)), min_size=1, max_size=2),
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(), min_size=1, max_size=2),
)


def _kinds(server) -> list[tuple[str, str, str, bool]]:
    """(collection path, kind, version, persisted) of every kind the server creates, the CRD's too."""
    out = []
    for rt in server.registry.all():
        if "create" not in rt.verbs:
            continue
        base = f"/apis/{rt.group}/{rt.version}" if rt.group else "/api/v1"
        path = f"{base}/namespaces/default/{rt.resource}" if rt.namespaced else f"{base}/{rt.resource}"
        out.append((path, rt.kind, rt.version, rt.persisted))
    return out


def test_the_property_covers_every_creatable_kind_and_envelope_field(module_server, raw) -> None:
    kinds = {k for _, k, _, _ in _kinds(module_server)}
    assert {"ConfigMap", "Pod", "Namespace", "Widget", "TokenReview", "CustomResourceDefinition"} <= kinds
    assert len(kinds) > 70
    paths = {p for p, _ in ENVELOPE}
    for field in (
        "metadata.labels{a}",
        "metadata.finalizers[0]",
        "metadata.ownerReferences[0].blockOwnerDeletion",
        "metadata.managedFields[0].time",
        "metadata.deletionGracePeriodSeconds",
        "metadata.selfLink",
    ):
        assert field in paths


_names = itertools.count()


@settings(max_examples=300)
@given(data=st.data())
def test_wrong_types_anywhere_in_the_envelope_are_refused(module_server, raw, data) -> None:
    path, kind, version, persisted = data.draw(st.sampled_from(_kinds(module_server)), label="kind")
    field, t = data.draw(st.sampled_from(ENVELOPE), label="field")
    value = data.draw(_VALUES.filter(lambda v: not _fits(t, v)), label="value")
    name = f"env-{next(_names)}"
    body = _put({"apiVersion": "", "kind": kind, "metadata": {"name": name}}, field, value)
    if body["apiVersion"] == "":
        del body["apiVersion"]
    _refused(raw, path, kind, version, body, dry=data.draw(st.booleans(), label="dryRun"))
    if persisted:
        assert raw.json("GET", f"{path}/{name}")[0] == 404


_WRONG = {"string": 5, "time": True, "bool": "yes", "int64": "1"}


def _wrong(t: str) -> Any:
    """One value of the wrong JSON type for Go type ``t``."""
    return _WRONG.get(t, "x")  # lists, maps and structs: a string


def _refused(raw: Raw, path: str, kind: str, version: str, body: dict, dry: bool = True) -> None:
    """A create of ``body`` is the decoder's 400."""
    status, answer = raw.json("POST", path + ("?dryRun=All" if dry else ""), body)
    assert status == 400, (path, body, answer)
    assert answer["reason"] == "BadRequest"
    assert answer["message"].startswith(
        (
            f'{kind} in version "{version}" cannot be handled as a {kind}: json: cannot unmarshal ',
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; ",
        )
    ), answer["message"]


def test_every_kind_and_every_envelope_field_at_least_once(module_server, raw) -> None:
    """A fixed sweep beside the random one: kind i with field i (both lists wrap), so every kind the
    server creates and every envelope field is refused at least once per run."""
    kinds = _kinds(module_server)
    for i in range(max(len(kinds), len(ENVELOPE))):
        path, kind, version, _ = kinds[i % len(kinds)]
        field, t = ENVELOPE[i % len(ENVELOPE)]
        body = _put({"apiVersion": "", "kind": kind, "metadata": {"name": f"sweep-{i}"}}, field, _wrong(t))
        if body["apiVersion"] == "":
            del body["apiVersion"]
        _refused(raw, path, kind, version, body)


_UPDATABLE = [(CM, "ConfigMap", "ObjectMeta.metadata."), (WIDGETS, "Widget", "ObjectMeta.")]


@settings(max_examples=80)
@given(data=st.data())
def test_wrong_types_in_updates_and_patches_change_nothing(raw, data) -> None:
    path, kind, _ = data.draw(st.sampled_from(_UPDATABLE), label="kind")
    field, t = data.draw(st.sampled_from(ENVELOPE), label="field")
    value = data.draw(_VALUES.filter(lambda v: not _fits(t, v)), label="value")
    name = f"upd-{next(_names)}"
    body = _widget(name) if kind == "Widget" else {"metadata": {"name": name}}
    assert raw.json("POST", path, body)[0] == 201
    _, before = raw.json("GET", f"{path}/{name}")
    status, answer = raw.json("PUT", f"{path}/{name}", _put(json.loads(json.dumps(before)), field, value))
    assert status == 400, (status, answer)
    patch = _put({}, field, value)
    status, answer = _send(raw, "PATCH", f"{path}/{name}", json.dumps(patch).encode(), MERGE)
    # a merge patch's null would delete; the type errors are 422, a name change is a 400 of its own
    assert status in (400, 422), (status, answer)
    assert status == 422 or "does not match the name on the URL" in answer["message"]
    assert raw.json("GET", f"{path}/{name}")[1] == before
