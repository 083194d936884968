"""``python -m gcm``: the Gardener Controller Manager.

    python -m gcm [run] [--config FILE] [--kubeconfig FILE]   run against a cluster
    python -m gcm --embedded                                   run against a built-in API server
    python -m gcm stale-report [--config FILE] [--kubeconfig FILE] [-o table|json]
                                                               stale state of every Project, read-only

Exit codes: 0 after a graceful shutdown (SIGTERM/SIGINT), 1 when leadership was lost or gcm failed at
runtime, 2 for an invalid configuration or when no cluster can be reached (no usable kubeconfig).
"""

from __future__ import annotations

import argparse
import faulthandler
import os
import signal
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import structlog

from framework.client import Client
from framework.leaderelection import LeaderElectionLost
from gcm.config import ConfigError, ControllerManagerConfiguration, load_config
from gcm.config.types import DEFAULT_WEBHOOK_PORT
from gcm.log import configure_logging

log = structlog.get_logger("gcm")

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2


def _version() -> str:
    try:
        return version("gcm")
    except PackageNotFoundError:
        return "unknown"


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m gcm",
        description="Gardener Controller Manager: reconciles Projects (namespaces, member RBAC, quotas), "
        "marks and deletes stale Projects, expires non-Shoot Events and guards project namespaces "
        "against deletion.",
        epilog="Without --config all defaults apply. Run '--embedded' to try gcm without a cluster.",
    )
    p.add_argument("--version", action="version", version=f"gcm {_version()}")
    sub = p.add_subparsers(dest="command", metavar="{run,stale-report}")
    _run_options(
        sub.add_parser(
            "run",
            help="run the controller manager (the default command)",
            description=p.description,
            epilog=p.epilog,
        )
    )
    from gcm.controllers.project.stale.report import add_arguments as _stale_report_options

    _stale_report_options(
        sub.add_parser(
            "stale-report",
            help="list every Project with its stale state, read-only",
            description="What the stale-Project check decides for every Project now, with the day "
            "settings of the config's controllers.project (young, active, in use by what, stale since, "
            "auto-delete at). Changes nothing.",
        )
    )
    return p


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help="ControllerManagerConfiguration (YAML or JSON, "
        "controllermanager.config.gardener.cloud/v1alpha1)",
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig of the garden cluster (else $KUBECONFIG, gardenClientConnection.kubeconfig, "
        "in-cluster, ~/.kube/config)",
    )
    p.add_argument(
        "--embedded",
        action="store_true",
        help="start a built-in API server (RBAC on) and run gcm against it as its ServiceAccount",
    )
    p.add_argument(
        "--embedded-port",
        type=int,
        default=6443,
        metavar="PORT",
        help="port of the built-in API server (default 6443)",
    )
    p.add_argument(
        "--embedded-port-offset",
        type=int,
        default=0,
        metavar="N",
        help="add N to every port embedded mode listens on (API server 6443, probes 2718, metrics 2719, "
        "webhook 2721): a second instance next to the first (also give it another --embedded-data-dir)",
    )
    p.add_argument(
        "--embedded-data-dir",
        default=".gcm/data",
        metavar="DIR",
        help="where the built-in API server keeps its objects (SQLite; survives restarts and kill -9), "
        "certificates and gcm's kubeconfig (default .gcm/data; delete it to start afresh)",
    )
    p.add_argument(
        "--embedded-ephemeral",
        action="store_true",
        help="keep the built-in API server's objects in memory only: everything is gone on stop",
    )
    p.add_argument(
        "--embedded-kubeconfig",
        default=".gcm/kubeconfig",
        metavar="FILE",
        help="where to write an admin kubeconfig for the built-in API server (default .gcm/kubeconfig)",
    )


def resolve_kubeconfig(flag: str | None, cfg: ControllerManagerConfiguration) -> str | None:
    """--kubeconfig, $KUBECONFIG, gardenClientConnection.kubeconfig, in-cluster ("" ), ~/.kube/config."""
    for candidate in (flag, os.environ.get("KUBECONFIG"), cfg.garden_client_connection.kubeconfig):
        if candidate:
            return candidate
    if (
        os.environ.get("KUBERNETES_SERVICE_HOST")
        and Path("/var/run/secrets/kubernetes.io/serviceaccount/token").exists()
    ):
        return ""
    home = Path.home() / ".kube" / "config"
    return str(home) if home.is_file() else None


def make_client(kubeconfig: str, cfg: ControllerManagerConfiguration) -> Client:
    conn = cfg.garden_client_connection
    kw = {"qps": conn.qps, "burst": conn.burst} if conn.qps else {}
    if kubeconfig == "":
        return Client.in_cluster(**kw)
    return Client.from_kubeconfig(kubeconfig, **kw)


def run(args: argparse.Namespace) -> int:
    try:
        cfg = load_config(args.config)
    except ConfigError as e:
        sys.stderr.write(f"gcm: invalid configuration{f' in {args.config}' if args.config else ''}:\n")
        for line in e.errors:
            sys.stderr.write(f"  {line}\n")
        return EXIT_USAGE
    configure_logging(cfg.log_level or "info", cfg.log_format or "json")
    embedded = None
    if args.embedded:
        from gcm import embedded as embedded_mode

        offset = args.embedded_port_offset
        try:
            embedded = embedded_mode.start(
                args.embedded_port + offset,
                args.embedded_kubeconfig,
                data_dir=args.embedded_data_dir,
                ephemeral=args.embedded_ephemeral,
                gardener_admission=True,  # a garden's gardener-apiserver rules for Projects and Shoots
            )
        except embedded_mode.DataDirError as e:
            sys.stderr.write(f"gcm: --embedded-data-dir: {e}\n")
            return EXIT_USAGE
        kubeconfig = embedded.gcm_kubeconfig
        embedded_mode.local_servers(cfg, offset)
        # namespace-deletion webhook (issue 10)
        embedded_mode.enable_webhooks(embedded, cfg, DEFAULT_WEBHOOK_PORT + offset)
        ready = embedded_mode.ReadyLine(
            kubeconfig=embedded.admin_kubeconfig,
            data_dir="(memory)" if args.embedded_ephemeral else str(embedded.data_dir),
            **embedded_mode.urls(embedded, cfg),
            hint=f"try: kubectl --kubeconfig {embedded.admin_kubeconfig} get projects,namespaces",
        )
    else:
        kubeconfig = resolve_kubeconfig(args.kubeconfig, cfg)
        if kubeconfig is None:
            sys.stderr.write(
                "gcm: no kubeconfig found (--kubeconfig, $KUBECONFIG, gardenClientConnection.kubeconfig, "
                "in-cluster, ~/.kube/config); to try gcm without a cluster run: python -m gcm --embedded\n"
            )
            return EXIT_USAGE
    try:
        from gcm.app import build_manager

        try:
            mgr = build_manager(cfg, make_client(kubeconfig, cfg))
        except ConfigError as e:
            for line in e.errors:
                sys.stderr.write(f"gcm: {line}\n")
            return EXIT_USAGE
        if embedded is not None:
            mgr.add(ready, need_leader_election=False)
        log.info("starting gcm", version=_version(), kubeconfig=kubeconfig)
        mgr.start()
    except LeaderElectionLost:
        log.error("leader election lost, exiting")
        return EXIT_RUNTIME
    finally:
        if embedded is not None:
            embedded.stop()
    log.info("gcm stopped")
    return EXIT_OK


COMMANDS = ("run", "stale-report")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a in COMMANDS or a == "--version" for a in argv[:1]):
        argv.insert(0, "run")  # `run` is the default command
    args = parser().parse_args(argv)
    if args.command == "stale-report":
        from gcm.controllers.project.stale.report import run as stale_report

        return stale_report(args)
    return run(args)


if __name__ == "__main__":
    # `kill -USR1 <pid>` dumps every thread's stack to stderr: the way to see where a stuck gcm waits.
    # Only for the gcm process itself: main() also runs in-process (tests), where stderr may be no file.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.exit(main())
