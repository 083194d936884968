"""The ``PROJECT`` file and how the scaffold commands change a project's files.

``PROJECT`` (YAML, as kubebuilder's) holds the project's settings, its resources and, beyond
kubebuilder, the files the commands wrote with the SHA-256 of what they wrote. A command first plans
every change (:class:`Changes`), refuses if a file it would write exists and is not listed, or was
changed since (your edits are never overwritten), or if a marker to extend is missing, and only then
writes, so a refused command leaves the project as it was.
"""

from __future__ import annotations

import ast
import hashlib
import os
import textwrap
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from framework.generate.project import ProjectError

__all__ = ["LINE_LENGTH", "PROJECT_FILE", "Changes", "ProjectFile", "import_block", "marker"]

PROJECT_FILE = "PROJECT"
_HEADER = (
    "# Written by `python -m framework` (init, create api, create webhook): the project's resources\n"
    "# and the files the commands wrote (SHA-256 of what they wrote). A command never overwrites a file\n"
    "# that is not listed here, or that changed since.\n"
)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def marker(name: str) -> str:
    """The comment a command extends a file at: ``# +framework:scaffold:<name>``."""
    return f"+framework:scaffold:{name}"


LINE_LENGTH = 110
"""The ``line-length`` of ruff in the projects ``init`` writes."""


def import_block(lines: list[str], indent: str = "") -> list[str]:
    """The import statements of ``lines`` as ruff's isort (I001) and ``ruff format`` write them: plain
    ``import`` statements first, then one ``from`` statement per module with its names sorted, each
    sorted by module name, a ``from`` statement longer than :data:`LINE_LENGTH` one name a line in
    parentheses. Lines that are not a block of imports are returned sorted, as they were."""
    try:
        tree = ast.parse(textwrap.dedent("".join(lines)))
    except SyntaxError:
        return sorted(lines)
    plain: set[str] = set()
    members: dict[str, set[str]] = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            members.setdefault(module, set()).update(
                f"{a.name} as {a.asname}" if a.asname else a.name for a in node.names
            )
        elif isinstance(node, ast.Import):
            plain.update(ast.unparse(ast.Import(names=[a])) for a in node.names)
        else:
            return sorted(lines)
    out = [f"{indent}{statement}\n" for statement in sorted(plain, key=lambda s: s.lower())]
    for module in sorted(members, key=str.lower):
        names = sorted(members[module], key=lambda n: (not n.isupper(), not n[:1].isupper(), n.lower()))
        one_line = f"{indent}from {module} import {', '.join(names)}"
        if len(one_line) <= LINE_LENGTH:
            out.append(one_line + "\n")
        else:
            out.append(f"{indent}from {module} import (\n")
            out.extend(f"{indent}    {n},\n" for n in names)
            out.append(f"{indent})\n")
    return out


@dataclass
class ProjectFile:
    """The parsed ``PROJECT`` file."""

    domain: str
    project_name: str
    package: str
    resources: list[dict[str, Any]] = field(default_factory=list)
    files: dict[str, str] = field(default_factory=dict)  # path -> SHA-256 of the text written

    @classmethod
    def read(cls, root: Path) -> ProjectFile:
        path = root / PROJECT_FILE
        try:
            data = yaml.safe_load(path.read_text())
        except FileNotFoundError:
            raise ProjectError(f"{path}: not found (run `python -m framework init` first)") from None
        except (OSError, yaml.YAMLError) as e:
            raise ProjectError(f"{path}: {' '.join(str(e).split())}") from None
        if not isinstance(data, dict) or not all(
            isinstance(data.get(k), str) for k in ("domain", "projectName", "package")
        ):
            raise ProjectError(f"{path}: not a PROJECT file of `python -m framework init`")
        return cls(
            domain=data["domain"],
            project_name=data["projectName"],
            package=data["package"],
            resources=list(data.get("resources") or []),
            files={str(k): str(v) for k, v in (data.get("files") or {}).items()}
            if isinstance(data.get("files"), dict)
            else {},
        )

    def render(self) -> str:
        doc = {
            "domain": self.domain,
            "layout": "framework.v1",
            "package": self.package,
            "projectName": self.project_name,
            "resources": self.resources,
            "files": dict(sorted(self.files.items())),
        }
        return _HEADER + yaml.safe_dump(doc, sort_keys=False, default_flow_style=False)

    def find(self, group: str, version: str, kind: str) -> dict[str, Any] | None:
        for r in self.resources:
            if (r.get("group"), r.get("version"), r.get("kind")) == (group, version, kind):
                return r
        return None


class Changes:
    """The files one command writes (new ones) and extends (at markers), checked before anything is
    written."""

    def __init__(self, root: Path, project: ProjectFile) -> None:
        self.root = root
        self.project = project
        self._new: dict[str, str] = {}
        self._inserts: list[tuple[str, str, str]] = []  # (path, marker name, line)

    def add(self, rel: str, text: str) -> None:
        """A file to write; refused if it exists and the project did not write it."""
        self._new[rel] = text

    def insert(self, rel: str, name: str, line: str) -> None:
        """``line`` before the ``# +framework:scaffold:<name>`` line of ``rel``, indented as it is; for a
        marker named ``imports``, into the import block right after it (:func:`import_block`)."""
        self._inserts.append((rel, name, line))

    def _extended(self, texts: dict[str, str]) -> dict[str, str]:
        out: dict[str, str] = {}
        for rel, name, line in self._inserts:
            text = out.get(rel) or texts.get(rel)
            if text is None:
                try:
                    text = (self.root / rel).read_text()
                except FileNotFoundError:
                    raise ProjectError(
                        f"{rel}: not found; this command extends it at `# {marker(name)}`"
                    ) from None
            lines = text.splitlines(keepends=True)
            at = next((i for i, s in enumerate(lines) if s.strip() == f"# {marker(name)}"), None)
            if at is None:
                raise ProjectError(
                    f"{rel}: the line `# {marker(name)}` is missing; this command adds its code there"
                )
            indent = lines[at][: len(lines[at]) - len(lines[at].lstrip())]
            new = f"{indent}{line}\n"
            if new in lines:
                pass
            elif name == "imports":
                end = at + 1
                while end < len(lines) and lines[end].strip():
                    end += 1
                lines[at + 1 : end] = import_block([*lines[at + 1 : end], new], indent)
            else:
                lines.insert(at, new)
            out[rel] = "".join(lines)
        return out

    def apply(self) -> list[str]:
        """Check, then write everything and the ``PROJECT`` file; the relative paths written."""
        for rel in sorted(self._new):
            path = self.root / rel
            if not path.exists():
                continue
            if rel not in self.project.files:
                raise ProjectError(
                    f"{rel}: exists and was not written by `python -m framework`; not overwriting it"
                )
            if _digest(path.read_text()) != self.project.files[rel]:
                raise ProjectError(f"{rel}: changed since `python -m framework` wrote it; not overwriting it")
        extended = self._extended(self._new)
        everything = {**self._new, **extended}
        for rel, text in everything.items():
            if rel in self._new or rel in self.project.files:
                self.project.files[rel] = _digest(text)
        everything[PROJECT_FILE] = self.project.render()
        for rel, text in everything.items():
            path = self.root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)
        return sorted(everything)
