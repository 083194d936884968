"""A complete extension controller: every ConfigMap labelled ``mirror=true`` gets a Secret copy."""

from framework.builder import Builder
from framework.client import Client, NotFound
from framework.manager import LeaderElectionOptions, Manager
from framework.reconcile import Request, Result


class MirrorReconciler:
    def __init__(self, client) -> None:
        self.client = client  # reads from the manager's cache, writes to the API server

    def reconcile(self, request: Request) -> Result | None:
        try:
            cm = self.client.get("v1", "ConfigMap", request.name, request.namespace)
        except NotFound:
            return None  # deleted: the garbage collector removes the owned Secret
        if (cm["metadata"].get("labels") or {}).get("mirror") != "true":
            return None
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {
                "name": f"{request.name}-mirror",
                "namespace": request.namespace,
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "ConfigMap",
                        "name": request.name,
                        "uid": cm["metadata"]["uid"],
                        "controller": True,
                    }
                ],
            },
            "stringData": cm.get("data") or {},
        }
        try:
            self.client.create(secret)
        except Exception as e:
            if getattr(e, "reason", "") != "AlreadyExists":
                raise
        return Result(requeue_after=600)


def main(kubeconfig: str | None = None) -> Manager:
    mgr = Manager(
        Client.from_kubeconfig(kubeconfig),
        health_probe_bind_address=":8081",
        leader_election=LeaderElectionOptions(namespace="default", name="mirror-controller"),
    )
    Builder(mgr).named("mirror").for_("v1", "ConfigMap").owns("v1", "Secret").with_options(
        max_concurrent_reconciles=2
    ).complete(MirrorReconciler(mgr.client))
    return mgr  # mgr.start() blocks until SIGTERM


if __name__ == "__main__":
    main().start()
