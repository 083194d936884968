"""Reading a kubeconfig a Secret carries without trusting it, and Gardener's allow-list for its users.

:func:`load_kubeconfig` turns the bytes into plain data and nothing else: it never runs, opens or reads
anything the kubeconfig names (no ``exec`` command, no certificate or token file, no auth provider).
The YAML goes through libyaml's safe loader (``yaml.CSafeLoader`` when PyYAML was built with it), after
a pass over the parser's events that refuses, before anything is built, more than
:data:`MAX_ALIASES` aliases, nesting deeper than :data:`MAX_DEPTH` and more than one document (and more
than :data:`MAX_BYTES` is not read at all): an alias bomb or a deeply nested document costs a bounded
scan, never memory or the recursion limit. Timestamps
stay strings, as in client-go's decoding (sigs.k8s.io/yaml hands untyped values to encoding/json).

What client-go's ``clientcmd.Load`` would refuse is refused as :class:`KubeconfigError` with a text in
its manner (``couldn't get version/kind; json parse error: ...``, ``json: cannot unmarshal string into
Go struct field ...``): a top level that is not a mapping, another ``apiVersion``/``kind`` than
``v1``/``Config``, and values of the wrong type where the allow-list looks (``users[].user``) or in the
top-level lists. Empty bytes and an empty document are an empty kubeconfig, as there.

:func:`validate_auth_infos` is gardener/gardener ``pkg/client/kubernetes/client.go``
``ValidateConfigWithAllowList``: in a user's auth info only ``client-certificate-data``,
``client-key-data``, ``token``, ``username`` and ``password`` may be set; a client certificate or key
file, a token file, impersonation (``act-as``, ``act-as-groups``), an auth provider with config or an exec
plugin is refused with Gardener's error texts. Gardener ranges over a Go map of users (the last entry
of a name wins, the order is random); gcm checks every entry of ``users`` in document order, so a
consumer that picks another entry of a duplicated name is covered too.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import yaml

from framework.meta.strconv import quote

__all__ = [
    "ALLOWED_FIELDS",
    "MAX_ALIASES",
    "MAX_BYTES",
    "MAX_DEPTH",
    "KubeconfigError",
    "load_kubeconfig",
    "validate_auth_infos",
]

# The auth-info fields Gardener allows (ValidateConfigWithAllowList's list, in its order).
ALLOWED_FIELDS = ("client-certificate-data", "client-key-data", "token", "username", "password")
# The names Gardener's allow-list uses for the refused fields (extra allowed fields name these).
CLIENT_CERTIFICATE, CLIENT_KEY, TOKEN_FILE = "client-certificate", "client-key", "tokenFile"
IMPERSONATE, AUTH_PROVIDER, EXEC = "act-as", "auth-provider", "exec"

MAX_BYTES = 1024 * 1024  # a Secret holds at most 1 MiB (kube-apiserver's MaxSecretSize)
MAX_ALIASES = 64  # a kubeconfig has none or a few; a billion-laughs document needs many
MAX_DEPTH = 64  # a kubeconfig nests about 7 levels (users[].user.exec.env[].name)

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_GO_TYPES = {  # Go's name of a JSON value's type in encoding/json's UnmarshalTypeError
    str: "string",
    bool: "bool",
    int: "number",
    float: "number",
    list: "array",
    dict: "object",
}
# The Go struct the first decoding step reads apiVersion and kind into (runtime's json serializer).
_TYPE_META = (
    'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'
)


class KubeconfigError(ValueError):
    """The bytes are not a kubeconfig client-go would load; ``str()`` says why (one line)."""


class _KubeconfigLoader(_Loader):
    """The safe loader with timestamps kept as the strings they are."""


_KubeconfigLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def _yaml_problem(e: yaml.YAMLError) -> str:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    where = f"line {mark.line + 1}: " if mark is not None else ""
    return f"error converting YAML to JSON: yaml: {where}{problem}"


def _check_events(data: bytes) -> None:
    """One pass over the parser's events: documents, aliases and nesting within bounds."""
    depth = aliases = documents = 0
    try:
        for event in yaml.parse(data, Loader=_Loader):
            if isinstance(event, yaml.CollectionStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    raise KubeconfigError(f"the kubeconfig nests deeper than {MAX_DEPTH} levels")
            elif isinstance(event, yaml.CollectionEndEvent):
                depth -= 1
            elif isinstance(event, yaml.AliasEvent):
                aliases += 1
                if aliases > MAX_ALIASES:
                    raise KubeconfigError(f"the kubeconfig uses more than {MAX_ALIASES} YAML aliases")
            elif isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise KubeconfigError("the kubeconfig holds more than one YAML document")
    except yaml.YAMLError as e:
        raise KubeconfigError(_yaml_problem(e)) from None


def _go_type(value: Any) -> str:
    return next((name for tp, name in _GO_TYPES.items() if isinstance(value, tp)), type(value).__name__)


def _unmarshal_error(value: Any, where: str, go_type: str) -> KubeconfigError:
    return KubeconfigError(
        f"json: cannot unmarshal {_go_type(value)} into Go struct field {where} of type {go_type}"
    )


def load_kubeconfig(data: bytes) -> dict[str, Any]:
    """The kubeconfig in ``data`` as plain data (``{}`` for an empty one); raises KubeconfigError."""
    if len(data) > MAX_BYTES:  # only a caller other than the API server can send more
        raise KubeconfigError(f"the kubeconfig is larger than a Secret can be ({MAX_BYTES} bytes)")
    if not data.strip():
        return {}
    _check_events(data)
    try:
        doc = yaml.load(data, Loader=_KubeconfigLoader)
    except yaml.YAMLError as e:
        raise KubeconfigError(_yaml_problem(e)) from None
    except (RecursionError, MemoryError, ValueError) as e:  # bounded above; kept from the caller anyway
        raise KubeconfigError(f"error converting YAML to JSON: {type(e).__name__}") from None
    if doc is None:
        return {}
    if not isinstance(doc, dict):
        raise KubeconfigError(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal {_go_type(doc)} into "
            f"Go value of type {_TYPE_META}"
        )
    api_version, kind = doc.get("apiVersion") or "", doc.get("kind") or ""
    if not isinstance(api_version, str) or not isinstance(kind, str):
        bad = "apiVersion" if not isinstance(api_version, str) else "kind"
        raise KubeconfigError(
            f"couldn't get version/kind; json parse error: json: cannot unmarshal "
            f"{_go_type(doc[bad])} into Go struct field .{bad} of type string"
        )
    if api_version not in ("", "v1") or kind not in ("", "Config"):
        raise KubeconfigError(
            f'no kind "{kind or "Config"}" is registered for version "{api_version or "v1"}" in scheme '
            '"k8s.io/client-go/tools/clientcmd/api/latest/latest.go"'
        )
    _check_shape(doc)
    return doc


_NAMED_LISTS = {"clusters": "NamedCluster", "contexts": "NamedContext", "users": "NamedAuthInfo"}
_STRING_FIELDS = (
    "client-certificate",
    "client-certificate-data",
    "client-key",
    "client-key-data",
    "token",
    "tokenFile",
    "act-as",
    "act-as-uid",
    "username",
    "password",
)


def _check_shape(doc: dict[str, Any]) -> None:
    """The types client-go's decoding would refuse, where the allow-list reads and at the top."""
    for key, named in _NAMED_LISTS.items():
        items = doc.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise _unmarshal_error(items, f"Config.{key}", f"[]v1.{named}")
        for item in items:
            if item is not None and not isinstance(item, dict):
                raise _unmarshal_error(item, f"Config.{key}", f"v1.{named}")
            name = (item or {}).get("name")
            if name is not None and not isinstance(name, str):
                raise _unmarshal_error(name, f"Config.{key}.name", "string")
    for key in ("current-context",):
        if doc.get(key) is not None and not isinstance(doc[key], str):
            raise _unmarshal_error(doc[key], f"Config.{key}", "string")
    for entry in doc.get("users") or ():
        user = (entry or {}).get("user")
        if user is None:
            continue
        where = "Config.users.user"
        if not isinstance(user, dict):
            raise _unmarshal_error(user, where, "v1.AuthInfo")
        for key in _STRING_FIELDS:
            if user.get(key) is not None and not isinstance(user[key], str):
                raise _unmarshal_error(user[key], f"{where}.{key}", "string")
        groups = user.get("act-as-groups")
        if groups is not None and (
            not isinstance(groups, list) or any(not isinstance(g, str) for g in groups)
        ):
            bad = (
                groups if not isinstance(groups, list) else next(g for g in groups if not isinstance(g, str))
            )
            raise _unmarshal_error(bad, f"{where}.act-as-groups", "[]string" if bad is groups else "string")
        provider = user.get("auth-provider")
        if provider is not None:
            if not isinstance(provider, dict):
                raise _unmarshal_error(provider, f"{where}.auth-provider", "api.AuthProviderConfig")
            config = provider.get("config")
            if config is not None and not isinstance(config, dict):
                raise _unmarshal_error(config, f"{where}.auth-provider.config", "map[string]string")
        exec_config = user.get("exec")
        if exec_config is not None and not isinstance(exec_config, dict):
            raise _unmarshal_error(exec_config, f"{where}.exec", "api.ExecConfig")


def _fields_text(valid: Sequence[str]) -> str:
    return "[" + " ".join(valid) + "]"  # Go's %+v of a []string


def validate_auth_infos(config: dict[str, Any], allowed: Iterable[str] = ()) -> str | None:
    """Gardener's ``ValidateConfigWithAllowList`` over a :func:`load_kubeconfig` result: the refusal
    text for the first user (document order) with a field outside the allow-list, else None.
    ``allowed`` adds fields by Gardener's names (``tokenFile``, ``exec``, ...)."""
    valid = [*ALLOWED_FIELDS, *allowed]
    fields = _fields_text(valid)
    for entry in config.get("users") or ():
        entry = entry or {}
        name = entry.get("name")
        user = quote(name if isinstance(name, str) else "")
        info = entry.get("user") or {}
        provider = info.get("auth-provider") or {}
        refused = None
        if info.get("client-certificate") and CLIENT_CERTIFICATE not in valid:
            refused = "client certificate files are"
        elif info.get("client-key") and CLIENT_KEY not in valid:
            refused = "client key files are"
        elif info.get("tokenFile") and TOKEN_FILE not in valid:
            refused = "token files are"
        elif (info.get("act-as") or info.get("act-as-groups")) and IMPERSONATE not in valid:
            return f"impersonation is not supported, these are the valid fields: {fields}"  # no user named
        elif provider.get("config") and AUTH_PROVIDER not in valid:
            refused = "auth provider configurations are"
        elif info.get("exec") is not None and EXEC not in valid:
            refused = "exec configurations are"
        if refused:
            return f"{refused} not supported (user {user}), these are the valid fields: {fields}"
    return None
