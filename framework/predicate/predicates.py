"""The predicate types; see the package docstring."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from framework.meta.object import get_metadata

Check = Callable[..., bool]


class Predicate:
    """Passes every event; subclasses override what they filter."""

    def create(self, obj: dict) -> bool:
        return True

    def update(self, old: dict, new: dict) -> bool:
        return True

    def delete(self, obj: dict) -> bool:
        return True

    def generic(self, obj: dict) -> bool:
        return True


class Funcs(Predicate):
    """A predicate from per-event functions; an event type without a function passes."""

    def __init__(
        self,
        create: Callable[[dict], bool] | None = None,
        update: Callable[[dict, dict], bool] | None = None,
        delete: Callable[[dict], bool] | None = None,
        generic: Callable[[dict], bool] | None = None,
    ) -> None:
        self._create, self._update, self._delete, self._generic = create, update, delete, generic

    def create(self, obj: dict) -> bool:
        return self._create is None or self._create(obj)

    def update(self, old: dict, new: dict) -> bool:
        return self._update is None or self._update(old, new)

    def delete(self, obj: dict) -> bool:
        return self._delete is None or self._delete(obj)

    def generic(self, obj: dict) -> bool:
        return self._generic is None or self._generic(obj)


class _UpdateOnly(Predicate):
    def _changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        raise NotImplementedError

    def update(self, old: dict, new: dict) -> bool:
        if old is None or new is None:
            return False
        return self._changed(get_metadata(old), get_metadata(new))


class GenerationChangedPredicate(_UpdateOnly):
    """Updates pass only when ``metadata.generation`` changed: status-only writes are ignored."""

    def _changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return old.get("generation") != new.get("generation")


class ResourceVersionChangedPredicate(_UpdateOnly):
    """Updates pass only when ``metadata.resourceVersion`` changed: resyncs are ignored."""

    def _changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return old.get("resourceVersion") != new.get("resourceVersion")


class LabelChangedPredicate(_UpdateOnly):
    def _changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return (old.get("labels") or {}) != (new.get("labels") or {})


class AnnotationChangedPredicate(_UpdateOnly):
    def _changed(self, old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
        return (old.get("annotations") or {}) != (new.get("annotations") or {})


class _Combined(Predicate):
    def __init__(self, predicates: tuple[Predicate, ...], combine: Callable[..., bool]) -> None:
        self.predicates = predicates
        self.combine = combine

    def create(self, obj: dict) -> bool:
        return self.combine(p.create(obj) for p in self.predicates)

    def update(self, old: dict, new: dict) -> bool:
        return self.combine(p.update(old, new) for p in self.predicates)

    def delete(self, obj: dict) -> bool:
        return self.combine(p.delete(obj) for p in self.predicates)

    def generic(self, obj: dict) -> bool:
        return self.combine(p.generic(obj) for p in self.predicates)


def and_(*predicates: Predicate) -> Predicate:
    """Passes when every predicate passes."""
    return _Combined(predicates, all)


def or_(*predicates: Predicate) -> Predicate:
    """Passes when any predicate passes."""
    return _Combined(predicates, any)


class _Not(Predicate):
    def __init__(self, predicate: Predicate) -> None:
        self.predicate = predicate

    def create(self, obj: dict) -> bool:
        return not self.predicate.create(obj)

    def update(self, old: dict, new: dict) -> bool:
        return not self.predicate.update(old, new)

    def delete(self, obj: dict) -> bool:
        return not self.predicate.delete(obj)

    def generic(self, obj: dict) -> bool:
        return not self.predicate.generic(obj)


def not_(predicate: Predicate) -> Predicate:
    """Passes when ``predicate`` does not."""
    return _Not(predicate)
