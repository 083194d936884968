#!/usr/bin/env python3
"""Generate framework/types/*.py: ``TypedDict`` views of every built-in kind of the client's release.

Source: the test API server's catalog (``framework/apiserver/catalog/types.json`` for the fields and
their types, ``descriptions.json`` for the documentation, ``resources.json`` for which group-version
serves which kind), which ``hack/gen-builtin-types.py`` derives from the ``kubernetes`` client's models;
which fields are required (the OpenAPI ``required`` lists) is read from the same models.

One module per group-version (``core_v1``, ``apps_v1``, ``batch_v1``, ..., and ``meta_v1`` for
apimachinery's ObjectMeta, LabelSelector, Condition, ...). A model is written in the group-version of
the served kind that reaches it through the fewest fields (PodTemplateSpec: core/v1's PodTemplate, not
apps/v1's Deployment), each class named after its Go type. Field documentation is trimmed to its first
sentences (at most ``_DOC_LIMIT`` characters) to keep the package small; the full text stays in the
catalog for ``kubectl explain`` on built-in kinds.

Run: ``.venv/bin/python hack/gen-types.py`` (``--check`` exits 1 if a file is stale).
"""

from __future__ import annotations

import json
import keyword
import re
import sys
from collections import deque
from pathlib import Path

import kubernetes.client as client

ROOT = Path(__file__).resolve().parent.parent
CATALOG = ROOT / "framework" / "apiserver" / "catalog"
OUT = ROOT / "framework" / "types"
MARKERS = ROOT / "hack" / "k8s-markers.json"  # hack/gen-k8s-markers.py: the Go types' own markers
_DOC_LIMIT = 200

# apimachinery's meta/v1 types (k8s.io/apimachinery/pkg/apis/meta/v1), by the client's model name.
META_MODELS = {
    "V1ObjectMeta",
    "V1ListMeta",
    "V1LabelSelector",
    "V1LabelSelectorRequirement",
    "V1OwnerReference",
    "V1ManagedFieldsEntry",
    "V1Condition",
    "V1Status",
    "V1StatusDetails",
    "V1StatusCause",
    "V1DeleteOptions",
    "V1Preconditions",
    "V1FieldSelectorRequirement",
}
# Known types as controller-gen writes them (pkg/crd/known_types.go): their schema, not their fields.
KNOWN_SCHEMAS = {"V1ObjectMeta": {"type": "object"}}
_SCALARS = {
    "string": "str",
    "int32": "Int32",
    "int64": "Int64",
    "float64": "float",
    "bool": "bool",
    "bytes": "meta_v1.Bytes",
    "time": "meta_v1.Time",
    "intstr": "IntOrString",
    "quantity": "Quantity",
    "any": "JSON",
}


def module_name(group: str, version: str) -> str:
    """``apps``/``v1`` → ``apps_v1``; ``rbac.authorization.k8s.io`` → ``rbac_v1``; core → ``core_v1``."""
    return f"{(group.split('.')[0] if group else 'core').replace('-', '_')}_{version}"


def _version_of(model: str) -> str | None:
    m = re.match(r"^(?:[A-Z][a-z]+)*?V(\d+(?:(?:alpha|beta)\d+)?)(?=[A-Z])", model)
    return "v" + m.group(1) if m else None


def _refs(t: str) -> list[str]:
    return re.findall(r"#(\w+)", t)


def assign_modules(types: dict, resources: list) -> dict[str, str]:
    """Each model's module: meta_v1 for apimachinery's, else the group-version of the served kind (or
    subresource) that reaches it through the fewest fields, core first, then by group name."""
    roots: list[tuple[str, str, str]] = []  # (group, version, model)
    for e in resources:
        if e.get("model"):
            roots.append((e["group"], e["version"], e["model"]))
        for s in e.get("subresources", ()):
            if s.get("model"):
                roots.append((s.get("group", e["group"]), s.get("version", e["version"]), s["model"]))
    best: dict[str, tuple[bool, int, int, str, str]] = {}
    for group, version, model in sorted(set(roots)):
        depth = {model: 0}
        queue = deque([model])
        while queue:
            name = queue.popleft()
            for t in types[name]["fields"].values():
                for ref in _refs(t):
                    if ref in types and ref not in depth:
                        depth[ref] = depth[name] + 1
                        queue.append(ref)
        for name, d in depth.items():
            # a model of another version (a v1alpha3 type inside a v1beta1 one) goes elsewhere if it can
            key = (_version_of(name) not in (version, None), d, 0 if not group else 1, group, version)
            if name not in best or key < best[name]:
                best[name] = key
    out = {}
    for name in types:
        if name in META_MODELS:
            out[name] = "meta_v1"
        elif name in best:
            group, version = best[name][3:]
            out[name] = module_name(group, version)
        else:
            raise SystemExit(f"gen-types: no group-version serves {name}")
    return out


_QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity"
_INTSTR = "k8s.io.apimachinery.pkg.util.intstr.IntOrString"


def proto_fields(messages: dict, message: str) -> dict[str, tuple[str, str]]:
    """A protobuf message's fields by JSON name, ``(type, repetition)``, inlined structs flattened."""
    out: dict[str, tuple[str, str]] = {}
    for name, ptype, rep, mode in messages.get(message, {}).get("fields", {}).values():
        if mode == "inline":
            out.update(proto_fields(messages, ptype))
        else:
            out[name] = (ptype, rep)
    return out


def link_messages(types: dict, resources: list, proto: dict) -> dict[str, str]:
    """Each client model's protobuf message (the Go struct), walked from the served kinds: the Go
    integer widths and the Quantity/IntOrString fields are read from there, as the client's models do
    not say them."""
    messages = proto["messages"]
    out: dict[str, str] = {}

    def link(model: str, message: str) -> None:
        if model in out or model not in types or message not in messages:
            return
        out[model] = message
        pfields = proto_fields(messages, message)
        for key, t in types[model]["fields"].items():
            refs = _refs(t)
            if refs and key in pfields:
                link(refs[0], pfields[key][0])

    for e in resources:
        api_version = f"{e['group']}/{e['version']}" if e["group"] else e["version"]
        message = proto["kinds"].get(f"{api_version} {e['kind']}")
        if e.get("model") and message:
            link(e["model"], message)
    return out


def class_name(model: str, types: dict) -> str:
    return str(types[model]["go"]).rpartition(".")[2]


def trim(doc: str) -> str:
    """The first sentences of a description, at most ``_DOC_LIMIT`` characters."""
    doc = " ".join(doc.split())
    if len(doc) <= _DOC_LIMIT:
        return doc
    cut = doc[:_DOC_LIMIT]
    end = max(cut.rfind(". "), cut.rfind(".\n"))
    if end >= 40:
        return cut[: end + 1]
    return cut[: cut.rfind(" ")].rstrip(",;:") + "…"


def py_literal(value: object) -> str:
    """A JSON value as Python source, in ruff's quoting (a raw string for a backslash)."""
    if isinstance(value, bool) or value is None:
        return repr(value)
    if isinstance(value, str) and "\\" in value and '"' not in value:
        return f'r"{value}"'
    if isinstance(value, list):
        return f"[{', '.join(py_literal(v) for v in value)}]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{py_literal(k)}: {py_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def docstring(text: str, indent: str) -> str:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    return f'{indent}"""{body}"""\n'


class Writer:
    def __init__(
        self, types: dict, docs: dict, modules: dict[str, str], proto: dict, links: dict, markers: dict
    ) -> None:
        self.markers = markers
        self.types = types
        self.docs = docs
        self.modules = modules
        self.messages = proto["messages"]
        self.links = links

    def go_type(self, model: str, key: str) -> str | None:
        """The protobuf (Go) type of a model's field, if the model is linked to its message."""
        message = self.links.get(model)
        found = proto_fields(self.messages, message).get(key) if message else None
        return found[0] if found else None

    def go_markers(self, message: str | None, key: str) -> dict:
        """The Go markers of a message's field (``""``: of the type), through inlined structs."""
        if message is None:
            return {}
        own = self.markers.get(message, {})
        if key == "":  # a type's markers, and those of the structs it inlines (controller-gen's allOf)
            merged: dict = {}
            for _name, ptype, _rep, mode in self.messages.get(message, {}).get("fields", {}).values():
                if mode == "inline":
                    merged.update(self.go_markers(ptype, ""))
            return {**merged, **own.get("", {})}
        if key in own:
            return dict(own[key])
        for _name, ptype, _rep, mode in self.messages.get(message, {}).get("fields", {}).values():
            if mode == "inline" and key in proto_fields(self.messages, ptype):
                return self.go_markers(ptype, key)
        return {}

    def marker_exprs(self, markers: dict, names: set[str]) -> list[str]:
        """``Annotated`` metadata for a field's (or a type's) Go markers, in controller-gen's terms."""
        exprs = []
        for key, marker, arg in (
            ("listType", "ListType", lambda v: json.dumps(v)),
            ("listMapKey", "ListMapKeys", lambda v: ", ".join(json.dumps(k) for k in v)),
            ("mapType", "MapType", lambda v: json.dumps(v)),
            ("structType", "StructType", lambda v: json.dumps(v)),
            ("enum", "Enum", lambda v: ", ".join(json.dumps(k) for k in v)),
            ("minLength", "MinLength", str),
            ("maxLength", "MaxLength", str),
            ("pattern", "Pattern", py_literal),
            ("minimum", "Minimum", str),
            ("maximum", "Maximum", str),
            ("default", "Default", py_literal),
        ):
            if key in markers:
                names.add(marker)
                exprs.append(f"{marker}({arg(markers[key])})")
        return exprs

    def field_type(self, model: str, key: str) -> str:
        """The catalog's type of a field, with the Go struct's integer width and known types."""
        t = self.types[model]["fields"][key]
        go = self.go_type(model, key)
        prefix = re.match(r"^(\[\]|map:)*", t).group(0)  # type: ignore[union-attr]
        base = t[len(prefix) :]
        if go in ("int32", "int64") and base in ("int32", "int64"):
            base = go
        elif go == _QUANTITY and base in ("string", "quantity"):
            base = "quantity"
        elif go == _INTSTR and base in ("string", "intstr"):
            base = "intstr"
        return prefix + base

    def ref(self, model: str, here: str, imports: set[str]) -> str:
        name = class_name(model, self.types)
        module = self.modules[model]
        if module == here:
            return name
        imports.add(module)
        return f"{module}.{name}"

    def annotation(self, t: str, here: str, imports: set[str], names: set[str]) -> str:
        if t.startswith("#"):
            return self.ref(t[1:], here, imports)
        if t.startswith("[]"):
            return f"list[{self.annotation(t[2:], here, imports, names)}]"
        if t.startswith("map:"):
            if t[4:] == "any":
                names.add("RawExtension")
                return "meta_v1.RawExtension" if here != "meta_v1" else "RawExtension"
            return f"dict[str, {self.annotation(t[4:], here, imports, names)}]"
        py = _SCALARS[t]
        if py.startswith("meta_v1."):
            if here == "meta_v1":
                return py.partition(".")[2]
            imports.add("meta_v1")
        elif py not in ("str", "float", "bool"):
            names.add(py)
        return py

    def module(self, here: str, models: list[str]) -> str:
        imports: set[str] = set()
        names: set[str] = set()
        classes: list[str] = []
        for model in models:
            classes.append(self.klass(model, here, imports, names))
        gv = here.rpartition("_")
        header = [
            "# Code generated by hack/gen-types.py from framework/apiserver/catalog; DO NOT EDIT.\n",
            f'"""Typed views of the built-in ``{gv[0]}/{gv[2]}`` objects (static types; they stay dicts).\n',
            "\n",
            "``cast(T, obj)`` gives a dict read from the API server its type; a custom resource's fields\n",
            "may use these types, and ``framework.generate.crd`` inlines their schema as controller-gen\n",
            "does.\n",
            '"""\n\n',
            "from __future__ import annotations\n\n",
        ]
        text = "".join(classes)
        typing_names = {n for n in ("Annotated", "NotRequired") if f"{n}[" in text}
        if here == "meta_v1":
            typing_names |= {"Annotated", "Any", "TypeAlias"}
        lines = list(header)
        lines.append(f"from typing import {', '.join(sorted(typing_names | {'TypedDict'}))}\n\n")
        marker_names = set(names) - {"RawExtension"}
        if here == "meta_v1":
            marker_names |= {"Format", "PreserveUnknownFields"}
        if marker_names:
            ordered = sorted(marker_names, key=lambda n: (not n.isupper(), not n[0].isupper(), n))  # isort's
            lines.append(f"from framework.markers.validation import {', '.join(ordered)}\n")
        if imports - {here}:
            lines.append(f"from framework.types import {', '.join(sorted(imports - {here}))}\n")
        lines.append("\n" if here == "meta_v1" else "\n\n")
        if here == "meta_v1":
            lines.append(META_ALIASES)
        return "".join(lines) + "\n\n".join(classes)

    def klass(self, model: str, here: str, imports: set[str], names: set[str]) -> str:
        name = class_name(model, self.types)
        cls = getattr(client, model)
        required = {
            (info.serialization_alias or info.alias or field)
            for field, info in cls.model_fields.items()
            if info.is_required()
        }
        docs = self.docs.get(model, {})
        fields = self.types[model]["fields"]
        plain: list[str] = []
        odd: list[str] = []  # JSON names that are not Python identifiers: a functional base TypedDict
        message = self.links.get(model)
        for key in sorted(fields):
            ann = self.annotation(self.field_type(model, key), here, imports, names)
            exprs = self.marker_exprs(self.go_markers(message, key), names)
            if exprs:
                ann = f"Annotated[{ann}, {', '.join(exprs)}]"
            if key not in required:
                ann = f"NotRequired[{ann}]"
            doc = docs.get(key) or self.go_markers(message, key).get("doc")  # Go's where the client has none
            if key.isidentifier() and not keyword.iskeyword(key):
                plain.append(f"    {key}: {ann}\n" + (docstring(trim(doc), "    ") if doc else ""))
            else:
                odd.append(f"{json.dumps(key)}: {json.dumps(ann)}")
        out = ""
        base = "TypedDict"
        if odd:
            base = f"_{name}Fields"
            args = f'"{base}", {{{", ".join(odd)}}}'
            line = f"{base} = TypedDict({args})"
            out += (line if len(line) <= 110 else f"{base} = TypedDict(\n    {args}\n)") + "\n\n\n"
        type_exprs = self.marker_exprs(self.go_markers(message, ""), names)
        if model in KNOWN_SCHEMAS:
            names.add("KnownSchema")
            type_exprs = [f"KnownSchema({json.dumps(KNOWN_SCHEMAS[model])})"]
        if type_exprs:
            names.add("type_markers")
            out += f"@type_markers({', '.join(type_exprs)})\n"
        out += f"class {name}({base}):\n"
        doc = docs.get("")
        body = docstring(trim(doc), "    ") if doc else ""
        if plain:
            body += ("\n" if body else "") + "".join(plain)
        return out + (body or "    pass\n")


META_ALIASES = '''Time: TypeAlias = Annotated[str, Format("date-time")]
"""``metav1.Time``: an RFC 3339 date and time (``2006-01-02T15:04:05Z``); see ``framework.meta.time``."""

MicroTime: TypeAlias = Annotated[str, Format("date-time")]
"""``metav1.MicroTime``: an RFC 3339 date and time with microseconds."""

Duration: TypeAlias = str
"""``metav1.Duration``: a Go duration string (``"1h30m"``)."""

Bytes: TypeAlias = Annotated[str, Format("byte")]
"""``[]byte``: base64-encoded in JSON."""

RawExtension: TypeAlias = Annotated[dict[str, Any], PreserveUnknownFields()]
"""``runtime.RawExtension``: an embedded object of any kind, kept as sent."""


'''


def generate() -> dict[Path, str]:
    types = json.loads((CATALOG / "types.json").read_text())
    docs = json.loads((CATALOG / "descriptions.json").read_text())
    resources = json.loads((CATALOG / "resources.json").read_text())
    modules = assign_modules(types, resources)
    by_module: dict[str, list[str]] = {}
    for model, module in sorted(modules.items()):
        by_module.setdefault(module, []).append(model)
    proto = json.loads((CATALOG / "protobuf.json").read_text())
    markers = json.loads(MARKERS.read_text())["messages"]
    writer = Writer(types, docs, modules, proto, link_messages(types, resources, proto), markers)
    out: dict[Path, str] = {}
    for module, models in sorted(by_module.items()):
        seen: dict[str, str] = {}
        for model in models:
            name = class_name(model, types)
            if name in seen:
                raise SystemExit(f"gen-types: {seen[name]} and {model} are both {module}.{name}")
            seen[name] = model
        models.sort(key=lambda m: class_name(m, types))
        out[OUT / f"{module}.py"] = writer.module(module, models)
    out[OUT / "__init__.py"] = INIT.format(modules="\n".join(f"- ``{m}``" for m in sorted(by_module)))
    return out


INIT = '''# Code generated by hack/gen-types.py from framework/apiserver/catalog; DO NOT EDIT.
"""Typed views (``TypedDict``) of every built-in kind of the client's Kubernetes release.

Objects stay plain JSON dicts; these are static types for mypy and editors, at no run-time cost::

    from typing import cast
    from framework.types import apps_v1

    deployment = cast(apps_v1.Deployment, obj)
    replicas = deployment["spec"].get("replicas", 1)  # mypy knows: int

One module per group-version, named ``<group's first label>_<version>`` (``core_v1``, ``apps_v1``,
``rbac_v1``, ...); apimachinery's ObjectMeta, LabelSelector, Condition, ... and the aliases ``Time``,
``Duration``, ``RawExtension`` are in ``meta_v1``. Importing ``framework`` does not import these.

{modules}
"""
'''


def main() -> int:
    outputs = generate()
    if "--check" in sys.argv:
        stale = [p for p, text in outputs.items() if not p.exists() or p.read_text() != text]
        stale += [p for p in OUT.glob("*.py") if p not in outputs]
        for p in stale:
            print(f"stale: {p.relative_to(ROOT)}")  # a build script's lines of output
        return 1 if stale else 0
    OUT.mkdir(exist_ok=True)
    for p in OUT.glob("*.py"):
        if p not in outputs:
            p.unlink()
    for path, text in outputs.items():
        path.write_text(text)
    print(f"wrote {len(outputs)} files under {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
