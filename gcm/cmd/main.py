"""The ``gcm`` command line (``python -m gcm``): the Gardener Controller Manager.

    python -m gcm [run] [--config FILE] [--kubeconfig FILE]   run against a cluster
    python -m gcm --embedded                                   run against a built-in API server
    python -m gcm stale-report [--config FILE] [--kubeconfig FILE] [-o table|json]
                                                               stale state of every Project, read-only

Exit codes: 0 after a graceful shutdown (SIGTERM/SIGINT), 1 when leadership was lost or gcm failed at
runtime, 2 for anything the operator configured wrong (config file, kubeconfig, ports, TLS files), each
reported as one line on stderr naming the file, field or port (no traceback unless ``--log-level
debug``). An API server that does not answer is not a start-up error: gcm waits for it.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
import traceback
from functools import partial
from importlib.metadata import PackageNotFoundError, version

import structlog

from framework.leaderelection import LeaderElectionLost
from framework.manager import CacheSyncTimeout
from framework.server import BindError
from gcm.cmd.options import (
    EMBEDDED_KUBECONFIG,
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    NO_KUBECONFIG,
    KubeconfigSource,
    StartupError,
    bind_error,
    check_metrics_certificates,
    load_configuration,
    make_client,
    resolve_kubeconfig,
)
from gcm.config import API_VERSION, ConfigError, IgnoredField, log_ignored_fields
from gcm.config.types import DEFAULT_WEBHOOK_PORT, ControllerManagerConfiguration
from gcm.log import LEVELS, configure_logging

log = structlog.get_logger("gcm")

__all__ = ["EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "main", "make_client", "parser", "resolve_kubeconfig"]


def _version() -> str:
    try:
        return version("gcm")
    except PackageNotFoundError:
        return "unknown"


DESCRIPTION = (
    "Gardener Controller Manager: reconciles Projects (namespaces, member RBAC, quotas), marks and "
    "deletes stale Projects, expires non-Shoot Events, guards project namespaces against deletion and "
    "refuses kubeconfigs in project Secrets that run commands or read files."
)
EXIT_CODES = (
    "exit codes: 0 after SIGTERM/SIGINT (graceful), 1 when leadership was lost or gcm failed at runtime, "
    "2 for anything configured wrong (config file, kubeconfig, ports, TLS files)"
)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m gcm",
        description=DESCRIPTION,
        epilog="'run' is the default command: 'python -m gcm --embedded' tries gcm without a cluster, "
        "'python -m gcm run --help' lists its options. " + EXIT_CODES + ".",
    )
    p.add_argument("--version", action="version", version=f"gcm {_version()}")
    sub = p.add_subparsers(dest="command", title="commands", metavar="{run,stale-report}")
    _run_options(
        sub.add_parser(
            "run",
            help="run the controller manager (the default command)",
            description=DESCRIPTION,
            epilog="Without --config all defaults apply. Run '--embedded' to try gcm without a cluster. "
            + EXIT_CODES
            + ".",
        )
    )
    from gcm.cmd import stale_report

    stale_report.add_arguments(
        sub.add_parser(
            "stale-report",
            help="list every Project with its stale state, read-only",
            description="What the stale-Project check decides for every Project now, with the day "
            "settings of the config's controllers.project (young, active, in use by what, stale since, "
            "auto-delete at). Changes nothing.",
        )
    )
    return p


def _log_level_option(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--log-level",
        choices=tuple(LEVELS),
        help="overrides the config's logLevel; 'debug' also prints the traceback of a failed start",
    )


def _run_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config",
        metavar="FILE",
        help=f"ControllerManagerConfiguration (YAML or JSON, {API_VERSION})",
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig of the garden cluster (else $KUBECONFIG, gardenClientConnection.kubeconfig, "
        "in-cluster, ~/.kube/config)",
    )
    _log_level_option(p)
    p.add_argument(
        "--metrics-secure",
        action="store_true",
        help="serve /metrics over HTTPS to callers whose bearer token the API server authenticates "
        "(TokenReview) and who may get the non-resource URL /metrics (SubjectAccessReview); others get "
        "401 or 403 (kubebuilder's --metrics-secure; docs/metrics.md)",
    )
    p.add_argument(
        "--metrics-cert-dir",
        metavar="DIR",
        help="tls.crt and tls.key of the secure metrics endpoint, re-read when they change (default: a "
        "self-signed certificate made at start)",
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
        default=EMBEDDED_KUBECONFIG,
        metavar="FILE",
        help="where to write an admin kubeconfig for the built-in API server (default .gcm/kubeconfig)",
    )


def run(args: argparse.Namespace) -> int:
    if args.metrics_cert_dir and not args.metrics_secure:
        raise StartupError("--metrics-cert-dir is for the secure metrics endpoint: add --metrics-secure")
    if args.metrics_cert_dir:
        check_metrics_certificates(args.metrics_cert_dir)
    if args.embedded and args.kubeconfig:
        raise StartupError(
            f"--kubeconfig {args.kubeconfig} and --embedded conflict: --embedded runs gcm against its own "
            "API server (its admin kubeconfig goes to --embedded-kubeconfig); drop one of them"
        )
    ignored: list[IgnoredField] = []
    cfg = load_configuration(args.config, ignored)
    configure_logging(args.log_level or cfg.log_level or "info", cfg.log_format or "json")
    log_ignored_fields(ignored)  # now that logging is configured: a typo must be seen
    assert cfg.controllers.project is not None  # always defaulted
    embedded = None
    if args.embedded:
        from gcm import embedded as embedded_mode
        from gcm.embedded import admission

        _log_ignored_kubeconfigs(cfg)
        offset = args.embedded_port_offset
        try:
            embedded = embedded_mode.start(
                args.embedded_port + offset,
                args.embedded_kubeconfig,
                data_dir=args.embedded_data_dir,
                ephemeral=args.embedded_ephemeral,
                admission_plugins=admission.plugins(),  # a garden's gardener-apiserver rules
                extension_roles=cfg.controllers.project.extension_roles is True,
            )
        except embedded_mode.DataDirError as e:
            raise StartupError(f"--embedded-data-dir: {e}") from None
        except OSError as e:
            if e.errno != errno.EADDRINUSE and e.filename is not None:
                # A read-only or foreign place for the garden's files (a container's root filesystem).
                raise StartupError(
                    f"gcm --embedded cannot write {e.filename}: {e.strerror}; pass --embedded-data-dir DIR "
                    "and --embedded-kubeconfig FILE on a writable filesystem"
                ) from None
            if e.errno != errno.EADDRINUSE:
                raise
            port = args.embedded_port + offset
            raise StartupError(
                f"the embedded API server cannot listen on port {port}: address already in use (another "
                "gcm --embedded?); stop it, or pass --embedded-port-offset N to move every embedded port"
            ) from None
        source = KubeconfigSource(embedded.gcm_kubeconfig, "--embedded")
        embedded_mode.local_servers(cfg, offset)
        try:  # gcm's webhooks, served to the embedded API server (issues 10 and 35)
            embedded_mode.enable_webhooks(embedded, cfg, DEFAULT_WEBHOOK_PORT + offset)
        except BaseException:
            embedded.stop(discard=True)
            raise
        ready = embedded_mode.ReadyLine(
            kubeconfig=embedded.admin_kubeconfig,
            data_dir="(memory)" if args.embedded_ephemeral else str(embedded.data_dir),
            **embedded_mode.urls(embedded, cfg, metrics_secure=args.metrics_secure),
            hint=f"try: kubectl --kubeconfig {embedded.admin_kubeconfig} get projects,namespaces",
        )
    else:
        found = resolve_kubeconfig(args.kubeconfig, cfg)
        if found is None:
            raise StartupError(NO_KUBECONFIG)
        source = found
    failed_start = False  # an embedded garden made by a start that fails leaves nothing behind
    try:
        from gcm import chaos_hooks
        from gcm.cmd.app import build_manager
        from gcm.controllers import add as controllers

        chaos_hooks.install_threads_dump()  # off unless GCM_THREADS_FILE is set (chaos runs)
        # The stale controller's clock: the manager's (real) one, or a chaos run's offset clock.
        add_controllers = partial(controllers.add_to_manager, stale_clock=chaos_hooks.stale_clock())
        client = make_client(source, cfg)
        try:
            mgr = build_manager(
                cfg,
                client,
                add_controllers=add_controllers,
                metrics_secure=args.metrics_secure,
                metrics_cert_dir=args.metrics_cert_dir,
            )
        except ConfigError as e:
            failed_start = True
            raise StartupError("\n".join(e.errors)) from None
        if embedded is not None:
            mgr.add(ready, need_leader_election=False)
        log.info(
            "starting gcm", version=_version(), kubeconfig=source.path or "in-cluster", api_server=client.host
        )
        try:
            mgr.start()
        except BindError as e:
            failed_start = True
            raise bind_error(e, cfg, embedded=embedded is not None) from None
    except LeaderElectionLost:
        log.error("leader election lost, exiting")
        return EXIT_RUNTIME
    except CacheSyncTimeout as e:
        raise StartupError(f"{e}; the wait is controllers.cacheSyncTimeout", EXIT_RUNTIME) from None
    finally:
        if embedded is not None:
            embedded.stop(discard=failed_start)
    log.info("gcm stopped")
    return EXIT_OK


def _log_ignored_kubeconfigs(cfg: ControllerManagerConfiguration) -> None:
    """One info line when a garden kubeconfig is set that ``--embedded`` does not use ($KUBECONFIG,
    ``gardenClientConnection.kubeconfig``): without it an operator may believe gcm runs against the
    cluster that kubeconfig names. (``--kubeconfig`` with ``--embedded`` is refused instead: a flag
    given on this command line is a contradiction, an environment variable usually is not.)"""
    ignored = {
        source: path
        for source, path in (
            ("$KUBECONFIG", os.environ.get("KUBECONFIG", "")),
            ("gardenClientConnection.kubeconfig", cfg.garden_client_connection.kubeconfig),
        )
        if path
    }
    if ignored:
        log.info(
            "gcm --embedded runs against its own API server; the garden kubeconfig is ignored",
            ignored=ignored,
        )


COMMANDS = ("run", "stale-report")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a in (*COMMANDS, "--version", "-h", "--help") for a in argv[:1]):
        argv.insert(0, "run")  # `run` is the default command
    args = parser().parse_args(argv)
    debug = getattr(args, "log_level", None) == "debug"
    try:
        if args.command == "stale-report":
            from gcm.cmd import stale_report

            return stale_report.run(args)
        return run(args)
    except StartupError as e:
        sys.stderr.write(f"gcm: {e}\n")
        return e.exit_code
    except Exception as e:
        # A bug or an unforeseen failure: one line, the traceback only on request.
        if debug:
            traceback.print_exc()
        hint = "" if debug else " (run with --log-level debug for the traceback)"
        sys.stderr.write(f"gcm: unexpected error: {type(e).__name__}: {e}{hint}\n")
        return EXIT_RUNTIME
