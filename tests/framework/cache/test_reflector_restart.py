"""A reflector's cache after the API server restarts: it converges within seconds once the server is
back, however far the connection-refused retries of the outage grew the backoff.

Seed-4 soak (chaos.py): the server was killed twice; the Project reflector's watch re-opens failed
(backoff 0.9, 2.1, 4.2, 7.9, 22.8 s), the first watch that got through was answered 410 (the restarted
server keeps no history), and the relist after it waited the next step of that grown backoff (~46 s):
the cache kept the pre-restart objects and every resourceVersion-preconditioned patch got 409.
"""

from __future__ import annotations

from framework.cache import Backoff, Indexer, Reflector
from framework.client import Client
from framework.testing import APIServer, eventually, free_port


class RecordingBackoff(Backoff):
    """client-go's backoff, remembering the delays handed out (to know when the reflector waits)."""

    def __init__(self, **kw: float) -> None:
        super().__init__(**kw)
        self.delays: list[float] = []

    def next(self) -> float:
        delay = super().next()
        self.delays.append(delay)
        return delay


def configmap(name: str, value: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default"},
        "data": {"v": value},
    }


def cached_value(store: Indexer, name: str) -> str | None:
    obj = store.get_by_key(f"default/{name}")
    return None if obj is None else obj["data"]["v"]


def test_the_cache_converges_soon_after_a_restart_that_needed_a_long_backoff(tmp_path):
    port = free_port()
    # No jitter and a factor of 10: the third refused re-watch waits 5 s, the next step would be 50 s.
    backoff = RecordingBackoff(initial=0.05, factor=10.0, cap=100.0, jitter=0.0)
    store = Indexer()
    server = APIServer(data_dir=tmp_path, port=port).start()
    client = Client.from_kubeconfig(server.kubeconfig, qps=0)
    reflector = Reflector(client, "v1", "ConfigMap", store, namespace="default", backoff=backoff)
    try:
        client.create(configmap("a", "before"))
        reflector.start()
        eventually(lambda: cached_value(store, "a") == "before")
        # An event through the open watch: when the server dies this watch ends as an established one
        # (re-watched from its resourceVersion), not as a "very short watch" (which relists).
        client.update({**client.get("v1", "ConfigMap", "a", namespace="default"), "data": {"v": "watched"}})
        eventually(lambda: cached_value(store, "a") == "watched")
        seen_rv = reflector.last_sync_resource_version

        server.stop()
        # Re-watches are refused: wait until the reflector sits in its 5 s backoff.
        eventually(lambda: backoff.delays and backoff.delays[-1] >= 5.0, timeout=10)

        # While it waits, the server comes back, takes writes, and restarts again: the reflector's
        # resourceVersion is now older than the restarted server's (empty) history, so its re-watch
        # is answered 410 and it must relist.
        server = APIServer(data_dir=tmp_path, port=port).start()
        admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
        admin.update({**admin.get("v1", "ConfigMap", "a", namespace="default"), "data": {"v": "after"}})
        admin.create(configmap("b", "new"))
        admin.close()
        server.stop()
        server = APIServer(data_dir=tmp_path, port=port).start()
        assert reflector.last_sync_resource_version == seen_rv  # nothing seen yet: the watch is down

        # The reflector reconnects when its 5 s wait ends; the relist after the 410 must not wait the
        # 50 s step the outage grew the backoff to.
        eventually(
            lambda: cached_value(store, "a") == "after" and cached_value(store, "b") == "new",
            timeout=15,
            message=lambda: (
                f"cache a={cached_value(store, 'a')} b={cached_value(store, 'b')}, "
                f"backoff delays {backoff.delays}"
            ),
        )
        assert reflector.relist_count >= 1  # the 410 was answered by a relist, as client-go does
        assert backoff.delays[-1] < 1.0  # ... after the initial delay: the watch had got through
        # And the cache follows writes made after the restart.
        admin = Client.from_kubeconfig(server.kubeconfig, qps=0)
        admin.create(configmap("c", "later"))
        admin.close()
        eventually(lambda: cached_value(store, "c") == "later", timeout=15)
    finally:
        assert reflector.stop(5)
        client.close()
        server.stop()
