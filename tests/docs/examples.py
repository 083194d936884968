"""The runnable examples of ``docs/examples``, loaded for the tests that run them (imported as
``tests.docs.examples``; not collected).

The examples are scripts a reader runs (``python docs/examples/labeler.py``), not a package, so they
are loaded from their files; each load executes the file anew (no state is shared between tests).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

EXAMPLES = Path(__file__).resolve().parents[2] / "docs" / "examples"
"""The folder of the examples and their manifests."""


def load_example(name: str) -> ModuleType:
    """A fresh module of ``docs/examples/<name>.py``."""
    spec = importlib.util.spec_from_file_location(f"{name}_example", EXAMPLES / f"{name}.py")
    if spec is None or spec.loader is None:
        raise FileNotFoundError(EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
