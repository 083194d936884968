"""One full stale pass over 10,000 Projects (a few hundred in use): time and API requests.

    .venv/bin/python bench/stale_bench.py            # 10,000 Projects
    .venv/bin/python bench/stale_bench.py --quick    # 1,000 Projects

The test API server is populated in-process (not measured): N project namespaces and Projects, 3 % of
them in use in the ways the stale check knows (a Shoot, a Plant, a BackupEntry, a Secret via a
SecretBinding or CredentialsBinding used by a Shoot in another namespace, an InternalSecret, a
WorkloadIdentity, a Quota referenced by a binding in use), plus unused bindings, labelled Secrets and
Quotas everywhere else, so index lookups are not trivially empty. Then ``project-stale`` runs in a
Manager (5 workers, gcm's cache options) with a fake clock 60 days after creation:

1. cold pass: the Manager starts (informers list everything once) and reconciles every Project once;
   the unused ones are marked stale (one status PATCH each);
2. steady pass: every Project is reconciled again at the same time: nothing changes, so no request
   at all may be made (no writes, no lists: every read is from the cache);
3. grace pass: the clock moves 14 days: every stale Project gets its auto-delete timestamp (one PATCH
   each), none is deleted.

The request table proves the bindings are listed once (per 500-item page) by their informers, not
once per Project.
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from framework.client import Client
from framework.clock import FakeClock
from framework.manager import Manager
from framework.meta.time import parse_time
from framework.reconcile import Request
from framework.testing import APIServer
from gcm.config import Duration, default_config
from gcm.controllers.indexes import add_all_field_indexes
from gcm.controllers.project import stale

ROOT = Path(__file__).resolve().parents[1]
CORE, SECURITY = "core.gardener.cloud", "security.gardener.cloud"
DAY = timedelta(hours=24)
SHARED = "garden-shared-bindings"
USE_KINDS = ("shoot", "plant", "backupentry", "sb-secret", "cb-secret", "internal", "identity", "quota")


class Counting:
    """Wraps the reconciler; ``done`` is set once every expected Project was reconciled (at least once)."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.lock = threading.Lock()
        self.count = 0
        self.errors = 0
        self.pending: set[str] = set()
        self.done = threading.Event()

    def expect(self, names) -> None:
        with self.lock:
            self.pending = set(names)
            self.count = 0
            self.done.clear()

    def reconcile(self, request):
        try:
            return self.inner.reconcile(request)
        except Exception:
            with self.lock:
                self.errors += 1
            raise
        finally:
            with self.lock:
                self.count += 1
                self.pending.discard(request.name)
                if not self.pending:
                    self.done.set()


def populate(server: APIServer, n: int, in_use_every: int) -> set[str]:
    """Namespaces and Projects; every ``in_use_every``-th Project in use. Returns the in-use names."""
    api, reg = server.api, server.registry

    def rt(group: str, version: str, resource: str):
        r = reg.get(group, version, resource)
        assert r is not None, resource
        return r

    namespaces, projects = rt("", "v1", "namespaces"), rt(CORE, "v1beta1", "projects")
    secrets = rt("", "v1", "secrets")
    shoots, plants = rt(CORE, "v1beta1", "shoots"), rt(CORE, "v1beta1", "plants")
    entries, quotas = rt(CORE, "v1beta1", "backupentries"), rt(CORE, "v1beta1", "quotas")
    sbs, internals = rt(CORE, "v1beta1", "secretbindings"), rt(CORE, "v1beta1", "internalsecrets")
    cbs, identities = (
        rt(SECURITY, "v1alpha1", "credentialsbindings"),
        rt(SECURITY, "v1alpha1", "workloadidentities"),
    )
    sb_label = {"reference.gardener.cloud/secretbinding": "true"}
    cb_label = {"reference.gardener.cloud/credentialsbinding": "true"}
    in_use: set[str] = set()

    def meta(name, labels=None):
        return {"metadata": {"name": name, "labels": labels or {}}}

    def one(i: int) -> None:
        name, ns = f"p{i:05d}", f"garden-p{i:05d}"
        other = SHARED  # bindings and the Shoots using them live in a namespace of no Project
        api.create(projects, None, {**meta(name), "spec": {"namespace": ns}})
        # Everywhere: a labelled Secret and a Quota referenced by bindings no Shoot uses.
        api.create(secrets, ns, {**meta("creds", sb_label), "data": {"k": "dg=="}})
        api.create(quotas, ns, {**meta("q"), "spec": {"clusterLifetimeDays": 7}})
        api.create(
            sbs,
            ns,
            {
                **meta("idle"),
                "secretRef": {"name": "creds", "namespace": ns},
                "quotas": [{"name": "q", "namespace": ns}],
            },
        )
        if i % in_use_every:
            return
        in_use.add(name)
        kind = USE_KINDS[(i // in_use_every) % len(USE_KINDS)]
        shoot = {**meta(f"use-{i}"), "spec": {"region": "eu"}}
        if kind == "shoot":
            api.create(shoots, ns, {**meta("s"), "spec": {"region": "eu"}})
        elif kind == "plant":
            api.create(plants, ns, {**meta("pl"), "spec": {"secretRef": {"name": "kc"}}})
        elif kind == "backupentry":
            api.create(entries, ns, {**meta("b"), "spec": {"bucketName": "x"}})
        elif kind in ("sb-secret", "quota"):
            body = {"secretRef": {"name": "creds", "namespace": ns}} if kind == "sb-secret" else {}
            if kind == "quota":
                body["quotas"] = [{"name": "other", "namespace": other}, {"name": "q", "namespace": ns}]
            api.create(sbs, other, {**meta(f"use-{i}"), **body})
            shoot["spec"]["secretBindingName"] = f"use-{i}"
            api.create(shoots, other, shoot)
        else:
            target = {
                "cb-secret": ("v1", "Secret", secrets, "cbcreds", "data"),
                "internal": (f"{CORE}/v1beta1", "InternalSecret", internals, "is", "data"),
                "identity": (f"{SECURITY}/v1alpha1", "WorkloadIdentity", identities, "wi", "spec"),
            }[kind]
            av, k, rtype, obj_name, field = target
            api.create(rtype, ns, {**meta(obj_name, cb_label), field: {}})
            ref = {"apiVersion": av, "kind": k, "name": obj_name, "namespace": ns}
            api.create(cbs, other, {**meta(f"use-{i}"), "credentialsRef": ref})
            shoot["spec"]["credentialsBindingName"] = f"use-{i}"
            api.create(shoots, other, shoot)

    def namespace(i: int) -> None:
        api.create(namespaces, None, meta(f"garden-p{i:05d}", {"gardener.cloud/role": "project"}))

    api.create(namespaces, None, meta(SHARED))
    for fn in (namespace, one):
        for start in range(0, n, 250):
            server.call(lambda start=start, fn=fn: [fn(i) for i in range(start, min(n, start + 250))])
    return in_use


def requests_table(counts: dict) -> tuple[str, int]:
    agg: Counter = Counter()
    for key, v in counts.items():
        if key.resource.startswith("/"):
            resource = "(discovery)"
        else:
            base, _, sub = key.resource.partition("/")
            resource = base.split(".")[0] + (f"/{sub}" if sub else "")
        agg[(key.verb, resource)] += v
    lines = [f"    {verb:6} {res:24} {v:>7,}" for (verb, res), v in sorted(agg.items())]
    return "\n".join(lines) or "    (none)", sum(agg.values())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--quick", action="store_true", help="1,000 Projects instead of 10,000")
    p.add_argument("-n", type=int, default=None, help="number of Projects")
    args = p.parse_args(argv)
    n = args.n or (1000 if args.quick else 10000)
    in_use_every = 33  # ~3 %: 303 of 10,000

    with APIServer() as server:
        server.install_crds(ROOT / "manifests" / "crds")
        t = time.perf_counter()
        in_use = populate(server, n, in_use_every)
        print(f"populated {n:,} Projects ({len(in_use)} in use) in-process in {time.perf_counter() - t:.1f}s")
        client = Client.from_kubeconfig(server.kubeconfig, qps=0)
        created = parse_time(
            client.get(f"{CORE}/v1beta1", "Project", "p00000")["metadata"]["creationTimestamp"]
        )
        clock = FakeClock(created + 60 * DAY)
        cfg = default_config()
        cfg.controllers.project.stale_sync_period = Duration(12 * 3600)
        mgr = Manager(client, cache_options=stale.cache_options())
        add_all_field_indexes(mgr)
        ctrl = stale.add_to_manager(mgr, cfg, clock=clock)
        counting = Counting(ctrl.reconciler)
        ctrl.reconciler = counting
        names = [f"p{i:05d}" for i in range(n)]

        def settle() -> None:
            """Wait until the reconciles triggered by the last pass's own writes have run."""
            last = -1
            while last != counting.count or len(ctrl.queue):
                last = counting.count
                time.sleep(0.5)

        def run_pass(label: str, start_manager: bool = False) -> dict:
            counting.expect(names)
            server.reset_request_counts()
            t0 = time.perf_counter()
            if start_manager:
                threading.Thread(target=mgr.start, daemon=True).start()
            else:
                for name in names:
                    ctrl.queue.add(Request(name))
            assert counting.done.wait(600), f"{label}: {len(counting.pending)} Projects not reconciled"
            elapsed = time.perf_counter() - t0
            table, total = requests_table(server.request_counts())
            print(
                f"\n{label}: {elapsed:.2f}s for {n:,} Projects ({n / elapsed:,.0f}/s; {counting.count:,} "
                f"reconciles incl. those triggered by its own status patches), {total:,} API requests"
            )
            print(table)
            return server.request_counts()

        def lists(counts: dict) -> Counter:
            return Counter({k.resource.split(".")[0]: v for k, v in counts.items() if k.verb == "list"})

        cold = run_pass(
            "cold pass (manager start: cache lists + one check of every Project)", start_manager=True
        )
        # Every kind is listed once by its informer (pages of 500), however many Projects are checked.
        bindings = len(client.list(f"{CORE}/v1beta1", "SecretBinding")["items"])
        assert lists(cold)["secretbindings"] <= bindings // 500 + 1, lists(cold)
        assert all(v <= n // 500 + 2 for v in lists(cold).values()), lists(cold)
        settle()
        steady = run_pass("steady pass (same time, nothing changes)")
        assert sum(steady.values()) == 0, "a pass without changes made API requests"
        settle()
        clock.step(14 * 24 * 3600)
        grace = run_pass("grace pass (+14 days: auto-delete timestamps assigned)")
        assert not lists(grace), "a pass listed from the API server instead of the cache"

        settle()
        projects = client.list(f"{CORE}/v1beta1", "Project")["items"]
        stale_names = {
            p["metadata"]["name"] for p in projects if (p.get("status") or {}).get("staleSinceTimestamp")
        }
        scheduled = sum(1 for p in projects if (p.get("status") or {}).get("staleAutoDeleteTimestamp"))
        assert len(projects) == n, "a Project was deleted"
        assert not stale_names & in_use, f"in-use Projects marked stale: {sorted(stale_names & in_use)[:5]}"
        assert len(stale_names) == n - len(in_use) == scheduled, (len(stale_names), scheduled)
        assert counting.errors == 0
        print(
            f"\ncheck: {len(stale_names):,} stale with auto-delete timestamps, {len(in_use)} in use untouched"
        )
        mgr.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
