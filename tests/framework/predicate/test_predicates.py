"""Predicates as controller-runtime's pkg/predicate: the change predicates filter updates only, a
resync (unchanged object) fails all four, missing old/new fails, and the combinators combine."""

from __future__ import annotations

import pytest

from framework.predicate import (
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


def obj(rv: str = "1", generation: int = 1, labels=None, annotations=None) -> dict:
    meta: dict = {"name": "a", "namespace": "ns", "resourceVersion": rv, "generation": generation}
    if labels is not None:
        meta["labels"] = labels
    if annotations is not None:
        meta["annotations"] = annotations
    return {"metadata": meta}


CHANGE_PREDICATES = [
    GenerationChangedPredicate(),
    ResourceVersionChangedPredicate(),
    LabelChangedPredicate(),
    AnnotationChangedPredicate(),
]


@pytest.mark.parametrize("p", CHANGE_PREDICATES, ids=lambda p: type(p).__name__)
def test_change_predicates_pass_create_delete_generic(p):
    assert p.create(obj()) and p.delete(obj()) and p.generic(obj())


@pytest.mark.parametrize("p", CHANGE_PREDICATES, ids=lambda p: type(p).__name__)
def test_a_resync_fails_every_change_predicate(p):
    same = obj("7", 2, {"a": "b"}, {"c": "d"})
    assert p.update(same, obj("7", 2, {"a": "b"}, {"c": "d"})) is False


@pytest.mark.parametrize("p", CHANGE_PREDICATES, ids=lambda p: type(p).__name__)
def test_missing_old_or_new_fails(p):
    assert p.update(None, obj()) is False  # type: ignore[arg-type]
    assert p.update(obj(), None) is False  # type: ignore[arg-type]


def test_generation_changed_ignores_status_and_metadata_writes():
    p = GenerationChangedPredicate()
    assert not p.update(obj("1", 1), obj("2", 1, {"new": "label"}))
    assert p.update(obj("1", 1), obj("2", 2))


def test_resource_version_changed():
    p = ResourceVersionChangedPredicate()
    assert p.update(obj("1"), obj("2"))


def test_label_and_annotation_changed_treat_missing_as_empty():
    labels, annotations = LabelChangedPredicate(), AnnotationChangedPredicate()
    assert not labels.update(obj("1", labels=None), obj("2", labels={}))
    assert labels.update(obj("1", labels={"a": "1"}), obj("2", labels={"a": "2"}))
    assert not labels.update(obj("1", annotations={"x": "1"}), obj("2", annotations={"x": "2"}))
    assert annotations.update(obj("1", annotations={"x": "1"}), obj("2", annotations={"x": "2"}))
    assert not annotations.update(obj("1", annotations=None), obj("2", annotations={}))


def test_funcs_pass_what_they_do_not_define():
    p = Funcs(update=lambda old, new: False)
    assert p.create(obj()) and p.delete(obj()) and p.generic(obj())
    assert not p.update(obj(), obj())
    only_deletes = Funcs(create=lambda o: False, update=lambda o, n: False, generic=lambda o: False)
    assert only_deletes.delete(obj()) and not only_deletes.create(obj())


class Never(Predicate):
    def create(self, obj):
        return False

    def update(self, old, new):
        return False

    def delete(self, obj):
        return False

    def generic(self, obj):
        return False


def test_combinators():
    always, never = Predicate(), Never()
    for event in ("create", "delete", "generic"):
        assert getattr(and_(always, always), event)(obj())
        assert not getattr(and_(always, never), event)(obj())
        assert getattr(or_(never, always), event)(obj())
        assert not getattr(or_(never, never), event)(obj())
        assert getattr(not_(never), event)(obj()) and not getattr(not_(always), event)(obj())
    assert and_().create(obj()) and not or_().create(obj())  # the empty cases, as all() and any()
    gen_or_labels = or_(GenerationChangedPredicate(), LabelChangedPredicate())
    assert gen_or_labels.update(obj("1", labels={"a": "1"}), obj("2", labels={"a": "2"}))
    assert not gen_or_labels.update(obj("1"), obj("2"))
    assert not_(GenerationChangedPredicate()).update(obj("1", 1), obj("2", 1))
