"""create_patch: minimal RFC 6902 patches that the API server's own JSON patch code applies back."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from framework.apiserver.machinery.patch import json_patch
from framework.webhook import create_patch


@pytest.mark.parametrize(
    ("old", "new", "ops"),
    [
        ({"a": 1}, {"a": 1}, []),
        ({}, {"spec": {"size": 1}}, [{"op": "add", "path": "/spec", "value": {"size": 1}}]),
        ({"spec": {}}, {"spec": {"size": 1}}, [{"op": "add", "path": "/spec/size", "value": 1}]),
        ({"spec": {"size": 1}}, {"spec": {"size": 2}}, [{"op": "replace", "path": "/spec/size", "value": 2}]),
        ({"spec": {"size": 1, "x": 0}}, {"spec": {"size": 1}}, [{"op": "remove", "path": "/spec/x"}]),
        # 1 and 1.0 and True are different JSON values.
        ({"a": 1}, {"a": 1.0}, [{"op": "replace", "path": "/a", "value": 1.0}]),
        ({"a": 1}, {"a": True}, [{"op": "replace", "path": "/a", "value": True}]),
        ({"a": None}, {"a": {}}, [{"op": "replace", "path": "/a", "value": {}}]),
        # Pointer escaping (RFC 6901): ~ is ~0, / is ~1.
        (
            {"metadata": {"labels": {}}},
            {"metadata": {"labels": {"app.kubernetes.io/name": "m", "a~b": "c"}}},
            [
                {"op": "add", "path": "/metadata/labels/app.kubernetes.io~1name", "value": "m"},
                {"op": "add", "path": "/metadata/labels/a~0b", "value": "c"},
            ],
        ),
        # One element appended, inserted or removed is one operation.
        ({"l": [1, 2]}, {"l": [1, 2, 3]}, [{"op": "add", "path": "/l/2", "value": 3}]),
        ({"l": [1, 3]}, {"l": [1, 2, 3]}, [{"op": "add", "path": "/l/1", "value": 2}]),
        ({"l": [1, 2, 3]}, {"l": [1, 3]}, [{"op": "remove", "path": "/l/1"}]),
        (
            {"c": [{"name": "a", "image": "x"}]},
            {"c": [{"name": "a", "image": "y"}]},
            [{"op": "replace", "path": "/c/0/image", "value": "y"}],
        ),
        (
            {"l": [1, 2, 3]},
            {"l": []},
            [
                {"op": "remove", "path": "/l/2"},
                {"op": "remove", "path": "/l/1"},
                {"op": "remove", "path": "/l/0"},
            ],
        ),
        ([1], {"a": 1}, [{"op": "replace", "path": "", "value": {"a": 1}}]),
    ],
)
def test_minimal_patches(old: Any, new: Any, ops: list) -> None:
    assert create_patch(old, new) == ops
    assert _text(json_patch(old, ops)) == _text(new)


def _random_value(rng: random.Random, depth: int) -> Any:
    choice = rng.randrange(7 if depth < 3 else 4)
    if choice == 0:
        return rng.randrange(4)
    if choice == 1:
        return rng.choice(["a", "b", "x/y", "~"])
    if choice == 2:
        return rng.choice([True, False, None])
    if choice == 3:
        return rng.choice([1.5, 0])
    if choice in (4, 5):
        return {
            rng.choice(["a", "b", "c", "d/e", "f~g"]): _random_value(rng, depth + 1)
            for _ in range(rng.randrange(4))
        }
    return [_random_value(rng, depth + 1) for _ in range(rng.randrange(5))]


def _mutate(rng: random.Random, value: Any, depth: int = 0) -> Any:
    if isinstance(value, dict) and value and rng.random() < 0.8:
        out = dict(value)
        key = rng.choice(list(out))
        action = rng.randrange(3)
        if action == 0:
            del out[key]
        elif action == 1:
            out[key] = _mutate(rng, out[key], depth + 1)
        else:
            out[rng.choice(["n", "a", "z/1"])] = _random_value(rng, depth + 1)
        return out
    if isinstance(value, list) and value and rng.random() < 0.8:
        out_list = list(value)
        i = rng.randrange(len(out_list))
        action = rng.randrange(3)
        if action == 0:
            del out_list[i]
        elif action == 1:
            out_list[i] = _mutate(rng, out_list[i], depth + 1)
        else:
            out_list.insert(i, _random_value(rng, depth + 1))
        return out_list
    return _random_value(rng, depth)


def test_random_documents_round_trip() -> None:
    rng = random.Random(20)
    for _ in range(2000):
        old = {"o": _random_value(rng, 0)}
        new = old
        for _ in range(rng.randrange(1, 4)):
            new = _mutate(rng, new)
        ops = create_patch(old, new)
        assert _text(json_patch(old, ops)) == _text(new), (old, new, ops)
        assert all(op["op"] in ("add", "remove", "replace") for op in ops)
        if _text(old) == _text(new):
            assert ops == []


def _text(value: Any) -> str:
    # Exact JSON equality: 1, 1.0 and True compare equal in Python but not as JSON.
    return json.dumps(value, sort_keys=True)
