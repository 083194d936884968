"""gcm.chaos_hooks: the stale clock offset file and the thread-names dump a chaos run drives."""

from __future__ import annotations

import json
import os
import signal
import threading
import time
from datetime import UTC, datetime, timedelta

import pytest

from gcm import chaos_hooks
from gcm.chaos_hooks import OffsetClock, install_threads_dump, stale_clock


def test_offset_clock_follows_the_file(tmp_path):
    path = tmp_path / "offset"
    clock = OffsetClock(path)
    assert abs((clock.now() - datetime.now(UTC)).total_seconds()) < 5  # no file: no offset
    path.write_text(str(40 * 86400))
    assert clock.now() - datetime.now(UTC) > timedelta(days=39, hours=23)
    path.write_text("-3600.5")
    assert timedelta(hours=-1, seconds=-10) < clock.now() - datetime.now(UTC) < timedelta(minutes=-59)
    path.write_text("")
    assert abs(clock.offset()) == 0.0


def test_offset_clock_does_not_move_monotonic_time(tmp_path):
    path = tmp_path / "offset"
    path.write_text(str(365 * 86400))
    clock = OffsetClock(path)
    assert abs(clock.monotonic() - time.monotonic()) < 5


def test_an_offset_that_is_not_a_number_counts_as_zero(tmp_path):
    path = tmp_path / "offset"
    path.write_text("ten days")
    assert OffsetClock(path).offset() == 0.0


def test_stale_clock_is_off_unless_the_variable_is_set(tmp_path, monkeypatch):
    monkeypatch.delenv(chaos_hooks.CLOCK_OFFSET_ENV, raising=False)
    assert stale_clock() is None
    monkeypatch.setenv(chaos_hooks.CLOCK_OFFSET_ENV, str(tmp_path / "offset"))
    clock = stale_clock()
    assert isinstance(clock, OffsetClock) and clock.path == tmp_path / "offset"


@pytest.fixture
def restore_sigusr1():
    old = signal.getsignal(signal.SIGUSR1)
    yield
    signal.signal(signal.SIGUSR1, old)


def test_threads_dump_is_off_unless_the_variable_is_set(monkeypatch, restore_sigusr1):
    monkeypatch.delenv(chaos_hooks.THREADS_ENV, raising=False)
    before = signal.getsignal(signal.SIGUSR1)
    assert install_threads_dump() is False
    assert signal.getsignal(signal.SIGUSR1) == before  # untouched


def test_sigusr1_writes_the_live_thread_names(tmp_path, monkeypatch, restore_sigusr1):
    target = tmp_path / "threads.json"
    monkeypatch.setenv(chaos_hooks.THREADS_ENV, str(target))
    assert install_threads_dump() is True
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="chaos-hooks-test-thread")
    t.start()
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        deadline = time.monotonic() + 5
        while not target.exists() and time.monotonic() < deadline:
            time.sleep(0.01)
        names = json.loads(target.read_text())
    finally:
        stop.set()
        t.join()
    assert "chaos-hooks-test-thread" in names and "MainThread" in names
    assert names == sorted(names)


def test_the_stale_controller_runs_on_the_clock_it_is_given(apiserver, tmp_path):
    """gcm.cmd hands the offset clock down (controllers import no chaos hook): only ``project-stale``
    runs on it; the other controllers, and the stale controller without one, run on the manager's."""
    from framework.client import Client
    from framework.manager import Manager
    from gcm.config import default_config
    from gcm.controllers import add as controllers

    cfg = default_config()
    clock = OffsetClock(tmp_path / "offset")
    mgr = Manager(Client.from_kubeconfig(apiserver.kubeconfig))
    added = {c.name: c for c in controllers.add_to_manager(mgr, cfg, stale_clock=clock)}
    assert added["project-stale"].reconciler.clock is clock
    assert added["project-activity"].reconciler.clock is mgr.clock
    plain = Manager(Client.from_kubeconfig(apiserver.kubeconfig))
    added = {c.name: c for c in controllers.add_to_manager(plain, cfg)}
    assert added["project-stale"].reconciler.clock is plain.clock
