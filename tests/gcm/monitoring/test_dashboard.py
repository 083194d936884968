"""manifests/monitoring/grafana-dashboard.json as Grafana reads it, and docs/operations.md about it: the
panels are laid out on Grafana's 24-column grid without overlapping, ids are unique, every query uses the
data source input and the ``job``/``namespace`` variables, every panel and every metric a query or rule
uses is documented. (That every query returns data is test_prometheus.py's part.)"""

from __future__ import annotations

import json
import re

import yaml

from tests.gcm.monitoring.tools import MONITORING, ROOT

OPERATIONS = (ROOT / "docs" / "operations.md").read_text()
BOARD = json.loads((MONITORING / "grafana-dashboard.json").read_text())
PANELS = [p for p in BOARD["panels"] if p["type"] != "row"]
# A metric name right before its selector; recorded series (with colons) are documented as such.
METRIC = re.compile(r"\b([a-z_][a-z0-9_:]*)\{")


def exprs() -> list[str]:
    board = [t["expr"] for p in PANELS for t in p["targets"]]
    rule = yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())
    return board + [r["expr"] for g in rule["spec"]["groups"] for r in g["rules"]]


def test_layout_fits_the_grid_without_overlap():
    cells: set[tuple[int, int]] = set()
    ids = [p["id"] for p in BOARD["panels"]]
    assert len(ids) == len(set(ids))
    for panel in BOARD["panels"]:
        pos = panel["gridPos"]
        assert pos["x"] >= 0 and pos["x"] + pos["w"] <= 24, panel["title"]
        mine = {
            (x, y) for x in range(pos["x"], pos["x"] + pos["w"]) for y in range(pos["y"], pos["y"] + pos["h"])
        }
        assert not cells & mine, f"{panel['title']} overlaps another panel"
        cells |= mine


def test_every_query_uses_the_data_source_input_and_the_variables():
    assert [i["name"] for i in BOARD["__inputs"]] == ["DS_PROMETHEUS"]
    assert {v["name"] for v in BOARD["templating"]["list"]} == {"job", "namespace"}
    for panel in PANELS:
        assert panel["datasource"] == "${DS_PROMETHEUS}"
        assert panel["description"], panel["title"]
        refs = [t["refId"] for t in panel["targets"]]
        assert len(refs) == len(set(refs)) and refs, panel["title"]
        for target in panel["targets"]:
            assert target["datasource"] == "${DS_PROMETHEUS}"
            for selector in re.findall(r"\{([^}]*)\}", target["expr"]):
                assert selector.startswith('job="$job", namespace="$namespace"'), target["expr"]


def test_every_panel_is_documented():
    for panel in PANELS:
        assert f"*{panel['title']}*" in OPERATIONS, panel["title"]
    for row in (p for p in BOARD["panels"] if p["type"] == "row"):
        assert f"**{row['title']}**" in OPERATIONS, row["title"]


def test_every_metric_used_is_documented():
    used = {m for expr in exprs() for m in METRIC.findall(expr)}
    assert "gcm_projects" in used and "workqueue_depth" in used
    for name in sorted(used):
        base = re.sub(r"_(bucket|count|sum)$", "", name)
        assert f"`{name}`" in OPERATIONS or f"`{base}`" in OPERATIONS, f"{name} is not in docs/operations.md"
