#!/usr/bin/env python3
"""Generate ``hack/k8s-markers.json``: the schema markers of the built-in Go types, for
``hack/gen-types.py``.

controller-gen copies what the ``k8s.io/api`` and ``k8s.io/apimachinery`` Go types say in their doc
comments into a CRD that embeds them: ``+listType``/``+listMapKey``, ``+mapType``/``+structType``
(on a field or on a type), ``+default`` and the ``+kubebuilder:validation:*`` markers of
apimachinery's ``Condition``; and it documents every field, where the client's models leave the fields
whose type is another model undocumented. The models carry neither, so this script reads them from the
Go sources (the mirrors and refs of ``catalog/protobuf.json``'s ``sources``) and writes them by protobuf
message (``k8s.io.api.core.v1.Container``) and JSON field name (``""`` for the type's own):
``{"k8s.io.api.core.v1.Container": {"ports": {"listType": "map", "listMapKey": ["containerPort",
"protocol"]}}}``, with ``"doc"`` (trimmed) only for the fields the client leaves undocumented.

Usage: ``python hack/gen-k8s-markers.py [--check] [--mirrors DIR]`` (default ``/work/.mirror``).
``tests/framework/types/test_types.py`` regenerates in memory when the mirrors are present and compares.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "hack" / "k8s-markers.json"
PROTOBUF = ROOT / "framework/apiserver/catalog/protobuf.json"
# mirror → (upstream, protobuf package prefix of its directories)
REPOS = {
    "kubernetes+api": ("kubernetes/api", "k8s.io.api."),
    "kubernetes+apimachinery": ("kubernetes/apimachinery", "k8s.io.apimachinery."),
}
_STRUCT = re.compile(r"^type (\w+) struct \{")
_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")
_JSON_TAG = re.compile(r'json:"([^"]*)"')
_MARKER = re.compile(r"^//\s*\+([\w:.-]+)(?:=(.*))?$")
# Markers kept, by the name they are written under in the output.
_KEEP = {
    "listType": "listType",
    "listMapKey": "listMapKey",
    "mapType": "mapType",
    "structType": "structType",
    "default": "default",
    "kubebuilder:validation:Enum": "enum",
    "kubebuilder:validation:MaxLength": "maxLength",
    "kubebuilder:validation:MinLength": "minLength",
    "kubebuilder:validation:Pattern": "pattern",
    "kubebuilder:validation:Minimum": "minimum",
    "kubebuilder:validation:Maximum": "maximum",
}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _value(name: str, raw: str | None) -> Any:
    if raw is None:
        return None
    raw = raw.strip()
    if name == "default":
        if raw.startswith("ref("):
            return None  # a Go constant: controller-gen skips these too
        return json.loads(raw)
    if name == "kubebuilder:validation:Enum":
        return [v.strip().strip('"') for v in raw.split(";")]
    if name in ("kubebuilder:validation:Pattern",):
        return raw[1:-1] if raw.startswith("`") and raw.endswith("`") else raw
    if name.startswith("kubebuilder:validation:"):
        return int(raw)
    return raw


def _markers(comment: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for line in comment:
        m = _MARKER.match(line)
        if not m or m.group(1) not in _KEEP:
            continue
        key, value = _KEEP[m.group(1)], _value(m.group(1), m.group(2))
        if value is None:
            continue
        if key == "listMapKey":
            out.setdefault(key, []).append(value)
        else:
            out[key] = value
    return out


def _doc(comment: list[str]) -> str:
    """A Go doc comment as one line of text, without its markers."""
    lines = [line[2:].strip() for line in comment if not _MARKER.match(line)]
    return " ".join(line for line in lines if line and not line.startswith("---"))


def parse_go(text: str, package: str, out: dict[str, dict[str, dict[str, Any]]]) -> None:
    comment: list[str] = []
    current: dict[str, dict[str, Any]] | None = None
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("//"):
            comment.append(stripped)
            continue
        if m := _STRUCT.match(line):
            current = {}
            type_markers = _markers(comment)
            if type_markers:
                current[""] = type_markers
            out[f"{package}.{m.group(1)}"] = current
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _FIELD.match(line)):
            tag = _JSON_TAG.search(m.group(3))
            name = tag.group(1).split(",")[0] if tag else ""
            markers = _markers(comment)
            doc = _doc(comment)
            if doc:
                markers["doc"] = doc
            if name and name != "-" and markers:
                current[name] = markers
        comment = []


def generate(mirrors: Path) -> dict[str, Any]:
    refs = json.loads(PROTOBUF.read_text())["sources"]
    wanted = set(json.loads(PROTOBUF.read_text())["messages"])
    found: dict[str, dict[str, dict[str, Any]]] = {}
    for mirror, (upstream, prefix) in REPOS.items():
        repo = mirrors / mirror / "repo"
        if not repo.is_dir():
            raise FileNotFoundError(repo)
        ref = refs.get(upstream, "HEAD")
        for f in git(repo, "ls-tree", "-r", "--name-only", ref).split():
            directory, _, name = f.rpartition("/")
            skipped = name.endswith(("_test.go", ".pb.go")) or name.startswith("zz_generated")
            if not name.endswith(".go") or skipped:
                continue
            package = prefix + directory.replace("/", ".")
            if not any(w.startswith(package + ".") for w in wanted):
                continue
            parse_go(git(repo, "show", f"{ref}:{f}"), package, found)
    _keep_needed_docs(found)
    return {
        "generator": "hack/gen-k8s-markers.py",
        "sources": {upstream: refs.get(upstream, "HEAD") for upstream, _ in REPOS.values()},
        "messages": {k: v for k, v in sorted(found.items()) if k in wanted and v},
    }


def _keep_needed_docs(found: dict[str, dict[str, dict[str, Any]]]) -> None:
    """Keep a field's Go documentation only where the client's has none (its fields whose type is
    another model), trimmed as ``hack/gen-types.py`` trims: the file stays small."""
    spec = importlib.util.spec_from_file_location("gen_types", ROOT / "hack/gen-types.py")
    assert spec and spec.loader
    gen_types = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_types)
    catalog = ROOT / "framework/apiserver/catalog"
    types = json.loads((catalog / "types.json").read_text())
    docs = json.loads((catalog / "descriptions.json").read_text())
    proto = json.loads(PROTOBUF.read_text())
    links = gen_types.link_messages(types, json.loads((catalog / "resources.json").read_text()), proto)
    needed: set[tuple[str, str]] = set()
    for model, message in links.items():
        for key in types[model]["fields"]:
            if not docs.get(model, {}).get(key):
                needed.add((_declaring(proto["messages"], message, key), key))
    for message, fields in found.items():
        for key, markers in list(fields.items()):
            doc = markers.pop("doc", None)
            if doc and (message, key) in needed:
                markers["doc"] = gen_types.trim(doc)
            if not markers:
                del fields[key]


def _declaring(messages: dict[str, Any], message: str, key: str) -> str:
    """The message that declares a JSON field of ``message``, through inlined structs."""
    for name, ptype, _rep, mode in messages.get(message, {}).get("fields", {}).values():
        if mode == "inline":
            inner = _declaring(messages, ptype, key)
            if inner:
                return inner
        elif name == key:
            return message
    return ""


def render(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    text = render(generate(args.mirrors))
    if args.check:
        return 0 if OUT.exists() and OUT.read_text() == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")  # a build script's line of output
    return 0


if __name__ == "__main__":
    sys.exit(main())
