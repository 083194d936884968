"""A complete extension controller: every ConfigMap labelled ``mirror=true`` gets a Secret copy."""

import logging

import structlog

from framework.builder import Builder
from framework.client import AlreadyExists, Client, NotFound, ReaderWriter, get_config
from framework.controllerutil import create_or_update, set_controller_reference
from framework.manager import LeaderElectionOptions, Manager
from framework.reconcile import Request, Result


class MirrorReconciler:
    def __init__(self, client: ReaderWriter) -> None:
        self.client = client  # mgr.client: reads from the manager's cache, writes to the API server

    def reconcile(self, request: Request) -> Result | None:
        try:
            cm = self.client.get("v1", "ConfigMap", request.name, request.namespace)
        except NotFound:
            return None  # deleted: the garbage collector removes the owned Secret
        if (cm["metadata"].get("labels") or {}).get("mirror") != "true":
            return None

        def mutate(secret: dict) -> None:
            secret["stringData"] = cm.get("data") or {}
            set_controller_reference(cm, secret)  # Builder.owns maps Secret events back to the ConfigMap

        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": f"{request.name}-mirror", "namespace": request.namespace},
        }
        try:
            create_or_update(self.client, secret, mutate)  # writes only when something changed
        except AlreadyExists:
            # The cache had not seen the Secret yet (created by an earlier reconcile): read again soon.
            return Result(requeue=True)
        return None


def main(kubeconfig: str | None = None, probe_address: str = "127.0.0.1:0") -> Manager:
    mgr = Manager(
        Client.from_config(get_config(kubeconfig)),  # flag, $KUBECONFIG, in-cluster, ~/.kube/config
        health_probe_bind_address=probe_address,  # port 0: any free port (mgr.probe_server.port)
        leader_election=LeaderElectionOptions(namespace="default", name="mirror-controller"),
    )
    Builder(mgr).named("mirror").for_("v1", "ConfigMap").owns("v1", "Secret").with_options(
        max_concurrent_reconciles=2
    ).complete(MirrorReconciler(mgr.client))
    return mgr  # mgr.start() blocks until SIGTERM


def configure_logging(level: int = logging.INFO) -> None:
    """structlog for a controller process: JSON lines with the reconcile's context merged in."""
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,  # controller, namespace, name, reconcile_id
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
    )


if __name__ == "__main__":
    configure_logging()
    main(probe_address=":8081").start()
