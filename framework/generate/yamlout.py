"""YAML as controller-gen writes it: every document after ``---``, keys sorted, block style, the empty
string as ``""`` (sigs.k8s.io/yaml), so a rerun is byte-identical and diffs stay small."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import yaml

__all__ = ["dump_documents"]


class _Dumper(yaml.SafeDumper):
    def ignore_aliases(self, data: Any) -> bool:
        return True  # a shared list is written out twice, never as an anchor


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    if value == "":
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    return dumper.represent_str(value)


_Dumper.add_representer(str, _str)


def dump_documents(documents: Iterable[dict[str, Any]]) -> str:
    """The documents as one YAML stream, each introduced by ``---``."""
    return "".join(
        "---\n" + yaml.dump(doc, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1 << 16)
        for doc in documents
    )
