"""``framework`` re-exports the names a controller author needs (as controller-runtime's ``alias.go``),
each the very object of its home module, loaded on first use so ``import framework`` stays cheap."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys

import pytest

import framework


@pytest.mark.parametrize("name", sorted(framework._EXPORTS))
def test_each_name_is_its_home_modules_object(name):
    home = importlib.import_module(framework._EXPORTS[name])
    assert getattr(framework, name) is getattr(home, name)
    assert name in framework.__all__ and name in dir(framework)


def test_all_lists_every_export():
    assert sorted(framework.__all__) == sorted([*framework._EXPORTS, *framework._SUBMODULES])


def test_handler_and_predicate_modules():
    from framework import handler, predicate

    assert framework.handler is handler and framework.predicate is predicate
    assert handler.EnqueueRequestsFromMapFunc and predicate.GenerationChangedPredicate


def test_an_unknown_name_is_an_attribute_error():
    with pytest.raises(AttributeError, match="module 'framework' has no attribute 'CachedClient'"):
        framework.CachedClient  # noqa: B018
    with pytest.raises(ImportError):
        exec("from framework import CachedClient", {})


def test_import_framework_loads_no_submodule():
    code = (
        "import json, sys; import framework; "
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('framework.'))))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out) == []
