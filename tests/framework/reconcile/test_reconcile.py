"""framework.reconcile: Result's requeue_after forms, Func, and what can never be a reconciler."""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta

import pytest

from framework.reconcile import Func, Reconciler, Request, Result, TerminalError
from framework.reconcile.reconcile import as_reconciler


def test_requeue_after_takes_seconds_or_a_timedelta():
    assert Result(requeue_after=30).requeue_after == 30.0
    assert isinstance(Result(requeue_after=30).requeue_after, float)
    assert Result(requeue_after=1.5).requeue_after == 1.5
    assert Result(requeue_after=timedelta(minutes=2)).requeue_after == 120.0
    assert Result(requeue_after=timedelta(minutes=2)) == Result(requeue_after=120)
    assert Result().requeue_after is None and Result().requeue is False


@pytest.mark.parametrize("bad", ["30", True, [1], {"seconds": 1}])
def test_requeue_after_rejects_other_types(bad):
    with pytest.raises(TypeError, match="requeue_after must be seconds"):
        Result(requeue_after=bad)


def test_requeue_after_must_be_finite():
    with pytest.raises(ValueError, match="finite"):
        Result(requeue_after=float("inf"))


def test_requeue_must_be_a_bool():
    with pytest.raises(TypeError, match="requeue must be a bool"):
        Result(requeue=1)  # type: ignore[arg-type]


def test_result_is_a_frozen_value():
    r = Result(requeue=True)
    with pytest.raises(AttributeError):
        r.requeue = False  # type: ignore[misc]
    assert hash(r) == hash(Result(requeue=True))


def test_request_str():
    assert str(Request("a", "ns")) == "ns/a"
    assert str(Request("a")) == "a"


def test_func_wraps_a_plain_function():
    seen = []
    f = Func(lambda req: seen.append(req) or Result(requeue=True))
    assert isinstance(f, Reconciler)
    assert f.reconcile(Request("x")) == Result(requeue=True)
    assert seen == [Request("x")]


def test_func_rejects_async_and_non_callables():
    async def reconcile(request):
        return None

    with pytest.raises(TypeError, match="async"):
        Func(reconcile)
    with pytest.raises(TypeError, match="must be callable"):
        Func(42)  # type: ignore[arg-type]


def test_as_reconciler():
    class Good:
        def reconcile(self, request):
            return None

    class Async:
        async def reconcile(self, request):
            return None

    class AsyncCall:
        async def __call__(self, request):
            return None

    good = Good()
    assert as_reconciler(good) is good
    assert isinstance(as_reconciler(lambda r: None), Func)
    with pytest.raises(TypeError, match=r"Async.reconcile .*is async"):
        as_reconciler(Async())
    with pytest.raises(TypeError, match="is async"):
        as_reconciler(AsyncCall())
    with pytest.raises(TypeError, match="reconcile\\(request\\) method or be a function"):
        as_reconciler("project")


def test_terminal_error_is_an_exception():
    assert issubclass(TerminalError, Exception)


def test_handler_and_controller_import_alone():
    # framework.controller and framework.handler both import framework.reconcile, never each other.
    for stmt in (
        "from framework.handler import EnqueueRequestsFromMapFunc",
        "from framework.controller import Controller",
        "import framework.reconcile, sys; assert not [m for m in sys.modules if m.startswith('framework.')"
        " and m != 'framework.reconcile' and not m.startswith('framework.reconcile.')]",
    ):
        subprocess.run([sys.executable, "-c", stmt], check=True, timeout=60)
