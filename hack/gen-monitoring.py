#!/usr/bin/env python3
"""Write manifests/monitoring's generated files:

- ``gcm.rules.yaml``: the rule groups of ``prometheusrule.yaml`` (the file that is edited) as a plain
  Prometheus rules file, for a Prometheus without the Operator and for ``promtool check rules``/``test
  rules`` in tests/gcm/monitoring;
- ``grafana-dashboard.json``: gcm's Grafana dashboard, from the panel list below. Laid out as
  kubebuilder's grafana plugin lays out its controller-runtime dashboard (a ``DS_PROMETHEUS`` input,
  ``job`` and ``namespace`` variables, one row per subsystem, per-second rates over 5 minutes and
  P50/P90/P99 from the histograms), with gcm's own rows added. Every query is run against a real
  Prometheus scraping ``gcm --embedded`` by tests/gcm/monitoring/test_prometheus.py, and
  docs/operations.md says what each panel shows.

Run: ``.venv/bin/python hack/gen-monitoring.py`` (``--check`` exits 1 if a file is stale).
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
MONITORING = ROOT / "manifests" / "monitoring"
RULE_SOURCE = MONITORING / "prometheusrule.yaml"
RULES = MONITORING / "gcm.rules.yaml"
DASHBOARD = MONITORING / "grafana-dashboard.json"
RULES_HEADER = (
    "# Generated from prometheusrule.yaml by hack/gen-monitoring.py: edit that file, then run the\n"
    "# script. The same groups as a plain Prometheus rules file (rule_files:), for a Prometheus without\n"
    "# the Operator.\n"
)
DS = "${DS_PROMETHEUS}"
SEL = 'job="$job", namespace="$namespace"'


def sel(extra: str = "") -> str:
    """The dashboard's selector, with ``extra`` matchers."""
    return "{" + SEL + (", " + extra if extra else "") + "}"


def quantiles(metric: str, by: str, window: str = "5m") -> list[tuple[str, str]]:
    """P50, P90 and P99 of the histogram ``metric`` by ``by`` (labels, comma-separated; "" for one line
    each) over ``window``; the legend names the quantile and ``by``'s values."""
    legend = " ".join("{{" + label.strip() + "}}" for label in by.split(",") if label.strip())
    grouping = f"{by}, le" if by else "le"
    return [
        (
            f"histogram_quantile({q}, sum by ({grouping}) (rate({metric}_bucket{sel()}[{window}])))",
            f"P{int(float(q) * 100)} {legend}".strip(),
        )
        for q in ("0.50", "0.90", "0.99")
    ]


@dataclass
class Panel:
    title: str
    description: str
    targets: list[tuple[str, str]]  # (PromQL, legend)
    unit: str = "short"
    kind: str = "timeseries"
    width: int = 8


@dataclass
class Row:
    title: str
    panels: list[Panel] = field(default_factory=list)


ROWS = [
    Row(
        "Reconciliation",
        [
            Panel(
                "Workers in use",
                "Reconciles running now, per controller (controller_runtime_active_workers) against "
                "the configured maximum (controller_runtime_max_concurrent_reconciles).",
                [
                    (f"sum by (controller) (controller_runtime_active_workers{sel()})", "{{controller}}"),
                    (
                        f"max by (controller) (controller_runtime_max_concurrent_reconciles{sel()})",
                        "max {{controller}}",
                    ),
                ],
            ),
            Panel(
                "Reconciles per second",
                "Reconciles per second by controller and result (success, error, requeue, requeue_after).",
                [
                    (
                        f"sum by (controller, result) (rate(controller_runtime_reconcile_total{sel()}[5m]))",
                        "{{controller}} {{result}}",
                    )
                ],
                unit="ops",
            ),
            Panel(
                "Reconcile errors per second",
                "Reconciles that returned an error, per controller; terminal errors and panics are "
                "counted among them.",
                [
                    (
                        f"sum by (controller) (rate(controller_runtime_reconcile_errors_total{sel()}[5m]))",
                        "{{controller}}",
                    )
                ],
                unit="ops",
            ),
            Panel(
                "Reconcile time (P50, P90, P99)",
                "How long one reconcile takes, per controller.",
                quantiles("controller_runtime_reconcile_time_seconds", "controller"),
                unit="s",
            ),
        ],
    ),
    Row(
        "Work queues",
        [
            Panel(
                "Depth",
                "Items waiting in each work queue (not counting items waiting for a requeue-after delay).",
                [(f"sum by (name) (workqueue_depth{sel()})", "{{name}}")],
            ),
            Panel(
                "Time in queue (P50, P90, P99)",
                "How long an item waits in the queue before a worker takes it.",
                quantiles("workqueue_queue_duration_seconds", "name"),
                unit="s",
            ),
            Panel(
                "Work duration (P50, P90, P99)",
                "How long a worker takes to process an item.",
                quantiles("workqueue_work_duration_seconds", "name"),
                unit="s",
            ),
            Panel(
                "Adds per second",
                "Items added to each queue per second (events, requeues and retries).",
                [(f"sum by (name) (rate(workqueue_adds_total{sel()}[5m]))", "{{name}}")],
                unit="ops",
            ),
            Panel(
                "Retries per second",
                "Items put back with rate-limited backoff after an error, per queue.",
                [(f"sum by (name) (rate(workqueue_retries_total{sel()}[5m]))", "{{name}}")],
                unit="ops",
            ),
            Panel(
                "Work in progress",
                "Seconds of work in progress not yet finished (unfinished) and the age of the oldest "
                "item being processed (longest); a line that only rises is a stuck worker.",
                [
                    (f"sum by (name) (workqueue_unfinished_work_seconds{sel()})", "unfinished {{name}}"),
                    (
                        f"max by (name) (workqueue_longest_running_processor_seconds{sel()})",
                        "longest {{name}}",
                    ),
                ],
                unit="s",
            ),
        ],
    ),
    Row(
        "Leader election",
        [
            Panel(
                "Leader",
                "1 for the replica holding the lease, 0 for the others; exactly one line at 1 is healthy.",
                [(f"leader_election_master_status{sel()}", "{{name}} {{instance}}")],
                width=12,
            ),
            Panel(
                "Leadership changes (1h)",
                "Changes of leader_election_master_status over the last hour, all replicas counted.",
                [(f"sum by (name) (changes(leader_election_master_status{sel()}[1h]))", "{{name}}")],
                width=12,
            ),
        ],
    ),
    Row(
        "Process",
        [
            Panel(
                "CPU",
                "CPU seconds used per second, per replica (1 = one core busy).",
                [(f"rate(process_cpu_seconds_total{sel()}[5m])", "{{instance}}")],
            ),
            Panel(
                "Memory",
                "Resident memory per replica.",
                [(f"process_resident_memory_bytes{sel()}", "{{instance}}")],
                unit="bytes",
            ),
            Panel(
                "Open file descriptors",
                "Open file descriptors per replica, against its limit.",
                [
                    (f"process_open_fds{sel()}", "open {{instance}}"),
                    (f"process_max_fds{sel()}", "max {{instance}}"),
                ],
            ),
        ],
    ),
    Row(
        "API server requests",
        [
            Panel(
                "Requests per second by code",
                "Requests gcm's client sent to the API server, by HTTP status code.",
                [(f"sum by (code) (rate(rest_client_requests_total{sel()}[5m]))", "{{code}}")],
                unit="reqps",
            ),
            Panel(
                "Request latency (P99) by verb",
                "How long the API server took to answer, per verb.",
                [
                    (
                        "histogram_quantile(0.99, sum by (verb, le) "
                        f"(rate(rest_client_request_duration_seconds_bucket{sel()}[5m])))",
                        "{{verb}}",
                    )
                ],
                unit="s",
            ),
            Panel(
                "Client-side throttling (P99)",
                "How long requests waited for the client's rate limiter (qps/burst).",
                [
                    (
                        "histogram_quantile(0.99, sum by (verb, le) "
                        f"(rate(rest_client_rate_limiter_duration_seconds_bucket{sel()}[5m])))",
                        "{{verb}}",
                    )
                ],
                unit="s",
            ),
        ],
    ),
    Row(
        "Webhooks",
        [
            Panel(
                "Decisions per second",
                "Admission decisions of gcm's webhooks: allowed, denied (refused on the merits), "
                "errored (could not decide).",
                [
                    (
                        f"sum by (webhook, decision) (rate(gcm_webhook_decisions_total{sel()}[5m]))",
                        "{{webhook}} {{decision}}",
                    )
                ],
                unit="reqps",
                width=6,
            ),
            Panel(
                "Requests per second by code",
                "Admission reviews served, by HTTP status code (200 also for denials).",
                [
                    (
                        "sum by (webhook, code) "
                        f"(rate(controller_runtime_webhook_requests_total{sel()}[5m]))",
                        "{{webhook}} {{code}}",
                    )
                ],
                unit="reqps",
                width=6,
            ),
            Panel(
                "Latency (P50, P90, P99)",
                "How long a webhook takes to answer an admission review.",
                quantiles("controller_runtime_webhook_latency_seconds", "webhook"),
                unit="s",
                width=6,
            ),
            Panel(
                "In flight",
                "Admission reviews being served now.",
                [(f"sum by (webhook) (controller_runtime_webhook_requests_in_flight{sel()})", "{{webhook}}")],
                width=6,
            ),
        ],
    ),
    Row(
        "Projects",
        [
            Panel(
                "Projects by phase",
                "Projects per status.phase (Unknown: not reconciled yet); the highest count of any "
                "replica, since each counts the same Projects.",
                [(f"max by (phase) (gcm_projects{sel()})", "{{phase}}")],
            ),
            Panel(
                "Stale Projects",
                "Projects marked stale, and those of them with an auto-delete time set.",
                [
                    (f"max(gcm_projects_stale{sel()})", "stale"),
                    (f"max(gcm_projects_auto_delete_scheduled{sel()})", "auto-delete scheduled"),
                ],
            ),
            Panel(
                "Auto-deleted Projects (1h)",
                "Stale Projects the project-stale controller deleted in the last hour.",
                [(f"sum(increase(gcm_projects_auto_deleted_total{sel()}[1h]))", "auto-deleted")],
            ),
        ],
    ),
    Row(
        "Events",
        [
            Panel(
                "Events expired per second",
                "Events the Event TTL controller deleted because ttlNonShootEvents had passed.",
                [(f"sum(rate(gcm_events_expired_total{sel()}[5m]))", "expired")],
                unit="ops",
            ),
            Panel(
                "Expiry delay (P50, P90, P99)",
                "How late after its TTL an Event was deleted.",
                quantiles("gcm_event_expiry_delay_seconds", "", window="15m"),
                unit="s",
            ),
            Panel(
                "Events recorded",
                "Events gcm wrote (create: new, patch: a repeat) and dropped, by reason.",
                [
                    (f"sum by (verb) (rate(events_written_total{sel()}[5m]))", "written {{verb}}"),
                    (f"sum by (reason) (rate(events_dropped_total{sel()}[5m]))", "dropped {{reason}}"),
                ],
                unit="ops",
            ),
        ],
    ),
]


def _panel(panel: Panel, panel_id: int, x: int, y: int) -> dict[str, Any]:
    return {
        "datasource": DS,
        "description": panel.description,
        "fieldConfig": {
            "defaults": {
                "color": {"mode": "palette-classic"},
                "custom": {"drawStyle": "line", "fillOpacity": 10, "lineWidth": 1, "showPoints": "never"},
                "unit": panel.unit,
            },
            "overrides": [],
        },
        "gridPos": {"h": 8, "w": panel.width, "x": x, "y": y},
        "id": panel_id,
        "options": {
            "legend": {"calcs": [], "displayMode": "table", "placement": "bottom", "showLegend": True},
            "tooltip": {"mode": "multi", "sort": "desc"},
        },
        "targets": [
            {"datasource": DS, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
            for i, (expr, legend) in enumerate(panel.targets)
        ],
        "title": panel.title,
        "type": panel.kind,
    }


def _variable(name: str, label: str, query: str) -> dict[str, Any]:
    return {
        "datasource": DS,
        "definition": query,
        "hide": 0,
        "includeAll": False,
        "label": label,
        "multi": False,
        "name": name,
        "query": {"query": query, "refId": f"{name}-variable"},
        "refresh": 2,
        "sort": 1,
        "type": "query",
    }


def dashboard() -> dict[str, Any]:
    panels: list[dict[str, Any]] = []
    y = 0
    next_id = 1
    for row in ROWS:
        panels.append(
            {
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "id": next_id,
                "panels": [],
                "title": row.title,
                "type": "row",
            }
        )
        next_id += 1
        y += 1
        x = 0
        for panel in row.panels:
            if x + panel.width > 24:
                x, y = 0, y + 8
            panels.append(_panel(panel, next_id, x, y))
            next_id += 1
            x += panel.width
        y += 8
    return {
        "__inputs": [
            {
                "name": "DS_PROMETHEUS",
                "label": "Prometheus",
                "description": "",
                "type": "datasource",
                "pluginId": "prometheus",
                "pluginName": "Prometheus",
            }
        ],
        "__requires": [{"type": "datasource", "id": "prometheus", "name": "Prometheus", "version": "1.0.0"}],
        "annotations": {"list": []},
        "description": "gcm (Gardener Controller Manager in Python): controllers, work queues, leader "
        "election, process, API requests, webhooks, Projects and Events. See docs/operations.md.",
        "editable": True,
        "graphTooltip": 1,
        "links": [],
        "panels": panels,
        "refresh": "30s",
        "schemaVersion": 37,
        "tags": ["gcm", "gardener", "controller-runtime"],
        "templating": {
            "list": [
                _variable("job", "Job", "label_values(controller_runtime_reconcile_total, job)"),
                _variable(
                    "namespace",
                    "Namespace",
                    'label_values(controller_runtime_reconcile_total{job="$job"}, namespace)',
                ),
            ]
        },
        "time": {"from": "now-1h", "to": "now"},
        "timepicker": {},
        "timezone": "",
        "title": "Gardener Controller Manager (gcm)",
        "uid": "gcm-overview",
        "version": 1,
    }


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as ``|-`` blocks (as the PrometheusRule writes them)."""


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render_rules() -> str:
    """The rules file for the PrometheusRule as it is now."""
    rule = yaml.safe_load(RULE_SOURCE.read_text())
    body = yaml.dump(
        {"groups": rule["spec"]["groups"]}, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True
    )
    return RULES_HEADER + body


def render_dashboard() -> str:
    return json.dumps(dashboard(), indent=2) + "\n"


def main(argv: list[str]) -> int:
    stale = []
    for path, text in ((RULES, render_rules()), (DASHBOARD, render_dashboard())):
        if "--check" not in argv:
            path.write_text(text)
        elif not path.is_file() or path.read_text() != text:
            stale.append(str(path.relative_to(ROOT)))
    if stale:
        sys.stderr.write(f"stale: {', '.join(stale)}; run hack/gen-monitoring.py\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
