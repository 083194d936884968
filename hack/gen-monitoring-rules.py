#!/usr/bin/env python3
"""Write manifests/monitoring/gcm.rules.yaml, the rule groups of manifests/monitoring/prometheusrule.yaml
as a plain Prometheus rules file (``rule_files:`` of a Prometheus without the Operator; what
``promtool check rules`` and ``promtool test rules`` read in tests/gcm/monitoring).

The PrometheusRule is the one that is edited; this file follows it.
Run: ``.venv/bin/python hack/gen-monitoring-rules.py`` (``--check`` exits 1 if the file is stale).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "manifests" / "monitoring" / "prometheusrule.yaml"
OUT = ROOT / "manifests" / "monitoring" / "gcm.rules.yaml"
HEADER = (
    "# Generated from prometheusrule.yaml by hack/gen-monitoring-rules.py: edit that file, then run the\n"
    "# script. The same groups as a plain Prometheus rules file (rule_files:), for a Prometheus without\n"
    "# the Operator.\n"
)


class _Dumper(yaml.SafeDumper):
    """Block style, multi-line strings as ``|-`` blocks (as the PrometheusRule writes them)."""


def _str(dumper: yaml.SafeDumper, value: str) -> Any:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def render() -> str:
    """The rules file for the PrometheusRule as it is now."""
    rule = yaml.safe_load(SOURCE.read_text())
    body = yaml.dump(
        {"groups": rule["spec"]["groups"]}, Dumper=_Dumper, sort_keys=False, width=1000, allow_unicode=True
    )
    return HEADER + body


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not OUT.is_file() or OUT.read_text() != text:
            sys.stderr.write(f"{OUT.relative_to(ROOT)} is stale: run hack/gen-monitoring-rules.py\n")
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
