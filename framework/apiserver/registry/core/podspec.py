"""A pod spec's defaults and the template hooks, shared by Pods and every kind with a pod template
(``pkg/apis/core/v1/defaults.go`` ``SetDefaults_PodSpec``); its validation is ``podspec_validation``."""

from __future__ import annotations

import orjson

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict
from framework.apiserver.registry.core.podspec_validation import validate_pod_spec
from framework.apiserver.registry.strategy import Hook


def default_pod_spec(pod: dict) -> None:
    """core/v1 ``SetDefaults_PodSpec`` and its containers', ports', probes' and volumes' defaults, as a
    pod template in a workload gets them (the Pod-only defaults, e.g. ``enableServiceLinks``, excluded)."""
    for key, default in (
        ("restartPolicy", "Always"),
        ("dnsPolicy", "ClusterFirst"),
        ("schedulerName", "default-scheduler"),
    ):
        if not pod.get(key):
            pod[key] = default
    if pod.get("terminationGracePeriodSeconds") is None:
        pod["terminationGracePeriodSeconds"] = 30
    if pod.get("securityContext") is None:
        pod["securityContext"] = {}
    for key in ("initContainers", "containers"):
        for c in pod.get(key) or []:
            if isinstance(c, dict):
                _default_container(c)
    for volume in pod.get("volumes") or []:
        if not isinstance(volume, dict):
            continue
        for source in ("secret", "configMap", "downwardAPI", "projected"):
            if isinstance(volume.get(source), dict) and volume[source].get("defaultMode") is None:
                volume[source]["defaultMode"] = 420


def _default_container(c: dict) -> None:
    if not c.get("imagePullPolicy"):
        image = c.get("image") or ""
        tag = image.rsplit("/", 1)[-1]
        latest = "@" not in tag and (":" not in tag or tag.endswith(":latest"))
        c["imagePullPolicy"] = "Always" if latest else "IfNotPresent"
    c.setdefault("terminationMessagePath", "/dev/termination-log")
    c.setdefault("terminationMessagePolicy", "File")
    if c.get("resources") is None:
        c["resources"] = {}
    for port in c.get("ports") or []:
        if isinstance(port, dict) and not port.get("protocol"):
            port["protocol"] = "TCP"
    for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
        probe = c.get(probe_key)
        if not isinstance(probe, dict):
            continue
        for key, default in (
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ):
            if not probe.get(key):
                probe[key] = default
        http = probe.get("httpGet")
        if isinstance(http, dict):
            http.setdefault("path", "/")
            http.setdefault("scheme", "HTTP")


def template_normalize(status: dict, spec_defaults: dict) -> Hook:
    """Workload kinds with a pod template: spec defaults, the template's, and status on create."""

    def hook(obj: dict, old: dict | None) -> None:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            for key, default in spec_defaults.items():
                if spec.get(key) is None:
                    spec[key] = orjson.loads(orjson.dumps(default))
            template = spec.get("template")
            if isinstance(template, dict) and isinstance(template.get("spec"), dict):
                default_pod_spec(template["spec"])
        if old is None:
            obj["status"] = orjson.loads(orjson.dumps(status))

    return hook


def template_validate(obj: dict, old: dict | None) -> list[FieldError]:
    """ReplicationController and DaemonSet templates: a valid pod spec restarting Always."""
    template = as_dict(as_dict(obj.get("spec")).get("template"))
    return validate_pod_spec(template.get("spec"), "spec.template.spec", ("Always",))
