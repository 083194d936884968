"""Installing CRDs from manifests (``APIServer.install_crds``): create or update each, then wait until the
CRD controller has established them."""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from framework.apiserver.controllers.manager import CRD_STORAGE
from framework.apiserver.registry.rest.objects import deep_copy

if TYPE_CHECKING:
    from framework.apiserver.server import APIServer


def install_crds(
    server: APIServer, source: str | os.PathLike | Iterable[dict], timeout: float = 10.0
) -> list[str]:
    """Create or update the CRDs of a YAML directory or file (or dicts); wait until Established."""
    docs = list(load_docs(source)) if isinstance(source, str | os.PathLike) else list(source)
    crds = [d for d in docs if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"]
    rt = server.registry.get("apiextensions.k8s.io", "v1", "customresourcedefinitions")
    assert rt is not None

    def apply(crd: dict) -> None:
        crd = deep_copy(crd)  # storage keeps what it is given: never the caller's dict
        name = crd.get("metadata", {}).get("name", "")
        existing = server.storage.get(CRD_STORAGE, ("", name))
        if existing is None:
            server.api.create(rt, None, crd)
        else:
            body = {
                **crd,
                "metadata": {
                    **crd.get("metadata", {}),
                    "resourceVersion": existing["metadata"]["resourceVersion"],
                },
            }
            server.api.update(rt, None, name, body)

    names = []
    for crd in crds:
        server.call(functools.partial(apply, crd))
        names.append(crd["metadata"]["name"])

    def established(crd_name: str) -> bool:
        return bool(server.registry.custom_types(crd_name))

    deadline = time.monotonic() + timeout
    for name in names:
        while not server.call(functools.partial(established, name)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} was not established within {timeout}s")
            time.sleep(0.01)
    return names


def load_docs(source: str | os.PathLike) -> Iterable[Any]:
    """The YAML/JSON documents of a file, or of every such file below a directory (sorted)."""
    path = Path(source)
    files = (
        sorted(p for p in path.rglob("*") if p.suffix in (".yaml", ".yml", ".json"))
        if path.is_dir()
        else [path]
    )
    for f in files:
        yield from yaml.safe_load_all(f.read_text())
