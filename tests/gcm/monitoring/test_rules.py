"""manifests/monitoring's rules with promtool (Debian's prometheus package, see ``tools.py``):

- ``promtool check rules`` accepts the rules file, which is the PrometheusRule's ``spec.groups``
  exactly (``hack/gen-monitoring.py`` writes it; ``--check`` says whether it is stale);
- ``promtool test rules`` passes ``alerts_test.yaml``, which has for every alert a case where it fires
  and one where it does not, and fails when an expectation is wrong;
- every alert has a severity, a summary, a description and a ``runbook_url`` naming a section of
  docs/operations.md; every recording rule is documented there too.
"""

from __future__ import annotations

import re
import subprocess
import sys

import yaml

from tests.gcm.monitoring.tools import MONITORING, ROOT, binary

TESTS = ROOT / "tests" / "gcm" / "monitoring" / "alerts_test.yaml"
OPERATIONS = ROOT / "docs" / "operations.md"
SEVERITIES = {"critical", "warning", "info"}


def prometheus_rule() -> dict:
    return yaml.safe_load((MONITORING / "prometheusrule.yaml").read_text())


def rules() -> list[dict]:
    return [rule for group in prometheus_rule()["spec"]["groups"] for rule in group["rules"]]


def alerts() -> list[dict]:
    return [rule for rule in rules() if "alert" in rule]


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading: lower case, punctuation dropped, spaces to dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def operations_anchors() -> set[str]:
    return {
        github_anchor(line.lstrip("#"))
        for line in OPERATIONS.read_text().splitlines()
        if re.match(r"#{1,6} ", line)
    }


def test_rules_file_is_the_prometheusrules_groups():
    plain = yaml.safe_load((MONITORING / "gcm.rules.yaml").read_text())
    assert plain == {"groups": prometheus_rule()["spec"]["groups"]}
    check = subprocess.run(
        [sys.executable, str(ROOT / "hack" / "gen-monitoring.py"), "--check"],
        capture_output=True,
        text=True,
    )
    assert check.returncode == 0, check.stderr


def test_promtool_check_rules_accepts_the_rules():
    out = subprocess.run(
        [binary("promtool"), "check", "rules", str(MONITORING / "gcm.rules.yaml")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert f"SUCCESS: {len(rules())} rules found" in out.stdout


def test_promtool_check_rules_refuses_a_broken_expression(tmp_path):
    broken = {"groups": [{"name": "x", "rules": [{"alert": "Broken", "expr": "sum by (job) (rate(x[5m])"}]}]}
    path = tmp_path / "broken.rules.yaml"
    path.write_text(yaml.safe_dump(broken))
    out = subprocess.run([binary("promtool"), "check", "rules", str(path)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "FAILED" in out.stdout + out.stderr


def test_promtool_unit_tests_pass():
    out = subprocess.run(
        [binary("promtool"), "test", "rules", str(TESTS)], capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "SUCCESS" in out.stdout


def test_every_alert_is_tested_firing_and_not_firing():
    fired: dict[str, int] = {}
    quiet: dict[str, int] = {}
    for case in yaml.safe_load(TESTS.read_text())["tests"]:
        for check in case.get("alert_rule_test", []):
            tally = fired if check.get("exp_alerts") else quiet
            tally[check["alertname"]] = tally.get(check["alertname"], 0) + 1
    names = {rule["alert"] for rule in alerts()}
    assert set(fired) == names, "alerts without a firing case: " + ", ".join(sorted(names - set(fired)))
    assert set(quiet) == names, "alerts without a quiet case: " + ", ".join(sorted(names - set(quiet)))


def test_a_wrong_expectation_fails_promtool(tmp_path):
    """The unit tests can fail: expecting silence where GCMNoLeader fires is reported."""
    suite = yaml.safe_load(TESTS.read_text())
    case = next(c for c in suite["tests"] if c["name"].startswith("GCMNoLeader fires"))
    for check in case["alert_rule_test"]:
        check["exp_alerts"] = []
    suite["tests"] = [case]
    suite["rule_files"] = [str(MONITORING / "gcm.rules.yaml")]
    path = tmp_path / "wrong_test.yaml"
    path.write_text(yaml.safe_dump(suite, sort_keys=False))
    out = subprocess.run([binary("promtool"), "test", "rules", str(path)], capture_output=True, text=True)
    assert out.returncode != 0
    assert "GCMNoLeader" in out.stdout + out.stderr


def test_every_alert_has_severity_text_and_a_runbook_section():
    anchors = operations_anchors()
    for rule in alerts():
        name = rule["alert"]
        assert rule["labels"]["severity"] in SEVERITIES, name
        annotations = rule["annotations"]
        assert annotations["summary"] and annotations["description"], name
        assert annotations["runbook_url"] == f"docs/operations.md#{name.lower()}", name
        assert name.lower() in anchors, f"docs/operations.md has no section {name}"


def test_every_recording_rule_is_documented():
    text = OPERATIONS.read_text()
    for rule in rules():
        if "record" in rule:
            assert f"`{rule['record']}`" in text, rule["record"]
