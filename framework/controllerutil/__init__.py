"""controller-runtime's ``controllerutil`` for plain-dict objects: converge an object
(``create_or_update``, ``create_or_patch``), own it (``set_controller_reference``), guard its deletion
(``add_finalizer``, ``remove_finalizer``)::

    from framework.controllerutil import OperationResult, create_or_update, set_controller_reference

    def mutate(secret: dict) -> None:
        secret["stringData"] = cm.get("data") or {}
        set_controller_reference(cm, secret)  # raises AlreadyOwnedError if another controller owns it

    secret, result = create_or_update(mgr.client, {"apiVersion": "v1", "kind": "Secret",
                                      "metadata": {"name": "x", "namespace": "default"}}, mutate)
    if result is not OperationResult.UNCHANGED:
        log.info("secret reconciled", operation=result)

The helpers that change an object return whether they changed it, so a reconcile writes only when
something changed.
"""

from framework.controllerutil.finalizer import add_finalizer, contains_finalizer, remove_finalizer
from framework.controllerutil.operation import MutateFn, OperationResult, create_or_patch, create_or_update
from framework.controllerutil.owner import (
    AlreadyOwnedError,
    get_controller_of,
    has_controller_reference,
    has_owner_reference,
    merge_owner_references,
    new_controller_ref,
    remove_controller_reference,
    remove_owner_reference,
    set_controller_reference,
    set_owner_reference,
)

__all__ = [
    "AlreadyOwnedError",
    "MutateFn",
    "OperationResult",
    "add_finalizer",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "get_controller_of",
    "has_controller_reference",
    "has_owner_reference",
    "merge_owner_references",
    "new_controller_ref",
    "remove_controller_reference",
    "remove_finalizer",
    "remove_owner_reference",
    "set_controller_reference",
    "set_owner_reference",
]
