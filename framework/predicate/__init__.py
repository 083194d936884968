"""Predicates filter the events a controller reacts to (controller-runtime's ``pkg/predicate``).

A predicate answers, per event, whether it should reach the event handler::

    from framework.predicate import GenerationChangedPredicate, LabelChangedPredicate, or_

    builder.for_("apps/v1", "Deployment",
                 predicates=[or_(GenerationChangedPredicate(), LabelChangedPredicate())])

Objects are plain dicts. Resync updates (the same resourceVersion twice) reach predicates as updates,
so ``ResourceVersionChangedPredicate`` is what filters them out.
"""

from framework.predicate.predicates import (
    AnnotationChangedPredicate,
    Funcs,
    GenerationChangedPredicate,
    LabelChangedPredicate,
    Predicate,
    ResourceVersionChangedPredicate,
    and_,
    not_,
    or_,
)

__all__ = [
    "AnnotationChangedPredicate",
    "Funcs",
    "GenerationChangedPredicate",
    "LabelChangedPredicate",
    "Predicate",
    "ResourceVersionChangedPredicate",
    "and_",
    "not_",
    "or_",
]
