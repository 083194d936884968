"""What the workload kinds share: their pod template's defaults and the validation of replicas,
selector and template (``pkg/apis/apps/validation``, ``pkg/apis/batch/validation``)."""

from __future__ import annotations

from typing import Any

from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.machinery.jsonvalues import as_dict, is_int
from framework.apiserver.registry.core.podspec import default_pod_spec
from framework.apiserver.registry.core.podspec_validation import validate_pod_spec
from framework.meta import field
from framework.meta.labels import label_selector_as_selector, validate_label_selector
from framework.meta.object import get_labels


def default_template(template: Any) -> None:
    """The pod template's defaults (``SetDefaults_PodSpec`` and the containers'), as every workload's."""
    if isinstance(template, dict) and isinstance(template.get("spec"), dict):
        default_pod_spec(template["spec"])


def nonnegative(spec: dict, path: str, *keys: str) -> list[FieldError]:
    """``ValidateNonnegativeField`` for each of ``keys`` that is set."""
    errs: list[FieldError] = []
    for key in keys:
        value = spec.get(key)
        if value is not None and (not is_int(value) or value < 0):
            errs.append(field.invalid(f"{path}.{key}", value, "must be greater than or equal to 0"))
    return errs


def validate_selector_and_template(
    spec: dict, path: str, restart_policies: tuple[str, ...], empty_word: str = "deployment"
) -> list[FieldError]:
    """The selector is required, non-empty and valid, it selects the template's labels, the template
    has containers, and its restart policy is one the kind accepts (``ValidateReplicaSetSpec``,
    ``ValidateStatefulSetSpec``, ``ValidateDaemonSetSpec``; upstream's empty-selector text says
    "deployment" for all of them)."""
    errs: list[FieldError] = []
    template = as_dict(spec.get("template"))
    selector = spec.get("selector")
    if selector is None:
        errs.append(field.required(f"{path}.selector"))
    elif not isinstance(selector, dict) or not (
        selector.get("matchLabels") or selector.get("matchExpressions")
    ):
        errs.append(
            field.invalid(f"{path}.selector", selector, f"empty selector is invalid for {empty_word}")
        )
    else:
        selector_errs = list(validate_label_selector(selector, f"{path}.selector"))
        errs += selector_errs
        try:
            matches = label_selector_as_selector(selector).matches(get_labels(template))
        except ValueError:
            matches = True  # reported above
        if not matches and not selector_errs:
            errs.append(
                field.invalid(
                    f"{path}.template.metadata.labels",
                    get_labels(template),
                    "`selector` does not match template `labels`",
                )
            )
    errs += validate_template_spec(template, f"{path}.template", restart_policies)
    return errs


def validate_template_spec(template: dict, path: str, restart_policies: tuple[str, ...]) -> list[FieldError]:
    """The template's pod spec (``validate_pod_spec``) with the restart policies the kind allows."""
    return validate_pod_spec(template.get("spec"), f"{path}.spec", restart_policies)


def immutable(new: Any, old: Any, path: str) -> list[FieldError]:
    """``ValidateImmutableField``."""
    return [] if new == old else [field.invalid(path, new, "field is immutable")]
