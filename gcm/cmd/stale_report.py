"""``python -m gcm stale-report``: what the stale check decides for every Project, changing nothing.

It lists each kind the stale check reads once, cluster-wide (Secrets metadata-only), indexes them as
the controller's cache does and runs the controller's own
:func:`~gcm.controllers.project.stale.reconciler.evaluate` for every Project at the current time with
the day settings of ``controllers.project`` of the given config. Only GET/LIST requests are made. Columns:

- ``STATE``: ``young``, ``active`` (recent ``lastActivityTimestamp``), ``in-use``, ``excluded``
  (``skip-stale-check``), ``stale``, ``auto-delete-scheduled``, ``auto-delete-due`` (deleted at the
  next check), ``deleting``, ``no-namespace`` or ``error`` (e.g. the namespace is missing);
- ``REASON``: why (what uses it, until when it is young or active, ...);
- ``STALE-SINCE``, ``AUTO-DELETE-AT``: the status values after the next check (``-``: none), so a
  changed day setting shows its effect before it is rolled out.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from framework.cache import CacheReader, IndexedReader, Indexer
from framework.client import APIError, NoKindMatchError
from framework.clock import Clock, RealClock
from framework.meta.object import get_metadata
from framework.meta.time import format_time
from gcm.controllers.errors import error_text
from gcm.controllers.project.stale.cache import (
    BACKUP_ENTRY,
    CREDENTIALS_BINDING,
    INDEXES,
    INTERNAL_SECRET,
    NAMESPACE,
    PLANT,
    PROJECT,
    QUOTA,
    SECRET,
    SECRET_BINDING,
    SHOOT,
    WORKLOAD_IDENTITY,
    secret_metadata_only,
)
from gcm.controllers.project.stale.reconciler import (
    StaleSettings,
    evaluate,
)

COLUMNS = ("PROJECT", "NAMESPACE", "STATE", "REASON", "STALE-SINCE", "AUTO-DELETE-AT")
ERROR = "error"
PAGE_SIZE = 500


class Snapshot(IndexedReader):
    """One cluster-wide list per kind, indexed like the controller's cache (same index functions):
    a :class:`~framework.client.Reader` over those lists, so the stale check reads it as it reads
    ``mgr.client``. Objects are shared, not copied (the report never changes them). A kind it did not
    list raises ``ValueError``."""

    def __init__(self, client: Any, kinds: Iterable[tuple[str, str]]) -> None:
        super().__init__()
        self._client = client
        self._readers: dict[tuple[str, str], CacheReader] = {}
        for kind in kinds:
            self._load(kind)

    def _pages(self, api_version: str, kind: str) -> Iterable[dict]:
        cont = None
        while True:
            if (api_version, kind) == SECRET:  # Secrets metadata-only: the report never holds their data
                page = self._client.list(
                    api_version, kind, limit=PAGE_SIZE, continue_=cont, metadata_only=True
                )
                for item in page.get("items") or ():
                    yield secret_metadata_only(item)
            else:
                page = self._client.list(api_version, kind, limit=PAGE_SIZE, continue_=cont)
                yield from page.get("items") or ()
            cont = get_metadata(page).get("continue")
            if not cont:
                return

    def _load(self, kind: tuple[str, str]) -> None:
        indexer = Indexer(indexers=dict(INDEXES.get(kind, {})))
        indexer.replace(self._pages(*kind))
        self._readers[kind] = CacheReader(indexer, self._client.mapping(*kind), kind[0], copy=False)

    def find_kind_reader(self, api_version: str, kind: str, metadata_only: bool | None) -> CacheReader:
        try:
            return self._readers[(api_version, kind)]
        except KeyError:
            raise ValueError(f"the snapshot did not list {kind} ({api_version})") from None


@dataclass(frozen=True)
class Row:
    project: str
    namespace: str
    state: str
    reason: str
    stale_since: datetime | None
    auto_delete_at: datetime | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "namespace": self.namespace,
            "state": self.state,
            "reason": self.reason,
            "staleSince": format_time(self.stale_since) if self.stale_since else None,
            "autoDeleteAt": format_time(self.auto_delete_at) if self.auto_delete_at else None,
        }


def build_report(client: Any, settings: StaleSettings, now: datetime) -> list[Row]:
    """One row per Project, sorted by name: :func:`evaluate` over a :class:`Snapshot` at ``now``."""
    try:
        client.mapping(*PLANT)
        plants = True
    except NoKindMatchError:
        plants = False
    kinds = [
        PROJECT,
        NAMESPACE,
        SHOOT,
        BACKUP_ENTRY,
        SECRET,
        SECRET_BINDING,
        CREDENTIALS_BINDING,
        INTERNAL_SECRET,
        WORKLOAD_IDENTITY,
        QUOTA,
    ]
    snapshot = Snapshot(client, [*kinds, *((PLANT,) if plants else ())])
    rows = []
    for project in sorted(snapshot.list(*PROJECT)["items"], key=lambda p: p["metadata"]["name"]):
        name = project["metadata"]["name"]
        ns = (project.get("spec") or {}).get("namespace") or ""
        try:
            d = evaluate(project, snapshot, settings, now, plants=plants)
        except APIError as e:
            rows.append(Row(name, ns, ERROR, error_text(e), None, None))
            continue
        rows.append(Row(name, ns, d.state, d.reason, d.stale_since, d.auto_delete_at))
    return rows


SETTINGS = (
    ("minimumLifetimeDays", "minimum_lifetime_days"),
    ("staleGracePeriodDays", "stale_grace_period_days"),
    ("staleExpirationTimeDays", "stale_expiration_time_days"),
)


def settings_sources(config_path: str | None) -> dict[str, str]:
    """Where each day setting came from: the config file that sets it, or ``default``."""
    explicit: Mapping[str, Any] = {}
    if config_path:
        from gcm.config.load import parse_config_text

        with open(config_path, "rb") as f:
            raw = parse_config_text(f.read(), config_path)
        explicit = ((raw.get("controllers") or {}).get("project") or {}) if isinstance(raw, dict) else {}
        explicit = explicit if isinstance(explicit, Mapping) else {}
    return {
        name: config_path if explicit.get(name) is not None and config_path else "default"
        for name, _ in SETTINGS
    }


def render_settings(settings: StaleSettings, sources: Mapping[str, str], now: datetime) -> str:
    """The line above the table: the day settings the report judged with, each with its source, so a
    report that disagrees with a running gcm shows why (another config file, or defaults)."""
    parts = [f"{name}={getattr(settings, attr)} ({sources.get(name, 'default')})" for name, attr in SETTINGS]
    return f"settings (controllers.project): {', '.join(parts)}; now {format_time(now)}\n\n"


def render_table(rows: list[Row]) -> str:
    cells = [COLUMNS] + [
        (
            r.project,
            r.namespace or "-",
            r.state,
            r.reason,
            format_time(r.stale_since) if r.stale_since else "-",
            format_time(r.auto_delete_at) if r.auto_delete_at else "-",
        )
        for r in rows
    ]
    widths = [max(len(c[i]) for c in cells) for i in range(len(COLUMNS))]
    lines = ["   ".join(c[i].ljust(widths[i]) for i in range(len(COLUMNS))).rstrip() for c in cells]
    return "\n".join(lines) + "\n"


def render_json(
    rows: list[Row], settings: StaleSettings, now: datetime, sources: Mapping[str, str] | None = None
) -> str:
    doc = {
        "now": format_time(now),
        "settings": {name: getattr(settings, attr) for name, attr in SETTINGS},
        "settingsSources": {name: (sources or {}).get(name, "default") for name, _ in SETTINGS},
        "projects": [r.to_dict() for r in rows],
    }
    return json.dumps(doc, indent=2) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--config", metavar="FILE", help="ControllerManagerConfiguration (its controllers.project)"
    )
    p.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="kubeconfig of the garden cluster (else $KUBECONFIG, gardenClientConnection.kubeconfig, "
        "in-cluster, .gcm/kubeconfig of a gcm --embedded started here, ~/.kube/config)",
    )
    p.add_argument("-o", "--output", choices=("table", "json"), default="table", help="output format")


def run(args: argparse.Namespace, clock: Clock | None = None, out: Any = None) -> int:
    """The ``stale-report`` command: 0 on success, 2 for a bad config or kubeconfig, 1 on API errors."""
    from gcm.cmd.options import (
        EXIT_RUNTIME,
        NO_KUBECONFIG_NOR_EMBEDDED,
        StartupError,
        load_configuration,
        make_client,
        resolve_kubeconfig,
    )

    out = out or sys.stdout
    cfg = load_configuration(args.config)
    source = resolve_kubeconfig(args.kubeconfig, cfg, embedded=True)
    if source is None:
        raise StartupError(NO_KUBECONFIG_NOR_EMBEDDED)
    settings = StaleSettings.from_config(cfg)
    sources = settings_sources(args.config)
    now = (clock or RealClock()).now()
    client = make_client(source, cfg)
    try:
        rows = build_report(client, settings, now)
    except (APIError, NoKindMatchError, OSError) as e:
        sys.stderr.write(f"gcm: stale-report failed against {client.host} ({source.describe()}): {e}\n")
        return EXIT_RUNTIME
    if args.output == "json":
        out.write(render_json(rows, settings, now, sources))
    else:
        out.write(render_settings(settings, sources, now) + render_table(rows))
    return 0
