"""Fixtures of the Project controller tests: :class:`~project_harness.Env` environments, closed after
the test (helpers in ``project_harness.py``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gcm.controllers.project.project_harness import Env, make_config


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    """An :class:`Env` with the default configuration."""
    e = Env(tmp_path)
    try:
        yield e
    finally:
        e.close()


@pytest.fixture
def ext_env(tmp_path: Path) -> Iterator[Env]:
    """An :class:`Env` with extension roles on (and manifests/extension-roles granted)."""
    e = Env(tmp_path, make_config(extensionRoles=True))
    try:
        yield e
    finally:
        e.close()


@pytest.fixture
def make_env(tmp_path: Path) -> Iterator[Callable[..., Env]]:
    """Makes :class:`Env` environments (each in its own directory), all closed after the test."""
    envs: list[Env] = []

    def make(cfg: Any = None, start: bool = True, **kw: Any) -> Env:
        directory = tmp_path / f"env{len(envs)}"
        directory.mkdir()
        e = Env(directory, cfg, start, **kw)
        envs.append(e)
        return e

    try:
        yield make
    finally:
        for e in envs:
            e.close()
