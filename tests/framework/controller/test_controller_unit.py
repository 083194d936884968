"""Controller outcomes on a FakeClock, without an API server: every reconcile result and failure,
handler and predicate failures, the structlog context and worker supervision."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
import structlog
from prometheus_client import CollectorRegistry
from structlog.testing import capture_logs

from framework.client import Conflict, NotFound
from framework.clock import FakeClock
from framework.controller import Controller
from framework.handler import EnqueueRequestForObject, EnqueueRequestsFromMapFunc
from framework.predicate import Funcs
from framework.reconcile import Func, Request, Result, TerminalError
from framework.testing import consistently, eventually
from framework.workqueue import ItemExponentialFailureRateLimiter

REQ = Request("a", "ns")


def ours(logs: list[dict]) -> list[dict]:
    """This controller's lines: capture_logs also catches other threads (a test's leftover informer)."""
    return [e for e in logs if e.get("controller") == "unit"]


class Env:
    def __init__(self, reconcile, **kw) -> None:
        self.clock = FakeClock()
        self.registry = CollectorRegistry()
        self.ctrl = Controller("unit", Func(reconcile), clock=self.clock, registry=self.registry, **kw)

    def count(self, metric: str, **labels: str) -> float:
        return self.registry.get_sample_value(metric, {"controller": "unit", **labels}) or 0.0

    def result(self, result: str) -> float:
        return self.count("controller_runtime_reconcile_total", result=result)

    def queued(self) -> int:
        return len(self.ctrl.queue)

    def close(self) -> None:
        self.ctrl.queue.shut_down()


@pytest.fixture
def make():
    envs: list[Env] = []

    def make(reconcile, **kw) -> Env:
        env = Env(reconcile, **kw)
        envs.append(env)
        return env

    yield make
    for env in envs:
        env.close()


@pytest.mark.parametrize("returned", [None, Result()])
def test_success_forgets_the_backoff(make, returned):
    env = make(lambda r: returned)
    env.ctrl.queue.add_rate_limited(REQ)  # an earlier failure
    assert env.ctrl.queue.num_requeues(REQ) == 1
    env.ctrl.reconcile_item(REQ)
    assert env.ctrl.queue.num_requeues(REQ) == 0
    assert env.result("success") == 1
    assert env.count("controller_runtime_reconcile_errors_total") == 0


@pytest.mark.parametrize("after", [30, 30.0, timedelta(seconds=30)])
def test_requeue_after_requeues_once_the_delay_passed(make, after):
    env = make(lambda r: Result(requeue_after=after))
    env.ctrl.reconcile_item(REQ)
    assert env.result("requeue_after") == 1
    assert env.ctrl.queue.num_requeues(REQ) == 0  # forgotten: the delay is not a backoff
    env.clock.step(29.9)
    consistently(lambda: env.queued() == 0, duration=0.1, message="not requeued before 30 s")
    env.clock.step(0.1)
    eventually(lambda: env.queued() == 1, message="requeued after 30 s")


@pytest.mark.parametrize("after", [0, -5])
def test_requeue_after_of_zero_or_less_is_success(make, after):
    env = make(lambda r: Result(requeue_after=after))
    env.ctrl.reconcile_item(REQ)
    assert env.result("success") == 1 and env.queued() == 0


def test_requeue_true_backs_off(make):
    env = make(lambda r: Result(requeue=True))
    env.ctrl.reconcile_item(REQ)
    assert env.result("requeue") == 1
    assert env.ctrl.queue.num_requeues(REQ) == 1
    env.clock.step(0.005)  # the controller rate limiter's first backoff
    eventually(lambda: env.queued() == 1, message="requeued after the backoff")


def test_an_exception_requeues_with_backoff_and_counts_a_panic(make):
    def reconcile(r):
        raise KeyError("bug")

    env = make(reconcile)
    with capture_logs() as logs:
        env.ctrl.reconcile_item(REQ)
        env.ctrl.reconcile_item(REQ)
    assert env.result("error") == 2
    assert env.count("controller_runtime_reconcile_errors_total") == 2
    assert env.count("controller_runtime_reconcile_panics_total") == 2
    assert env.ctrl.queue.num_requeues(REQ) == 2
    failed = [e for e in ours(logs) if e["event"] == "reconcile failed, requeueing"]
    assert len(failed) == 2 and failed[0]["name"] == "a" and failed[0]["namespace"] == "ns"
    assert failed[0]["exc_info"] is True


def test_an_api_error_is_not_a_panic(make):
    def reconcile(r):
        raise NotFound(404, "NotFound", 'configmaps "a" not found')

    env = make(reconcile)
    env.ctrl.reconcile_item(REQ)
    assert env.count("controller_runtime_reconcile_errors_total") == 1
    assert env.count("controller_runtime_reconcile_panics_total") == 0
    assert env.ctrl.queue.num_requeues(REQ) == 1


def test_a_conflict_is_an_ordinary_retry(make):
    def reconcile(r):
        raise Conflict(409, "Conflict", "the object has been modified")

    env = make(reconcile)
    with capture_logs() as logs:
        env.ctrl.reconcile_item(REQ)
    assert env.ctrl.queue.num_requeues(REQ) == 1
    assert [e["log_level"] for e in ours(logs) if e["event"] == "conflict, requeueing"] == ["info"]
    # an expected race, not an error: no reconcile_errors_total, result "requeue"
    assert env.count("controller_runtime_reconcile_errors_total") == 0
    assert (env.result("requeue"), env.result("error")) == (1, 0)


def test_terminal_error_is_never_requeued(make):
    terminal = threading.Event()

    def reconcile(r):
        if terminal.is_set():
            raise TerminalError("cannot work")
        raise RuntimeError("transient")

    env = make(reconcile)
    env.ctrl.reconcile_item(REQ)  # an ordinary failure first: requeued with backoff
    env.clock.step(0.005)
    eventually(lambda: env.queued() == 1, message="requeued after the backoff")
    item, _ = env.ctrl.queue.get()
    terminal.set()
    env.ctrl.reconcile_item(item)
    env.ctrl.queue.done(item)
    assert env.count("controller_runtime_terminal_reconcile_errors_total") == 1
    assert env.result("error") == 2
    assert env.ctrl.queue.num_requeues(REQ) == 0  # the backoff is forgotten
    env.clock.step(3600)
    consistently(lambda: env.queued() == 0, duration=0.1, message="terminal error not requeued")


@pytest.mark.parametrize("exc", [SystemExit(1), GeneratorExit()])
def test_base_exceptions_are_reconcile_errors_too(make, exc):
    def reconcile(r):
        raise exc

    env = make(reconcile)
    env.ctrl.reconcile_item(REQ)
    assert env.result("error") == 1
    assert env.ctrl.queue.num_requeues(REQ) == 1


@pytest.mark.parametrize(
    ("returned", "type_name"),
    [(30, "int"), ({"requeue": True}, "dict"), ((Result(),), "tuple"), ("ok", "str"), (True, "bool")],
)
def test_a_wrong_return_type_is_logged_once_counted_and_requeued(make, returned, type_name):
    env = make(lambda r: returned)
    with capture_logs() as logs:
        env.ctrl.reconcile_item(REQ)
        env.ctrl.reconcile_item(Request("b", "ns"))
    errors = [e for e in ours(logs) if e["log_level"] == "error"]
    assert len(errors) == 1, logs
    assert errors[0]["type"] == type_name and errors[0]["controller"] == "unit"
    assert f"reconciler returned {type_name}, expected Result or None" in errors[0]["event"]
    assert env.result("error") == 2
    assert env.count("controller_runtime_reconcile_errors_total") == 2
    assert env.count("controller_runtime_reconcile_panics_total") == 2
    assert env.ctrl.queue.num_requeues(REQ) == 1
    env.clock.step(0.005)
    eventually(lambda: env.queued() == 2, message="both requests requeued with backoff")


def test_a_coroutine_returned_is_closed_and_reported(make):
    async def work():
        return None

    made = []

    def reconcile(r):
        made.append(work())
        return made[-1]

    env = make(reconcile)
    with capture_logs() as logs:
        env.ctrl.reconcile_item(REQ)
    assert made[0].cr_frame is None  # closed: no "never awaited" warning on top of the error
    assert [e["type"] for e in ours(logs) if e["log_level"] == "error"] == ["coroutine"]
    assert env.ctrl.queue.num_requeues(REQ) == 1


def test_a_queued_item_that_is_not_a_request_is_dropped_with_an_error(make):
    env = make(lambda r: pytest.fail("never reconciled"))
    with capture_logs() as logs:
        env.ctrl.reconcile_item(("ns", "a"))  # type: ignore[arg-type]
    assert [e["type"] for e in ours(logs) if e["log_level"] == "error"] == ["tuple"]
    assert env.result("error") == 1 and env.queued() == 0


def test_reconcile_timeout_counts_a_timeout(make):
    env: Env

    def reconcile(r):
        env.clock.step(2)

    env = make(reconcile, reconcile_timeout=1.0)
    env.ctrl.reconcile_item(REQ)
    assert env.count("controller_runtime_reconcile_timeouts_total") == 1
    assert env.result("success") == 1


def test_a_timeout_is_counted_whatever_the_reconcile_returned(make):
    env: Env

    def reconcile(r):
        env.clock.step(2)
        raise NotFound(404, "NotFound", 'configmaps "a" not found')

    env = make(reconcile, reconcile_timeout=1.0)
    env.ctrl.reconcile_item(REQ)
    assert env.count("controller_runtime_reconcile_timeouts_total") == 1
    assert env.result("error") == 1 and env.count("controller_runtime_reconcile_errors_total") == 1
    assert env.count("controller_runtime_reconcile_panics_total") == 0  # an API answer, not a bug


def test_reconcile_time_lands_in_controller_runtimes_buckets(make):
    env: Env
    durations = iter([0.3, 0.004, 75.0])

    def reconcile(r):
        env.clock.step(next(durations))

    env = make(reconcile)
    for _ in range(3):
        env.ctrl.reconcile_item(REQ)

    def bucket(le: str) -> float:
        return env.count("controller_runtime_reconcile_time_seconds_bucket", le=le)

    # Upper bounds are inclusive (le): 0.3 s is in the 0.3 bucket, not in 0.25.
    assert [bucket(le) for le in ("0.005", "0.25", "0.3", "60.0", "+Inf")] == [1, 1, 2, 2, 3]
    assert env.count("controller_runtime_reconcile_time_seconds_count") == 3
    assert env.count("controller_runtime_reconcile_time_seconds_sum") == pytest.approx(75.304)


def test_active_workers_counts_the_reconciles_running(make):
    env: Env
    seen: list[float] = []
    env = make(lambda r: seen.append(env.count("controller_runtime_active_workers")))
    assert env.count("controller_runtime_active_workers") == 0
    env.ctrl.reconcile_item(REQ)
    assert seen == [1] and env.count("controller_runtime_active_workers") == 0

    def boom(r):
        raise RuntimeError("bug")

    env2 = make(boom)  # the same name: the two controllers add up, as children of one label set
    env2.ctrl.reconcile_item(REQ)
    assert env2.count("controller_runtime_active_workers") == 0
    assert env2.count("controller_runtime_reconcile_panics_total") == 1


def test_every_series_is_exported_from_the_start(make):
    env = make(lambda r: None, max_concurrent_reconciles=3)
    for result in ("success", "error", "requeue", "requeue_after"):
        assert (
            env.registry.get_sample_value(
                "controller_runtime_reconcile_total", {"controller": "unit", "result": result}
            )
            == 0
        )
    for metric in (
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_terminal_reconcile_errors_total",
        "controller_runtime_reconcile_panics_total",
        "controller_runtime_reconcile_timeouts_total",
        "controller_runtime_active_workers",
        "controller_worker_restarts_total",
        "controller_runtime_reconcile_time_seconds_count",
    ):
        assert env.registry.get_sample_value(metric, {"controller": "unit"}) == 0, metric
    assert env.count("controller_runtime_max_concurrent_reconciles") == 3


def test_the_reconcile_context_is_bound_for_the_reconcilers_log_lines(make):
    seen: list[dict] = []
    env = make(lambda r: seen.append(structlog.contextvars.get_contextvars()))
    env.ctrl.reconcile_item(REQ)
    env.ctrl.reconcile_item(Request("cluster-scoped"))
    first, second = seen
    assert first["controller"] == "unit" and first["namespace"] == "ns" and first["name"] == "a"
    assert second["namespace"] is None and second["name"] == "cluster-scoped"
    assert first["reconcile_id"] != second["reconcile_id"]
    assert "reconcile_id" not in structlog.contextvars.get_contextvars()  # unbound afterwards


def test_the_context_reaches_a_structlog_logger_with_merge_contextvars(make):
    lines: list[dict] = []

    def keep(_, __, event_dict):
        lines.append(dict(event_dict))
        raise structlog.DropEvent

    logger = structlog.wrap_logger(
        structlog.PrintLogger(), processors=[structlog.contextvars.merge_contextvars, keep]
    )
    env = make(lambda r: logger.info("reconciling"))
    env.ctrl.reconcile_item(REQ)
    assert lines[0]["controller"] == "unit" and lines[0]["name"] == "a" and lines[0]["reconcile_id"]


# -- construction ----------------------------------------------------------------------------------


def test_the_controller_rejects_what_can_never_reconcile():
    async def reconcile(request):
        return None

    class AsyncReconciler:
        async def reconcile(self, request):
            return None

    for bad, match in (
        (reconcile, "is async"),
        (AsyncReconciler(), "AsyncReconciler.reconcile .*is async"),
        (42, "reconcile\\(request\\) method or be a function"),
    ):
        with pytest.raises(TypeError, match=match):
            Controller("bad", bad, registry=CollectorRegistry())
    with pytest.raises(ValueError, match="max_concurrent_reconciles"):
        Controller("bad", lambda r: None, max_concurrent_reconciles=0, registry=CollectorRegistry())
    with pytest.raises(ValueError, match="reconcile_timeout"):
        Controller("bad", lambda r: None, reconcile_timeout=0, registry=CollectorRegistry())


# -- handlers and predicates -------------------------------------------------------------------------


class Informer:
    """Just enough of an informer to call the controller's event callbacks directly."""

    def __init__(self) -> None:
        self.handlers: list[dict] = []

    def add_event_handler(self, **callbacks):
        self.handlers.append(callbacks)
        return self

    def has_synced(self) -> bool:
        return True


def obj(name: str, namespace: str = "ns", **meta) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, **meta}}


@pytest.mark.parametrize(
    ("returned", "message"),
    [
        ([("ns", "a")], "returned a tuple item, expected Request"),
        ({"name": "a"}, "returned dict, expected a list of Request"),
        (7, "returned int, expected a list of Request"),
        (Request("a"), "returned Request, expected a list of Request"),
        ("a", "returned str, expected a list of Request"),
    ],
)
def test_a_map_function_returning_the_wrong_type_is_logged_once_and_counted(make, returned, message):
    env = make(lambda r: None)
    informer = Informer()

    def to_owner(o):
        return returned

    env.ctrl.watch(informer, EnqueueRequestsFromMapFunc(to_owner))
    on_add = informer.handlers[0]["on_add"]
    with capture_logs() as logs:
        on_add(obj("x"))
        on_add(obj("y"))
    errors = [e for e in ours(logs) if e["log_level"] == "error"]
    assert len(errors) == 1
    assert errors[0]["controller"] == "unit" and errors[0]["event"] == "event handler failed; event dropped"
    assert message in errors[0]["error"] and "to_owner" in errors[0]["error"]
    assert env.count("controller_event_handler_errors_total", event="create") == 2
    assert env.queued() == 0


def test_map_function_results(make):
    env = make(lambda r: None)
    informer = Informer()
    results = iter([None, (Request(n) for n in ("p", "q")), [Request("p")]])
    env.ctrl.watch(informer, EnqueueRequestsFromMapFunc(lambda o: next(results)))
    cb = informer.handlers[0]
    cb["on_add"](obj("x"))  # None: nothing to enqueue
    assert env.queued() == 0
    cb["on_update"](obj("x"), obj("x"))  # old and new mapped, deduplicated
    assert env.queued() == 2


def test_map_functions_must_be_plain_callables():
    async def amap(o):
        return []

    with pytest.raises(TypeError, match=r"map function .*amap is async"):
        EnqueueRequestsFromMapFunc(amap)
    with pytest.raises(TypeError, match="map function must be callable"):
        EnqueueRequestsFromMapFunc([Request("a")])  # type: ignore[arg-type]


def test_a_raising_predicate_or_handler_is_logged_with_its_traceback_and_counted(make):
    env = make(lambda r: None)
    informer = Informer()

    def boom(o):
        raise RuntimeError("predicate bug")

    env.ctrl.watch(informer, EnqueueRequestForObject(), [Funcs(delete=boom)])
    with capture_logs() as logs:
        informer.handlers[0]["on_delete"](obj("x"))
        informer.handlers[0]["on_add"](obj("y"))
    assert env.count("controller_event_handler_errors_total", event="delete") == 1
    (error,) = [e for e in ours(logs) if e["log_level"] == "error"]
    assert error["type"] == "RuntimeError" and isinstance(error["exc_info"], RuntimeError)
    assert env.queued() == 1  # the create still went through


def test_watch_rejects_handlers_and_predicates_of_the_wrong_type(make):
    env = make(lambda r: None)
    with pytest.raises(TypeError, match="wrap a map function in EnqueueRequestsFromMapFunc"):
        env.ctrl.watch(Informer(), lambda o: [Request("a")])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="a predicate must be a Predicate"):
        env.ctrl.watch(Informer(), EnqueueRequestForObject(), [lambda o: True])  # type: ignore[list-item]


# -- workers -----------------------------------------------------------------------------------------


class FailingOnce(ItemExponentialFailureRateLimiter):
    """A custom rate limiter with a bug that shows once: it kills the worker that calls it."""

    def __init__(self) -> None:
        super().__init__(0.005, 1000.0)
        self.failed = threading.Event()

    def when(self, item):
        if not self.failed.is_set():
            self.failed.set()
            raise RuntimeError("rate limiter bug")
        return super().when(item)


def test_a_worker_that_dies_is_restarted_counted_and_not_ready_meanwhile(make):
    calls: list[Request] = []

    def reconcile(r):
        calls.append(r)
        if len(calls) == 1:
            raise RuntimeError("first try fails")

    limiter = FailingOnce()
    env = make(reconcile, rate_limiter=limiter)
    ctrl = env.ctrl
    assert ctrl.readiness() is None  # not started: nothing to report
    ctrl.start()
    try:
        eventually(lambda: ctrl.live_workers() == 1, message="worker started")
        with capture_logs() as logs:
            ctrl.queue.add(REQ)
            eventually(lambda: ctrl.live_workers() == 0, message="worker died")
        assert ctrl.readiness() == "controller unit has no live worker"
        assert env.count("controller_worker_restarts_total") == 1
        assert any(e["event"] == "worker exited; restarting it" for e in logs)
        env.clock.step(0.1)  # the restart backoff; the request was put back after the same delay
        eventually(lambda: ctrl.live_workers() == 1, message="worker restarted")
        assert ctrl.readiness() is None
        eventually(lambda: len(calls) == 2, message="the request reconciled again")
    finally:
        assert ctrl.stop(5)
    assert ctrl.readiness() is None  # stopping: not a failure
    assert env.count("controller_worker_restarts_total") == 1


def test_stop_cancels_a_pending_restart(make):
    env = make(lambda r: None, rate_limiter=FailingOnce())
    ctrl = env.ctrl
    ctrl.start()

    def reconcile(r):
        raise RuntimeError("fails")

    ctrl.reconciler = Func(reconcile)
    ctrl.queue.add(REQ)
    eventually(lambda: ctrl.live_workers() == 0, message="worker died")
    assert ctrl.stop(5)
    env.clock.step(1)
    consistently(lambda: ctrl.live_workers() == 0, duration=0.1, message="no restart after stop")
