"""Project member RBAC: the component the Project reconciler deploys.

Gardener's ``pkg/component/garden/projectrbac``. Per Project ``<p>`` with namespace ``<ns>`` it writes
four ClusterRoles, four ClusterRoleBindings and three RoleBindings (the 11 standard objects) plus, per
extension role ``<r>``, a ClusterRole and a RoleBinding named ``gardener.cloud:extension:project:<p>:<r>``.

Every object is handled "get, then create or patch" by ``framework.controllerutil.create_or_patch``:
read from the cache; absent → create; present → replace the owner references, labels, rules /
aggregationRule and subjects where they differ, and patch only what changed. Because the cache may lag
behind our own writes, a patch is only sent after the difference was confirmed on a live read
(``live_reader``), and a create that finds the object already there goes on with the live object.
Deviations from Gardener, both deliberate:

- the patch is an RFC 7386 merge patch rather than a strategic-merge patch: both replace ``rules``,
  ``subjects`` and (here, as Gardener's projectrbac.go sets the whole owner list) ``ownerReferences``
  wholesale, and a merge patch needs no per-kind merge keys;
- ``roleRef`` is immutable, so a binding whose roleRef was edited by hand is deleted (with a UID
  precondition) and created again instead of failing forever;
- the objects are applied one after another (each reconcile worker already runs in parallel with the
  others), and every error is collected and returned together, as Gardener's concurrent flow does.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from typing import Any, cast

from framework.client import NotFound, Reader, ReaderWriter
from framework.controllerutil import create_or_patch, new_controller_ref
from framework.markers.rbac import rbac
from framework.meta.object import ensure_metadata
from gcm.apis.constants import CLUSTER_ROLE_PREFIX_EXTENSION_PROJECT as NAME_PREFIX_EXTENSION
from gcm.apis.constants import CLUSTER_ROLE_PREFIX_PROJECT as NAME_PREFIX_PROJECT
from gcm.apis.constants import CLUSTER_ROLE_PREFIX_PROJECT_UAM as NAME_PREFIX_UAM
from gcm.apis.constants import CLUSTER_ROLE_PROJECT_MEMBER as NAME_PREFIX_MEMBER
from gcm.apis.constants import CLUSTER_ROLE_PROJECT_SERVICEACCOUNTMANAGER as NAME_SERVICEACCOUNTMANAGER
from gcm.apis.constants import CLUSTER_ROLE_PROJECT_VIEWER as NAME_PREFIX_VIEWER
from gcm.apis.constants import (
    GROUP_CORE,
    LABEL_AGGREGATE_TO_EXTENSION_ROLE,
    LABEL_PROJECT_NAME,
    LABEL_ROLE,
    PROJECT,
)
from gcm.apis.constants import LABEL_ROLE_EXTENSION_PROJECT_ROLE as LABEL_ROLE_EXTENSION
from gcm.apis.constants import PROJECT_MEMBER_ADMIN as ROLE_ADMIN
from gcm.apis.constants import PROJECT_MEMBER_EXTENSION_PREFIX as ROLE_EXTENSION_PREFIX
from gcm.apis.constants import PROJECT_MEMBER_OWNER as ROLE_OWNER
from gcm.apis.constants import PROJECT_MEMBER_SERVICEACCOUNTMANAGER as ROLE_SERVICEACCOUNTMANAGER
from gcm.apis.constants import PROJECT_MEMBER_UAM as ROLE_UAM
from gcm.apis.constants import PROJECT_MEMBER_VIEWER as ROLE_VIEWER
from gcm.apis.core_v1beta1 import Project, ProjectMember, Subject
from gcm.controllers.errors import error_text

RBAC_API_VERSION = "rbac.authorization.k8s.io/v1"
RBAC_GROUP = "rbac.authorization.k8s.io"


class RBACError(Exception):
    """One or more RBAC objects could not be written or deleted; ``errors`` lists every failure."""

    def __init__(self, errors: list[Exception]) -> None:
        self.errors = errors
        text = "; ".join(error_text(e) for e in errors)
        super().__init__(text if len(errors) == 1 else f"{len(errors)} errors occurred: [{text}]")


# --- members → subject buckets ----------------------------------------------------------------------


def member_roles(member: ProjectMember) -> list[str]:
    """The singular ``role`` followed by the ``roles`` list."""
    return [member.get("role") or "", *(member.get("roles") or ())]


def subject_of(obj: Subject) -> dict:
    """An rbac ``Subject`` from a member or ``spec.owner``, defaulted like kube-apiserver's rbac/v1.

    ``apiGroup`` of a User or Group defaults to ``rbac.authorization.k8s.io`` (gardener-apiserver
    defaults Project members the same way); a ServiceAccount has none.
    """
    kind = obj.get("kind") or ""
    api_group = obj.get("apiGroup") or ""
    if not api_group and kind in ("User", "Group"):
        api_group = RBAC_GROUP
    subject = {"kind": kind}
    if api_group:
        subject["apiGroup"] = api_group
    subject["name"] = obj.get("name") or ""
    if obj.get("namespace"):
        subject["namespace"] = obj["namespace"]
    return subject


def _subject_key(s: dict) -> tuple[str, str, str, str]:
    return (s.get("apiGroup") or "", s.get("kind") or "", s.get("namespace") or "", s.get("name") or "")


def dedupe(subjects: Iterable[dict]) -> list[dict]:
    """Remove duplicates (same apiGroup, kind, namespace, name); the first occurrence keeps its place."""
    seen: set[tuple[str, str, str, str]] = set()
    out = []
    for s in subjects:
        key = _subject_key(s)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def subject_buckets(project: dict) -> dict[str, Any]:
    """``admins``, ``members``, ``uams``, ``serviceaccountmanagers``, ``viewers`` and ``extensions``."""
    spec = cast(Project, project).get("spec") or {}
    owner = spec.get("owner")
    admins: list[dict] = []
    members: list[dict] = []
    uams: list[dict] = []
    sa_managers: list[dict] = []
    viewers: list[dict] = []
    extensions: dict[str, list[dict]] = {}
    if owner:
        admins.append(subject_of(owner))
        sa_managers.append(subject_of(owner))
    for member in spec.get("members") or ():
        subject = subject_of(member)
        for role in member_roles(member):
            if role in (ROLE_ADMIN, ROLE_OWNER):
                members.append(subject)
            if role == ROLE_UAM:
                uams.append(subject)
            if role in (ROLE_SERVICEACCOUNTMANAGER, ROLE_OWNER):
                sa_managers.append(subject)
            if role == ROLE_VIEWER:
                viewers.append(subject)
            if role.startswith(ROLE_EXTENSION_PREFIX):
                extensions.setdefault(role[len(ROLE_EXTENSION_PREFIX) :], []).append(subject)
    return {
        "admins": dedupe(admins),
        "members": dedupe(members),
        "uams": dedupe(uams),
        "serviceaccountmanagers": dedupe(sa_managers),
        "viewers": dedupe(viewers),
        "extensions": {name: dedupe(subjects) for name, subjects in extensions.items()},
    }


def extension_role_names(project: dict) -> set[str]:
    """The extension role names (``extension:<r>`` without the prefix) the members use."""
    names = set()
    for member in (cast(Project, project).get("spec") or {}).get("members") or ():
        for role in member_roles(member):
            if role.startswith(ROLE_EXTENSION_PREFIX):
                names.add(role[len(ROLE_EXTENSION_PREFIX) :])
    return names


# --- desired objects ------------------------------------------------------------------------------


def owner_reference(project: dict) -> dict:
    """The Project as controller, ``blockOwnerDeletion: false`` (as Gardener's projectrbac)."""
    return new_controller_ref(project, PROJECT, block_owner_deletion=False)


def extension_labels(project: dict) -> dict[str, str]:
    return {LABEL_ROLE: LABEL_ROLE_EXTENSION, LABEL_PROJECT_NAME: cast(Project, project)["metadata"]["name"]}


def extension_object_name(project_name: str, role: str) -> str:
    return f"{NAME_PREFIX_EXTENSION}:{project_name}:{role}"


def _namespace_rule(namespace: str) -> dict:
    return {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [namespace], "verbs": ["get"]}


def _project_rule(project_name: str, verbs: list[str]) -> dict:
    return {
        "apiGroups": [GROUP_CORE],
        "resources": ["projects"],
        "resourceNames": [project_name],
        "verbs": verbs,
    }


def _role_ref(name: str) -> dict:
    return {"apiGroup": RBAC_GROUP, "kind": "ClusterRole", "name": name}


def _object(kind: str, name: str, namespace: str | None, owner: dict, labels: dict | None) -> dict:
    meta: dict[str, Any] = {"name": name}
    if namespace:
        meta["namespace"] = namespace
    if labels:
        meta["labels"] = dict(labels)
    meta["ownerReferences"] = [dict(owner)]
    return {"apiVersion": RBAC_API_VERSION, "kind": kind, "metadata": meta}


def _cluster_role(name: str, owner: dict, rules: list[dict]) -> dict:
    return {**_object("ClusterRole", name, None, owner, None), "rules": rules}


def _binding(kind: str, name: str, namespace: str | None, owner: dict, subjects: list[dict]) -> dict:
    return {
        **_object(kind, name, namespace, owner, None),
        "roleRef": _role_ref(name),
        "subjects": subjects,
    }


def standard_objects(project: dict, buckets: dict[str, Any] | None = None) -> list[dict]:
    """The 11 standard objects, in the order of Gardener's projectrbac.go (Deploy and Destroy)."""
    typed = cast(Project, project)
    p = typed["metadata"]["name"]
    ns = (typed.get("spec") or {})["namespace"]
    owner = owner_reference(project)
    b = buckets or subject_buckets(project)
    ns_rule = _namespace_rule(ns)
    return [
        _cluster_role(
            f"{NAME_PREFIX_PROJECT}:{p}",
            owner,
            [ns_rule, _project_rule(p, ["get", "patch", "manage-members", "update", "delete"])],
        ),
        _binding("ClusterRoleBinding", f"{NAME_PREFIX_PROJECT}:{p}", None, owner, b["admins"]),
        _cluster_role(
            f"{NAME_PREFIX_UAM}:{p}", owner, [_project_rule(p, ["get", "manage-members", "patch", "update"])]
        ),
        _binding("ClusterRoleBinding", f"{NAME_PREFIX_UAM}:{p}", None, owner, b["uams"]),
        _binding("RoleBinding", NAME_SERVICEACCOUNTMANAGER, ns, owner, b["serviceaccountmanagers"]),
        _cluster_role(
            f"{NAME_PREFIX_MEMBER}:{p}",
            owner,
            [ns_rule, _project_rule(p, ["get", "patch", "update", "delete"])],
        ),
        _binding("ClusterRoleBinding", f"{NAME_PREFIX_MEMBER}:{p}", None, owner, b["members"]),
        _binding("RoleBinding", NAME_PREFIX_MEMBER, ns, owner, b["members"]),
        _cluster_role(f"{NAME_PREFIX_VIEWER}:{p}", owner, [ns_rule, _project_rule(p, ["get"])]),
        _binding("ClusterRoleBinding", f"{NAME_PREFIX_VIEWER}:{p}", None, owner, b["viewers"]),
        _binding("RoleBinding", NAME_PREFIX_VIEWER, ns, owner, b["viewers"]),
    ]


def extension_objects(project: dict, buckets: dict[str, Any] | None = None) -> list[dict]:
    """Per extension role (sorted): the aggregating ClusterRole and its RoleBinding."""
    typed = cast(Project, project)
    p = typed["metadata"]["name"]
    ns = (typed.get("spec") or {})["namespace"]
    owner = owner_reference(project)
    labels = extension_labels(project)
    b = buckets or subject_buckets(project)
    out = []
    for role in sorted(extension_role_names(project)):
        name = extension_object_name(p, role)
        cluster_role = _object("ClusterRole", name, None, owner, labels)
        cluster_role["aggregationRule"] = {
            "clusterRoleSelectors": [{"matchLabels": {LABEL_AGGREGATE_TO_EXTENSION_ROLE: role}}]
        }
        binding = _object("RoleBinding", name, ns, owner, labels)
        binding["roleRef"] = _role_ref(name)
        binding["subjects"] = b["extensions"].get(role, [])
        out += [cluster_role, binding]
    return out


def desired_objects(project: dict) -> list[dict]:
    buckets = subject_buckets(project)
    return standard_objects(project, buckets) + extension_objects(project, buckets)


# --- converging -----------------------------------------------------------------------------------------


class RoleRefChanged(Exception):
    """A binding's ``roleRef`` differs from the desired one; it is immutable, so no patch can fix it."""


def _norm_rules(rules: Any) -> list[dict]:
    return [{k: v for k, v in (r or {}).items() if v not in (None, [], "")} for r in rules or ()]


def _norm_subjects(subjects: Any) -> list[dict]:
    return [{k: v for k, v in (s or {}).items() if v not in (None, "")} for s in subjects or ()]


def _norm_role_ref(ref: Any) -> dict:
    return {k: v for k, v in (ref or {}).items() if v not in (None, "")}


def _same(value: Any) -> Any:
    return value


def role_ref_changed(live: dict, desired: dict) -> bool:
    return "roleRef" in desired and _norm_role_ref(live.get("roleRef")) != _norm_role_ref(desired["roleRef"])


def converge(desired: dict, *, check_role_ref: bool = True) -> Callable[[dict], None]:
    """The ``mutate`` of ``create_or_patch`` for ``desired``: replace the fields this component owns
    (owner references, labels, rules / aggregationRule, subjects) where they differ, compared after
    dropping empty values. Raises :class:`RoleRefChanged` for a binding with another roleRef."""
    want_meta = desired["metadata"]
    want_labels = want_meta.get("labels") or {}
    owned = (("rules", _norm_rules), ("aggregationRule", _same), ("subjects", _norm_subjects))

    def mutate(obj: dict) -> None:
        if check_role_ref and role_ref_changed(obj, desired):
            raise RoleRefChanged(f"{desired['kind']} {want_meta['name']} has another roleRef")
        meta = ensure_metadata(obj)
        if (meta.get("ownerReferences") or []) != want_meta["ownerReferences"]:
            meta["ownerReferences"] = copy.deepcopy(want_meta["ownerReferences"])
        if (meta.get("labels") or {}) != want_labels:
            if want_labels:
                meta["labels"] = dict(want_labels)
            else:
                del meta["labels"]
        for field, norm in owned:
            # An empty subject list is written as an empty list (a missing one would not clear it).
            if field in desired and norm(obj.get(field)) != norm(desired[field]):
                obj[field] = copy.deepcopy(desired[field])

    return mutate


# --- the component ------------------------------------------------------------------------------------


# The per-project ClusterRoles and ClusterRoleBindings: read through the cache (list, watch: the
# informers start on the first read), live before a patch (get), created or patched, deleted when a
# binding's roleRef changed or an extension role is no longer used. The project namespace's RoleBindings
# likewise (their informer is the Builder's owns).
@rbac(
    groups="rbac.authorization.k8s.io",
    resources=["clusterroles", "clusterrolebindings"],
    verbs=["get", "list", "watch", "create", "patch", "delete"],
)
@rbac(
    groups="rbac.authorization.k8s.io", resources="rolebindings", verbs=["get", "create", "patch", "delete"]
)
# RoleBindings to the global ClusterRoles of manifests/global: `bind` on exactly those names.
@rbac(
    groups="rbac.authorization.k8s.io",
    resources="clusterroles",
    resource_names=[NAME_PREFIX_MEMBER, NAME_PREFIX_VIEWER, NAME_SERVICEACCOUNTMANAGER],
    verbs="bind",
)
# Never requested: holding it is what lets gcm create the per-project ClusterRoles granting it on one
# Project without `escalate` (kube-apiserver's escalation check passes when the writer holds the rules).
@rbac(groups=GROUP_CORE, resources="projects", verbs="manage-members")
class ProjectRBAC:
    """Deploys and cleans up the member RBAC of one Project.

    ``client`` reads (normally the manager's cache) and writes; ``api_reader`` reads live (defaults to
    ``client``). ``extension_roles=False`` (``controllers.project.extensionRoles``) leaves out the
    extension objects: their ClusterRole's ``aggregationRule`` can only be written with rights
    equivalent to cluster-admin (docs/rbac.md), so a least-privilege gcm does not write them and
    :meth:`delete_stale_extension_roles` removes every one of the project.
    Raises ``ValueError`` when the Project has no ``spec.namespace`` yet.
    """

    def __init__(
        self,
        client: ReaderWriter,
        project: dict,
        api_reader: Reader | None = None,
        *,
        extension_roles: bool = True,
    ) -> None:
        namespace = (cast(Project, project).get("spec") or {}).get("namespace")
        if not namespace:
            raise ValueError("spec.namespace is not set")
        self.client = client
        self.api_reader = api_reader or client
        self.project = project
        self.name = cast(Project, project)["metadata"]["name"]
        self.namespace = namespace
        self.extension_roles = extension_roles

    # -- deploy ---------------------------------------------------------------------------------------

    def deploy(self) -> None:
        """Create or patch every object; raises :class:`RBACError` with all failures."""
        errors: list[Exception] = []
        buckets = subject_buckets(self.project)
        objects = standard_objects(self.project, buckets)
        if self.extension_roles:
            objects += extension_objects(self.project, buckets)
        for obj in objects:
            try:
                self.apply(obj)
            except Exception as e:  # collected: the other objects are still applied
                errors.append(e)
        if errors:
            raise RBACError(errors)

    def apply(self, desired: dict) -> None:
        """Create, or patch what differs (decided on the cache, confirmed on the live object)."""
        try:
            create_or_patch(self.client, desired, converge(desired), live_reader=self.api_reader)
        except RoleRefChanged:
            self._recreate(desired)

    def _recreate(self, desired: dict) -> None:
        """roleRef is immutable: delete the hand-edited binding (UID precondition) and create it again.

        Decided on the live binding; if the cache only lagged behind a fix, the rest is patched.
        """
        meta = desired["metadata"]
        try:
            live = self.api_reader.get(
                desired["apiVersion"], desired["kind"], meta["name"], meta.get("namespace")
            )
        except NotFound:
            self.client.create(desired)
            return
        if not role_ref_changed(live, desired):
            mutate = converge(desired, check_role_ref=False)
            create_or_patch(self.client, desired, mutate, live_reader=self.api_reader)
            return
        try:
            self.client.delete(
                desired["apiVersion"],
                desired["kind"],
                meta["name"],
                meta.get("namespace"),
                preconditions={"uid": live["metadata"]["uid"]},
            )
        except NotFound:
            pass
        self.client.create(desired)

    # -- stale extension roles ---------------------------------------------------------------------------

    def delete_stale_extension_roles(self, wanted: set[str] | None = None) -> None:
        """Delete extension RoleBindings and ClusterRoles whose role no member uses any more.

        RoleBindings are listed in the namespace, ClusterRoles cluster-wide (they are cluster-scoped).
        A list or delete error aborts and is raised. Without ``extension_roles`` no role is wanted.

        Only objects named ``gardener.cloud:extension:project:<p>:<r>`` are deleted: Gardener deletes
        whatever carries the labels, so anyone who may label a ClusterRole could have it deleted by the
        controller; gcm's admission policy (``manifests/deploy/policy.yaml``) refuses such deletes, and
        the Project would fail on every reconcile.
        """
        if wanted is None:
            wanted = extension_role_names(self.project) if self.extension_roles else set()
        for kind, name, namespace in self._extension_objects():
            if name[len(self._extension_prefix) :] in wanted:
                continue
            try:
                self.client.delete(RBAC_API_VERSION, kind, name, namespace)
            except NotFound:
                pass

    @property
    def _extension_prefix(self) -> str:
        return f"{NAME_PREFIX_EXTENSION}:{self.name}:"

    def _extension_objects(self, reader: Reader | None = None) -> list[tuple[str, str, str | None]]:
        """(kind, name, namespace) of the extension RoleBindings and ClusterRoles of this Project: those
        with its extension labels and a name of its extension prefix."""
        labels = extension_labels(self.project)
        out: list[tuple[str, str, str | None]] = []
        for kind, namespace in (("RoleBinding", self.namespace), ("ClusterRole", None)):
            listed = (reader or self.client).list(RBAC_API_VERSION, kind, namespace, label_selector=labels)
            for obj in listed["items"]:
                if obj["metadata"]["name"].startswith(self._extension_prefix):
                    out.append((kind, obj["metadata"]["name"], namespace))
        return out

    # -- destroy (as Gardener's Destroy; tests only) -------------------------------------------------------

    def destroy(self) -> None:
        """Delete every extension object and the 11 standard objects (NotFound is fine)."""
        targets = [
            (o["kind"], o["metadata"]["name"], o["metadata"].get("namespace"))
            for o in standard_objects(self.project)
        ]
        targets += self._extension_objects(self.api_reader)
        for kind, name, namespace in targets:
            try:
                self.client.delete(RBAC_API_VERSION, kind, name, namespace)
            except NotFound:
                pass
