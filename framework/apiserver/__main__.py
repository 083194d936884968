"""``python -m framework.apiserver --port PORT --kubeconfig FILE [--data-dir DIR] [--crds DIR]
[--webhook-service NAMESPACE/NAME[:PORT]=HOST:PORT ...] [--admission-plugin MODULE:FACTORY ...]``.

Runs in the foreground until SIGINT or SIGTERM. FILE is written only once the server answers requests.
With ``--data-dir`` every acknowledged write is kept in DIR (SQLite) and survives restarts and
``kill -9``; without it everything is in memory. A DIR the server cannot use (a damaged database,
files it did not write, another server using it) ends the process with one line naming the file
and exit code 2.
``--webhook-service`` tells where admission webhooks registered with ``clientConfig.service`` are
served (port defaults to 443); TLS still verifies the name ``NAME.NAMESPACE.svc``.
``--admission-plugin MODULE:FACTORY`` adds in-process admission plugins after the built-in ones (see
:mod:`framework.apiserver.admission.plugins`), as kube-apiserver's ``--enable-admission-plugins``.
``--simulated-nodes N`` simulates N Ready nodes running Pods and workloads (docs/apiserver.md, "Simulated
nodes").
``--fault-injection`` and ``--request-log FILE`` are for chaos runs (``bench/chaos.py``): see
:mod:`framework.apiserver.faults.control` and :mod:`framework.apiserver.accounting.request_log`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading

import structlog

from framework.apiserver.accounting.request_log import parse_field
from framework.apiserver.admission.plugins import AdmissionPlugin
from framework.apiserver.admission.plugins import load as load_plugins
from framework.apiserver.server import APIServer
from framework.apiserver.storage.persistence import DataDirError

log = structlog.get_logger("framework.apiserver")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m framework.apiserver", description=__doc__)
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=6443, help="port to listen on (default 6443; 0 picks one)")
    p.add_argument("--kubeconfig", required=True, help="where to write a kubeconfig for this server")
    p.add_argument(
        "--data-dir",
        metavar="DIR",
        help="keep all objects in DIR (SQLite, survives restarts and kill -9); default: in memory",
    )
    p.add_argument("--crds", help="directory or file of CustomResourceDefinition YAML to install")
    p.add_argument("--http", action="store_true", help="serve plain HTTP instead of HTTPS")
    p.add_argument(
        "--watch-cache-size", type=int, default=1000, help="events kept per resource (default 1000)"
    )
    p.add_argument("--authorization-mode", choices=("AlwaysAllow", "RBAC"), default="AlwaysAllow")
    p.add_argument(
        "--anonymous", action="store_true", help="treat requests without credentials as system:anonymous"
    )
    p.add_argument(
        "--webhook-service",
        action="append",
        default=[],
        metavar="NAMESPACE/NAME[:PORT]=HOST:PORT",
        help="where the admission webhooks of a Service are served (repeatable)",
    )
    p.add_argument(
        "--admission-plugin",
        action="append",
        default=[],
        metavar="MODULE:FACTORY",
        help="also run the admission plugins MODULE.FACTORY() returns, after the built-in ones (repeatable)",
    )
    p.add_argument(
        "--simulated-nodes",
        type=int,
        default=0,
        metavar="N",
        help="simulate N Ready nodes running Pods, Deployments, StatefulSets, DaemonSets and Jobs (as KWOK)",
    )
    p.add_argument(
        "--fault-injection",
        action="store_true",
        help="serve POST /debug/faults (system:masters only) to inject faults; off by default",
    )
    p.add_argument(
        "--request-log",
        metavar="FILE",
        help="append one JSON line per write request (who, what, when, answer) to FILE",
    )
    p.add_argument(
        "--request-log-field",
        action="append",
        default=[],
        metavar="RESOURCE:NAME=PATH",
        help="also log the answered object's value at PATH as NAME for writes to RESOURCE (repeatable)",
    )
    args = p.parse_args(argv)
    if args.simulated_nodes < 0:
        p.error("--simulated-nodes must not be negative")
    services = []
    for entry in args.webhook_service:
        ref, sep, address = entry.partition("=")
        ns, slash, name = ref.partition("/")
        name, colon, port = name.partition(":")
        if not (sep and slash and ns and name and address) or (colon and not port.isdigit()):
            p.error(f"--webhook-service {entry!r}: expected NAMESPACE/NAME[:PORT]=HOST:PORT")
        services.append((ns, name, int(port) if colon else 443, address))
    plugins: list[AdmissionPlugin] = []
    fields: dict[str, dict[str, str]] = {}
    try:
        for spec in args.admission_plugin:
            plugins += load_plugins(spec)
        for spec in args.request_log_field:
            resource, name, path = parse_field(spec)
            fields.setdefault(resource, {})[name] = path
    except ValueError as e:
        p.error(str(e))

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    try:
        server = APIServer(
            args.host,
            args.port,
            scheme="http" if args.http else "https",
            watch_cache_size=args.watch_cache_size,
            authorization=args.authorization_mode,
            anonymous=args.anonymous,
            data_dir=args.data_dir,
            admission_plugins=plugins,
            fault_injection=args.fault_injection,
            request_log=args.request_log,
            request_log_fields=fields,
            nodes=args.simulated_nodes,
        )
    except DataDirError as e:
        sys.stderr.write(f"{p.prog}: --data-dir: {e}\n")
        return 2
    except OSError as e:
        sys.stderr.write(f"{p.prog}: --request-log {args.request_log}: {e.strerror}\n")
        return 2
    for ns, name, port, address in services:
        server.map_webhook_service(ns, name, address, port)
    try:
        server.start()
    except OSError as e:
        log.error("cannot listen", host=args.host, port=args.port, error=str(e))
        return 1
    try:
        if args.crds:
            server.install_crds(args.crds)
        server.write_kubeconfig(args.kubeconfig)
        log.info("serving", url=server.url, kubeconfig=args.kubeconfig, data_dir=args.data_dir or "(memory)")
        while not stop.wait(0.25):  # bounded: a signal delivered to another thread must still stop us
            pass
    finally:
        server.stop()
        log.info("stopped")
    return 0


if __name__ == "__main__":
    sys.exit(main())
