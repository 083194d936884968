"""core/v1 ServiceAccount with its ``token`` subresource (``pkg/registry/core/serviceaccount``)."""

from __future__ import annotations

from framework.apiserver.encoding import decoding
from framework.apiserver.machinery.errors import FieldError
from framework.apiserver.registry import printing
from framework.apiserver.registry.strategy import ResourceType


def validate_service_account(obj: dict) -> list[FieldError]:
    """``ValidateServiceAccount``: upstream has no rules beyond metadata, so this is always empty.

    Kept so every served kind has a validator of the same shape.
    """
    del obj
    return []


def normalize_service_account(obj: dict) -> None:
    """Reduce ``secrets[]`` entries to their ``name`` like the ServiceAccount strategy does."""
    if isinstance(obj.get("secrets"), list):
        obj["secrets"] = [{"name": s["name"]} if s.get("name") else {} for s in obj["secrets"]]


def normalize(obj: dict, old: dict | None) -> None:
    normalize_service_account(obj)


# The body of the ``token`` subresource, an authentication.k8s.io/v1 TokenRequest.
TOKEN_REQUEST_NULLS = decoding.shape(decoding.strings("spec.audiences[]"))


PRINTER: printing.Printer = (
    [printing.NAME, printing.col("Secrets", "Secrets of the service account."), printing.AGE],
    lambda o, now: [printing.name(o), len(o.get("secrets") or []), printing.age(o, now)],
)


STRATEGIES = [
    ResourceType(
        "",
        "v1",
        "serviceaccounts",
        "ServiceAccount",
        True,
        "serviceaccount",
        null_shape=decoding.shape(decoding.structs("secrets[]", "imagePullSecrets[]")),
        subresource_null_shapes={"token": TOKEN_REQUEST_NULLS},
        short_names=("sa",),
        subresources=("token",),
        returns_deleted_object=True,
        normalize=normalize,
        validate=lambda o, old: validate_service_account(o),
        printer=PRINTER,
    ),
]
