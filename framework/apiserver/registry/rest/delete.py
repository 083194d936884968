"""delete and deletecollection: DeleteOptions, preconditions, propagation policy finalizers, and
graceful deletion of objects with finalizers (11-1..11-5)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

from framework.apiserver.machinery import errors
from framework.apiserver.machinery.errors import StatusError
from framework.apiserver.registry.rest.objects import deep_copy, object_key
from framework.apiserver.registry.rest.options import Result
from framework.apiserver.registry.rest.reads import Reads
from framework.apiserver.registry.strategy import ResourceType
from framework.meta.time import format_time, now, parse_time


class Delete(Reads):
    """The delete and deletecollection verbs."""

    def delete(
        self,
        rt: ResourceType,
        ns: str | None,
        name: str,
        options: dict | None = None,
        dry_run: bool = False,
        admission: Callable[[dict], None] | None = None,
    ) -> Result:
        """``admission(old)`` (admission webhooks, 21-7) runs once the deletion is certain to change
        something, before anything is written."""
        options = options or {}
        dry_run = dry_run or bool(options.get("dryRun"))  # DeleteOptions.dryRun, wherever it came from
        policy = self._policy(options)  # invalid options are 422 before the object is looked up
        old = self.storage.get(rt.storage, object_key(ns, name))
        if old is None:
            raise errors.not_found(rt.resource, rt.group, name)
        self._check_preconditions(rt, name, old, options.get("preconditions"))
        if self.admit_delete is not None:
            self.admit_delete(rt, old)
        meta = old["metadata"]
        if name in rt.undeletable_names:
            raise errors.forbidden_error(
                rt.resource, rt.group, name, f"this {rt.singular} may not be deleted"
            )
        grace = self.grace_period(rt, old, options) if self.grace_period is not None else 0
        if meta.get("deletionTimestamp"):
            if rt.spec_finalizers and (old.get("spec") or {}).get("finalizers"):
                raise errors.conflict(
                    rt.resource,
                    rt.group,
                    name,
                    f"The system is ensuring all content is removed from this {rt.singular}.  Upon "
                    f"completion, this {rt.singular} will automatically be purged by the system.",
                )
            if admission is not None:
                admission(old)
            if grace < (meta.get("deletionGracePeriodSeconds") or 0):
                return self._shorten_grace(rt, ns, name, old, grace, dry_run)
            if rt.spec_finalizers and not meta.get("finalizers"):
                if not dry_run:
                    self.storage.delete(rt.storage, object_key(ns, name))
                return Result(200, self.external(rt, old))
            return Result(200, self.external(rt, old))  # 11-4
        if admission is not None:
            admission(old)
        fins = list(meta.get("finalizers") or [])
        if rt.supports_gc:
            if policy == "Orphan":
                fins = [f for f in fins if f != "foregroundDeletion"]
                if "orphan" not in fins:
                    fins.append("orphan")
            elif policy == "Foreground":
                fins = [f for f in fins if f != "orphan"]
                if "foregroundDeletion" not in fins:
                    fins.append("foregroundDeletion")
            elif policy == "Background":
                fins = [f for f in fins if f not in ("orphan", "foregroundDeletion")]
        fins += [f for f in rt.deletion_finalizers if f not in fins]
        if not fins and not rt.spec_finalizers and not grace:
            last = old
            if not dry_run:
                last = self.storage.delete(rt.storage, object_key(ns, name))
            if rt.returns_deleted_object:
                return Result(200, self.external(rt, last))
            details = {"name": name, "kind": rt.resource, "uid": meta["uid"]}
            if rt.group:
                details["group"] = rt.group
            return Result(
                200,
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Success",
                    "details": details,
                },
            )
        new = deep_copy(old)
        nmeta = new["metadata"]
        nmeta["deletionTimestamp"] = format_time(now() + timedelta(seconds=grace))
        if fins:
            nmeta["finalizers"] = fins
        if not rt.spec_finalizers:
            nmeta["deletionGracePeriodSeconds"] = grace
        if rt.tracks_generation and nmeta.get("generation", 0) > 0:
            nmeta["generation"] += 1
        if rt.on_deletion is not None:
            rt.on_deletion(new)
        nmeta.pop("resourceVersion", None)
        if not dry_run:
            new = self.storage.update(rt.storage, object_key(ns, name), new)
        code = 202 if options.get("orphanDependents") is False else 200
        return Result(code, self.external(rt, new))

    def _shorten_grace(
        self, rt: ResourceType, ns: str | None, name: str, old: dict, grace: int, dry_run: bool
    ) -> Result:
        """A second DELETE with a shorter grace period than the pending one moves the deletion
        earlier; 0 (``--force --grace-period=0``) deletes at once unless finalizers remain."""
        if grace == 0 and not old["metadata"].get("finalizers"):
            last = old if dry_run else self.storage.delete(rt.storage, object_key(ns, name))
            return Result(200, self.external(rt, last))
        new = deep_copy(old)
        deadline = now() + timedelta(seconds=grace)
        current = parse_time(new["metadata"]["deletionTimestamp"])
        if current is None or deadline < current:
            new["metadata"]["deletionTimestamp"] = format_time(deadline)
        new["metadata"]["deletionGracePeriodSeconds"] = grace
        new["metadata"].pop("resourceVersion", None)
        if not dry_run:
            new = self.storage.update(rt.storage, object_key(ns, name), new)
        return Result(200, self.external(rt, new))

    def _check_preconditions(self, rt: ResourceType, name: str, old: dict, pre: Any) -> None:
        if not pre:
            return
        meta = old["metadata"]
        if pre.get("uid") and pre["uid"] != meta["uid"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the UID in the precondition '
                f"({pre['uid']}) does not match the UID in record ({meta['uid']}). The object might have "
                "been deleted and then recreated",
                {"name": name, "group": rt.group, "kind": rt.kind}
                if rt.group
                else {"name": name, "kind": rt.kind},
            )
        if pre.get("resourceVersion") and pre["resourceVersion"] != meta["resourceVersion"]:
            raise StatusError(
                409,
                "Conflict",
                f'Operation cannot be fulfilled on {rt.kind} "{name}": the ResourceVersion in the '
                f"precondition ({pre['resourceVersion']}) does not match the ResourceVersion in record "
                f"({meta['resourceVersion']}). The object might have been modified",
                {"name": name, "group": rt.group, "kind": rt.kind}
                if rt.group
                else {"name": name, "kind": rt.kind},
            )

    @staticmethod
    def _policy(options: dict) -> str | None:
        policy = options.get("propagationPolicy")
        orphan = options.get("orphanDependents")
        errs = []
        if policy is not None and orphan is not None:
            errs.append(
                errors.invalid_value(
                    "propagationPolicy", policy, "orphanDependents and deletionPropagation cannot be both set"
                )
            )
        if policy is not None and policy not in ("Orphan", "Background", "Foreground"):
            errs.append(
                errors.not_supported(
                    "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]
                )
            )
        grace = options.get("gracePeriodSeconds")
        if grace is not None and not isinstance(grace, int):
            errs.append(errors.invalid_value("gracePeriodSeconds", grace, "must be an integer"))
        dry = options.get("dryRun")
        if dry and any(d != "All" for d in dry):
            errs.append(errors.not_supported("dryRun", dry, ["All"]))
        if errs:
            raise errors.options_invalid("DeleteOptions", errs)
        if orphan is True:
            return "Orphan"
        if orphan is False:
            return "Background"
        return policy

    def delete_collection(
        self,
        rt: ResourceType,
        ns: str | None,
        options: dict | None,
        label_selector: str | None,
        field_selector: str | None,
        dry_run: bool = False,
    ) -> Result:
        match = self.matcher(rt, ns, label_selector, field_selector)
        self._policy(options or {})  # bad options fail the request before anything is deleted
        dry_run = dry_run or bool((options or {}).get("dryRun"))
        objs = self.storage.table(rt.storage).objects
        targets = sorted(k for k, o in objs.items() if (not ns or k[0] == ns) and match(o))
        if self.admit_delete is not None:
            for k in targets:  # built-in admission refuses the whole collection before any delete
                self.admit_delete(rt, objs[k])
        items = []
        for k in targets:
            before = objs[k]
            try:
                res = self.delete(rt, k[0] or None, k[1], {**(options or {}), "preconditions": None}, dry_run)
            except StatusError as e:
                if e.code == 404:
                    continue
                raise
            items.append(res.body if res.body.get("kind") != "Status" else self.external(rt, before))
        return Result(
            200,
            {
                "kind": rt.list_kind,
                "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(self.storage.rv)},
                "items": items,
            },
        )
