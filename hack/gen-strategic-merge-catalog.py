#!/usr/bin/env python3
"""Generate ``framework/apiserver/catalog/strategic_merge.json``: each built-in kind's
strategic-merge-patch keys, from the Go struct tags of its types.

kube-apiserver merges a strategic merge patch with the ``patchStrategy`` and ``patchMergeKey`` tags of
the versioned Go struct (``strategicpatch.NewPatchMetaFromStruct``), e.g. core/v1 ``PodSpec``'s
``Containers []Container `json:"containers" patchStrategy:"merge" patchMergeKey:"name"```. A list
without ``merge`` in its tag is replaced wholesale. This script reads those tags from the same sources
and refs as ``catalog/protobuf.json`` (its ``sources``; ``hack/gen-protobuf-catalog.py`` reads the
mirrors) and walks each kind's fields through the protobuf catalog's message graph, which already
knows every field's JSON name, element type and inlined structs. Each kind gets the dotted paths of its
merging lists (list items written ``[]``: ``spec.template.spec.containers[].env``) and their merge key
(``null`` for a list of primitives, merged as a set). A list that does not merge is replaced wholesale,
so its items are not walked; nor are map values: a strategic-merge path through a map would carry the
map key, and no built-in map value has a merging list.

Usage: ``python hack/gen-strategic-merge-catalog.py [--check] [--mirrors DIR]`` (default
``/work/.mirror``). ``tests/framework/apiserver/test_strategic_merge_catalog.py`` regenerates in
memory when the mirrors are present and compares.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "framework/apiserver/catalog/strategic_merge.json"
PROTOBUF = ROOT / "framework/apiserver/catalog/protobuf.json"


def _protobuf_generator():  # type: ignore[no-untyped-def]
    """``hack/gen-protobuf-catalog.py``: its mirror reading and Go struct parsing serve here too."""
    spec = importlib.util.spec_from_file_location(
        "gen_protobuf_catalog", ROOT / "hack/gen-protobuf-catalog.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through sys.modules
    spec.loader.exec_module(module)
    return module


def _location(package: str) -> tuple[str, str]:
    """(repository, directory) of a protobuf package: ``k8s.io.api.core.v1`` → kubernetes/api core/v1,
    ``k8s.io.apimachinery.pkg.apis.meta.v1`` → kubernetes/apimachinery pkg/apis/meta/v1."""
    repo, *directory = package.removeprefix("k8s.io.").split(".")
    return f"kubernetes/{repo.replace('_', '-')}", "/".join(directory)


def read_tags(mirrors: Path, sources: dict[str, str], packages: set[str]) -> dict[str, dict[str, tuple]]:
    """Go struct (``package.Name``) → JSON field name → (patchStrategy, patchMergeKey)."""
    gen = _protobuf_generator()
    by_repo: dict[str, set[str]] = {}
    for package in packages:
        repo, directory = _location(package)
        by_repo.setdefault(repo, set()).add(directory)
    out: dict[str, dict[str, tuple]] = {}
    for mirror, upstream in gen.REPOS.items():
        if upstream not in by_repo:
            continue
        repo = mirrors / mirror / "repo"
        if not repo.is_dir():
            raise FileNotFoundError(repo)
        ref = sources[upstream]
        for path in gen.git(repo, "ls-tree", "-r", "--name-only", ref).split():
            directory, _, name = path.rpartition("/")
            if (
                directory not in by_repo[upstream]
                or not name.endswith(".go")
                or name.endswith(("_test.go", ".pb.go"))
                or name.startswith("zz_generated")
            ):
                continue
            package = "k8s.io." + ".".join([upstream.split("/")[1].replace("-", "_"), *directory.split("/")])
            _parse_go(gen, gen.git(repo, "show", f"{ref}:{path}"), package, out)
    return out


def _parse_go(gen, text: str, package: str, out: dict[str, dict[str, tuple]]) -> None:  # type: ignore[no-untyped-def]
    current: dict[str, tuple] | None = None
    for line in text.splitlines():
        if m := gen._STRUCT.match(line):
            current = out.setdefault(f"{package}.{m.group(1)}", {})
        elif line.startswith("}"):
            current = None
        elif current is not None and (m := gen._GO_FIELD.match(line)):
            tags = dict(gen._TAG.findall(m.group(3)))
            json_name = tags.get("json", "").split(",")[0]
            if json_name and "patchStrategy" in tags:
                current[json_name] = (tags["patchStrategy"], tags.get("patchMergeKey") or None)


def generate(mirrors: Path) -> dict:
    protobuf = json.loads(PROTOBUF.read_text())
    messages = protobuf["messages"]
    tags = read_tags(mirrors, protobuf["sources"], {m.rsplit(".", 1)[0] for m in messages})

    def walk(message: str, prefix: str, stack: tuple[str, ...], out: dict[str, list]) -> None:
        for name, type_, label, mode in messages[message]["fields"].values():
            nested = type_ in messages and type_ not in stack and not messages[type_].get("slice")
            if mode == "inline":
                walk(type_, prefix, (*stack, type_), out)
                continue
            path = f"{prefix}.{name}" if prefix else name
            if label == "map":
                continue
            if label == "repeated":
                strategy, key = tags.get(message, {}).get(name, ("", None))
                if "merge" not in strategy.split(","):
                    continue  # replaced wholesale: nothing inside it merges
                out[path] = ["merge", key]
                path += "[]"
            if nested:
                walk(type_, path, (*stack, type_), out)

    kinds: dict[str, dict[str, list]] = {}
    for kind, message in protobuf["kinds"].items():
        keys: dict[str, list] = {}
        walk(message, "", (message,), keys)
        kinds[kind] = dict(sorted(keys.items()))
    return {
        "generator": "hack/gen-strategic-merge-catalog.py",
        "sources": protobuf["sources"],
        "kinds": kinds,
    }


def render(catalog: dict) -> str:
    """The committed file's text (the protobuf catalog's format)."""
    return str(_protobuf_generator().render(catalog))


def main() -> int:
    return _protobuf_generator().run("gen-strategic-merge-catalog", __doc__, generate, OUT)


if __name__ == "__main__":
    sys.exit(main())
