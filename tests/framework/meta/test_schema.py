"""framework.meta.schema: GroupVersion / GroupVersionKind / GroupVersionResource (runtime/schema)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from framework.meta.schema import (
    GroupKind,
    GroupResource,
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
    from_api_version_and_kind,
    parse_group_kind,
    parse_group_resource,
    parse_group_version,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", GroupVersion("", "")),
        ("/", GroupVersion("", "")),
        ("v1", GroupVersion("", "v1")),
        ("apps/v1", GroupVersion("apps", "v1")),
        ("core.gardener.cloud/v1beta1", GroupVersion("core.gardener.cloud", "v1beta1")),
        ("/v1", GroupVersion("", "v1")),
    ],
)
def test_parse_group_version(text, expected):
    assert parse_group_version(text) == expected


def test_parse_group_version_rejects_two_slashes():
    with pytest.raises(ValueError, match="unexpected GroupVersion string: a/b/c"):
        parse_group_version("a/b/c")


def test_strings_are_gos():
    assert str(GroupVersion("", "v1")) == "v1"
    assert str(GroupVersion("apps", "v1")) == "apps/v1"
    assert str(GroupVersionKind("apps", "v1", "Deployment")) == "apps/v1, Kind=Deployment"
    assert str(GroupVersionResource("", "v1", "pods")) == "/v1, Resource=pods"
    assert str(GroupKind("apps", "Deployment")) == "Deployment.apps"
    assert str(GroupKind("", "Pod")) == "Pod"
    assert str(GroupResource("coordination.k8s.io", "leases")) == "leases.coordination.k8s.io"
    assert str(GroupResource("", "pods")) == "pods"


def test_conversions():
    gvk = from_api_version_and_kind("apps/v1", "Deployment")
    assert gvk == GroupVersionKind("apps", "v1", "Deployment")
    assert gvk.api_version == "apps/v1" and gvk.group_kind() == GroupKind("apps", "Deployment")
    assert gvk.to_api_version_and_kind() == ("apps/v1", "Deployment")
    assert GroupVersionKind("", "", "").to_api_version_and_kind() == ("", "")
    assert from_api_version_and_kind("a/b/c", "X") == GroupVersionKind("", "", "X")
    assert parse_group_kind("Deployment.apps") == GroupKind("apps", "Deployment")
    assert parse_group_resource("pods") == GroupResource("", "pods")
    assert GroupVersion("apps", "v1").with_resource("deployments").group_resource() == GroupResource(
        "apps", "deployments"
    )


_NAME = st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True)


@given(st.one_of(st.just(""), _NAME), st.from_regex(r"v[0-9]+(alpha|beta)?[0-9]*", fullmatch=True))
def test_group_version_round_trip(group, version):
    assert parse_group_version(str(GroupVersion(group, version))) == GroupVersion(group, version)
