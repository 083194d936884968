#!/usr/bin/env python3
"""Generate ``framework/apiserver/catalog/protobuf.json`` from the Kubernetes protobuf sources.

The field numbers, types and repetition of every message come from the ``generated.proto`` files that
go-to-protobuf writes into kubernetes/api (``<group>/<version>/generated.proto``), kubernetes/apimachinery
(``pkg/apis/meta/v1``, ``pkg/runtime``, ``pkg/api/resource``, ``pkg/util/intstr``),
kubernetes/apiextensions-apiserver and kubernetes/kube-aggregator. What the ``.proto`` does not say is
how Go's ``encoding/json`` writes the decoded struct: that is in the Go struct tags next to it
(``json:"name,omitempty" protobuf:"bytes,1,opt,name=name"``), read from the same directory's ``*.go``
files. Each field gets one JSON mode:

- ``inline``: an embedded struct without a JSON name (``VolumeSource`` in ``Volume``): its fields are
  the parent's;
- ``pointer``: a Go pointer: written whenever the wire carries it;
- ``always``: a non-pointer struct, or a scalar without ``omitempty``: Go writes it even when zero;
- ``omitempty``: anything else: dropped when zero/empty.

Only the messages reachable from the kinds of ``catalog/resources.json`` (and their subresources' kinds)
are written. Messages declared ``+protobuf.nullable=true`` are Go named slices (``ExtraValue``): their
JSON form is the bare list of their single repeated field (``"slice": true``).

The sources are git mirrors read with ``git show`` (no work tree needed); the tag is the newest
``v0.<minor>.*`` of the official client's major version (client 37 is Kubernetes 1.37), a release
preferred over a pre-release, else ``HEAD``.

Usage: ``python hack/gen-protobuf-catalog.py [--check] [--mirrors DIR]`` (default ``/work/.mirror``).
``tests/framework/apiserver/test_protobuf_catalog.py`` regenerates in memory when the mirrors
are present and compares.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "framework/apiserver/catalog/protobuf.json"
RESOURCES = ROOT / "framework/apiserver/catalog/resources.json"

# mirror directory name → (upstream repository, how its proto package names map to its directories)
REPOS = {
    "kubernetes+api": "kubernetes/api",
    "kubernetes+apimachinery": "kubernetes/apimachinery",
    "kubernetes+apiextensions-apiserver": "kubernetes/apiextensions-apiserver",
    "kubernetes+kube-aggregator": "kubernetes/kube-aggregator",
}
SCALARS = {"string", "bytes", "bool", "int32", "int64", "uint32", "uint64", "double", "float"}

_MESSAGE = re.compile(r"^message (\w+) \{")
_FIELD = re.compile(r"^\s*(optional|repeated) ([\w.]+) (\w+) = (\d+);")
_MAP = re.compile(r"^\s*map<(\w+), ([\w.]+)> (\w+) = (\d+);")
_PACKAGE = re.compile(r"^package ([\w.]+);")
_STRUCT = re.compile(r"^type (\w+) struct \{")
_GO_FIELD = re.compile(r"^\s*(?:(\w+)\s+)?(\S+)\s+`([^`]*)`")
_TAG = re.compile(r'(\w+):"([^"]*)"')


@dataclass
class ProtoField:
    name: str
    type: str
    label: str  # "", "repeated" or "map"


@dataclass
class Message:
    package: str
    directory: str  # (repository, directory) of the Go package
    repo: str
    fields: dict[int, ProtoField] = field(default_factory=dict)
    slice: bool = False


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def _version_key(tag: str) -> tuple:
    m = re.match(r"v0\.(\d+)\.(\d+)(?:-(alpha|beta|rc)\.(\d+))?$", tag)
    if not m:
        return (-1,)
    stage = {"alpha": 0, "beta": 1, "rc": 2, None: 3}[m.group(3)]
    return (int(m.group(1)), int(m.group(2)), stage, int(m.group(4) or 0))


def pick_ref(repo: Path, minor: int) -> str:
    tags = [t for t in git(repo, "tag", "--list", f"v0.{minor}.*").split() if _version_key(t) != (-1,)]
    return max(tags, key=_version_key) if tags else "HEAD"


def client_minor() -> int:
    from importlib.metadata import version

    return int(version("kubernetes").split(".")[0])


def parse_proto(text: str, repo: str, directory: str, messages: dict[str, Message]) -> None:
    package = ""
    current: Message | None = None
    comment: list[str] = []
    for line in text.splitlines():
        stripped = line.strip()
        if m := _PACKAGE.match(line):
            package = m.group(1)
        elif stripped.startswith("//"):
            comment.append(stripped)
            continue
        elif m := _MESSAGE.match(line):
            current = Message(package, directory, repo, slice="// +protobuf.nullable=true" in comment)
            messages[f"{package}.{m.group(1)}"] = current
        elif stripped == "}":
            current = None
        elif current is not None and (m := _MAP.match(line)):
            key, value, name, num = m.groups()
            if key != "string":
                raise SystemExit(f"{package}: map key {key} of {name} is not a string")
            current.fields[int(num)] = ProtoField(name, _resolve(value, package), "map")
        elif current is not None and (m := _FIELD.match(line)):
            label, type_, name, num = m.groups()
            current.fields[int(num)] = ProtoField(
                name, _resolve(type_, package), "repeated" if label == "repeated" else ""
            )
        comment = []


def _resolve(type_: str, package: str) -> str:
    if type_ in SCALARS:
        return type_
    return type_[1:] if type_.startswith(".") else f"{package}.{type_}"


def parse_go(text: str, structs: dict[str, dict[str, tuple[str, str, bool]]]) -> None:
    """struct → protobuf field name → (Go type, JSON name or "" for inline, omitempty)."""
    current: dict[str, tuple[str, str, bool]] | None = None
    for line in text.splitlines():
        if m := _STRUCT.match(line):
            current = structs.setdefault(m.group(1), {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := _GO_FIELD.match(line)):
            go_name, go_type, tag = m.groups()
            tags = dict(_TAG.findall(tag))
            if "protobuf" not in tags:
                continue
            proto = dict(p.split("=", 1) for p in tags["protobuf"].split(",") if "=" in p)
            if "name" not in proto and go_name is None:
                # An embedded struct's tag may omit name=: go-to-protobuf names it after the type.
                proto["name"] = go_type.lstrip("*")[:1].lower() + go_type.lstrip("*")[1:]
            if "name" not in proto:
                continue
            json_name, *opts = tags.get("json", "").split(",")
            current[proto["name"]] = (go_type, json_name, "omitempty" in opts)


def read_sources(mirrors: Path, minor: int | None) -> tuple[dict[str, Message], dict, dict[str, str]]:
    """Messages and Go struct tags of every mirror, at the release tag of ``minor`` (None: ``HEAD``)."""
    messages: dict[str, Message] = {}
    go: dict[tuple[str, str], dict[str, dict[str, tuple[str, str, bool]]]] = {}
    refs: dict[str, str] = {}
    for mirror, upstream in REPOS.items():
        repo = mirrors / mirror / "repo"
        if not repo.is_dir():
            raise FileNotFoundError(repo)
        ref = refs[upstream] = "HEAD" if minor is None else pick_ref(repo, minor)
        files = git(repo, "ls-tree", "-r", "--name-only", ref).split()
        protos = [f for f in files if f.endswith("/generated.proto") and "testapigroup" not in f]
        for proto in protos:
            directory = proto.rsplit("/", 1)[0]
            parse_proto(git(repo, "show", f"{ref}:{proto}"), upstream, directory, messages)
            structs = go.setdefault((upstream, directory), {})
            for f in files:
                if (
                    f.rsplit("/", 1)[0] == directory
                    and f.endswith(".go")
                    and not f.endswith(("_test.go", ".pb.go"))
                    and not f.rsplit("/", 1)[1].startswith("zz_generated")
                ):
                    parse_go(git(repo, "show", f"{ref}:{f}"), structs)
    return messages, go, refs


def _go_struct(t: str) -> bool:
    return not t.startswith(("*", "[]", "map[")) and t not in SCALARS and not t.startswith(("int", "uint"))


def mode_of(msg_name: str, msg: Message, pf: ProtoField, go: dict) -> tuple[str, str]:
    """(JSON name, JSON mode) of one field, from its Go struct tag."""
    struct = go.get((msg.repo, msg.directory), {}).get(msg_name.rsplit(".", 1)[1], {})
    if pf.name not in struct:
        return pf.name, "omitempty"
    go_type, json_name, omitempty = struct[pf.name]
    if json_name in ("", "-") and not go_type.startswith(("[]", "map[")) and pf.type not in SCALARS:
        return pf.name, "inline"
    name = json_name or pf.name
    if go_type.startswith("*"):
        return name, "pointer"
    if pf.label:
        return name, "omitempty"
    if pf.type not in SCALARS and _go_struct(go_type):
        return name, "always"  # encoding/json never omits a struct, omitempty or not
    return name, "omitempty" if omitempty else "always"


def generate(mirrors: Path) -> dict:
    """The catalog from the client's release tag, or from ``HEAD`` when the tag lacks kinds the client
    has (a client built from a release branch ahead of the newest tag in the mirror)."""
    try:
        return _generate(*read_sources(mirrors, client_minor()))
    except MissingKinds:
        return _generate(*read_sources(mirrors, None))


class MissingKinds(Exception):
    """Kinds of resources.json without a message in the sources read."""


def _generate(messages: dict[str, Message], go: dict, refs: dict[str, str]) -> dict:
    by_package_kind: dict[tuple[str, str], str] = {}
    for fqn in messages:
        package, name = fqn.rsplit(".", 1)
        by_package_kind[(package, name)] = fqn
    resources = json.loads(RESOURCES.read_text())
    wanted: set[tuple[str, str, str]] = set()
    for r in resources:
        wanted.add((r["group"], r["version"], r["kind"]))
        for sub in r.get("subresources", []):
            if sub.get("kind"):
                wanted.add((sub.get("group", r["group"]), sub.get("version", r["version"]), sub["kind"]))
    packages = {p for p, _ in by_package_kind}
    kinds: dict[str, str] = {}
    missing = []
    for group, version, kind in sorted(wanted):
        directory = _dir_alias(group) or (group.split(".", 1)[0] if group else "core")
        candidates = [
            by_package_kind[(p, kind)]
            for p in packages
            if p.endswith(f".{directory}.{version}") and (p, kind) in by_package_kind
        ]
        if len(candidates) != 1:
            missing.append(f"{group}/{version} {kind}: {candidates}")
            continue
        kinds[f"{group}/{version}".lstrip("/") + f" {kind}"] = candidates[0]
    if missing:
        raise MissingKinds("no unique message for: " + "; ".join(missing))

    out_messages: dict[str, dict] = {}
    todo = list(kinds.values())
    while todo:
        fqn = todo.pop()
        if fqn in out_messages:
            continue
        msg = messages[fqn]
        fields: dict[str, list] = {}
        for num, pf in sorted(msg.fields.items()):
            name, mode = mode_of(fqn, msg, pf, go)
            fields[str(num)] = [name, pf.type, pf.label, mode]
            if pf.type not in SCALARS:
                todo.append(pf.type)
        out_messages[fqn] = {"slice": True, "fields": fields} if msg.slice else {"fields": fields}
    return {
        "generator": "hack/gen-protobuf-catalog.py",
        "sources": refs,
        "kinds": dict(sorted(kinds.items())),
        "messages": dict(sorted(out_messages.items())),
    }


def _dir_alias(group: str) -> str:
    # Proto packages are named after kubernetes/api's directories, which differ from some group names.
    return {
        "flowcontrol.apiserver.k8s.io": "flowcontrol",
        "internal.apiserver.k8s.io": "apiserverinternal",
        "rbac.authorization.k8s.io": "rbac",
        "storagemigration.k8s.io": "storagemigration",
    }.get(group, "")


def render(catalog: dict) -> str:
    return json.dumps(catalog, indent=0, separators=(",", ":")) + "\n"


def run(name: str, doc: str | None, generate: Callable[[Path], dict], out: Path) -> int:
    """The command line every catalog generator shares: write ``out`` from the mirrors, or with
    ``--check`` exit 1 when the committed file is stale; a missing mirror or kind is one line, exit 2."""
    parser = argparse.ArgumentParser(description=(doc or "").split("\n", 1)[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed file is stale")
    parser.add_argument("--mirrors", type=Path, default=Path("/work/.mirror"))
    args = parser.parse_args()
    try:
        text = render(generate(args.mirrors))
    except FileNotFoundError as e:
        print(f"{name}: mirror not found: {e}", file=sys.stderr)
        return 2
    except MissingKinds as e:
        print(f"{name}: {e}", file=sys.stderr)
        return 2
    if args.check:
        return 0 if out.read_text() == text else 1
    out.write_text(text)
    return 0


def main() -> int:
    return run("gen-protobuf-catalog", __doc__, generate, OUT)


if __name__ == "__main__":
    sys.exit(main())
