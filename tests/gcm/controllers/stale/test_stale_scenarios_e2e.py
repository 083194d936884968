"""The stale-Project scenarios end to end: the ``project-stale`` controller in a Manager running
as gcm's ServiceAccount against the test API server, with a fake clock for the reconciler's now.

Unit scenarios use minimumLifetimeDays 5, staleGracePeriodDays 10, staleExpirationTimeDays 15; the
integration scenarios (56-58) Gardener's defaults 30/14/90.
"""

from __future__ import annotations

from datetime import timedelta

from framework.meta.time import format_time, parse_time
from framework.reconcile import Result

CORE = "core.gardener.cloud/v1beta1"
SECURITY = "security.gardener.cloud/v1alpha1"
DAY = timedelta(hours=24)
UNIT = {"minimum": 5, "grace": 10, "expiration": 15, "with_activity": False}
SB_LABEL = {"reference.gardener.cloud/secretbinding": "true"}
CB_LABEL = {"reference.gardener.cloud/credentialsbinding": "true"}
STALE_FIELDS = ("staleSinceTimestamp", "staleAutoDeleteTimestamp")


def stale_fields(status: dict) -> tuple:
    return tuple(status.get(f) for f in STALE_FIELDS)


def preset_stale(env, name: str, since, auto=None) -> None:
    env.patch_status(
        name,
        staleSinceTimestamp=format_time(since),
        staleAutoDeleteTimestamp=format_time(auto) if auto else None,
    )


def test_40_project_without_namespace_is_left_alone(env):
    h = env.manager(**UNIT)
    env.project("p40", namespace=None)
    env.age("p40", 100)
    before = env.get_project("p40")
    outcome = h.check("p40")["p40"]
    assert outcome == Result(requeue_after=3600.0)
    after = env.get_project("p40")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert env.sa_requests("patch", "projects") == 0 and env.sa_requests("delete", "projects") == 0


def test_41_skip_stale_check_annotation_clears_timestamps(env):
    env.project("p41", ns_annotations={"project.gardener.cloud/skip-stale-check": "true"})
    env.project("p41-false", ns_annotations={"project.gardener.cloud/skip-stale-check": "false"})
    now = env.age("p41", 400)
    for name in ("p41", "p41-false"):
        preset_stale(env, name, now - 300 * DAY, now - DAY)  # long overdue
    h = env.manager(**UNIT)
    h.check("p41", "p41-false")
    assert stale_fields(env.status("p41")) == (None, None)
    assert env.get_project("p41")["metadata"].get("deletionTimestamp") is None
    # Without the annotation (or with "false") the overdue Project is deleted.
    assert env.get_project("p41-false") is None


def test_42_young_project_is_not_stale_and_the_boundary_is_strict(env):
    env.project("p42")
    env.project("p42-edge")
    created = env.created("p42")
    preset_stale(env, "p42", created, created + 15 * DAY)
    h = env.manager(**UNIT)
    env.clock.set(created + 5 * DAY - timedelta(seconds=1))
    h.check("p42")
    assert stale_fields(env.status("p42")) == (None, None)
    # At exactly creationTimestamp + 5d the Project is no longer young.
    now = env.age("p42-edge", 5)
    h.check("p42-edge")
    assert env.status("p42-edge")["staleSinceTimestamp"] == format_time(now)


def test_43_recent_activity_keeps_a_project_not_stale(env):
    env.project("p43")
    env.project("p43-edge")
    now = env.age("p43", 100)
    preset_stale(env, "p43", now - 20 * DAY, now + DAY)
    env.patch_status("p43", lastActivityTimestamp=format_time(now - 5 * DAY + timedelta(seconds=1)))
    env.patch_status("p43-edge", lastActivityTimestamp=format_time(now - 5 * DAY))
    h = env.manager(**UNIT)
    h.check("p43", "p43-edge")
    assert stale_fields(env.status("p43")) == (None, None)
    # lastActivity + 5d == now: no longer recent.
    assert env.status("p43-edge")["staleSinceTimestamp"] == format_time(now)


def _in_use_cases(env) -> dict[str, list[dict]]:
    """scenario 44 (and Plant): one Project per way of being in use; returns the objects to wait for."""
    objs: dict[str, list[dict]] = {}

    def case(name: str, build) -> None:
        env.project(name)
        other = f"garden-o-{name}"
        env.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": other}})
        objs[name] = build(f"garden-{name}", other)

    def secret(ns, name, labels):
        return env.create("v1", "Secret", ns, name, labels, data={"key": "c2VjcmV0"})

    def sb(ns, name, secret_ns=None, secret_name=None, quotas=None):
        body = {"provider": {"type": "aws"}}
        if secret_name:
            body["secretRef"] = {"name": secret_name, "namespace": secret_ns}
        if quotas:
            body["quotas"] = quotas
        return env.create(CORE, "SecretBinding", ns, name, **body)

    def cb(ns, name, ref=None, quotas=None):
        body = {"provider": {"type": "aws"}}
        body["credentialsRef"] = ref or {
            "apiVersion": "v1",
            "kind": "Secret",
            "name": "unrelated",
            "namespace": ns,
        }
        if quotas:
            body["quotas"] = quotas
        return env.create(SECURITY, "CredentialsBinding", ns, name, **body)

    def quota(ns, name, labels=None):
        return env.create(CORE, "Quota", ns, name, labels, spec={"clusterLifetimeDays": 7})

    case("u-shoot", lambda n, o: [env.shoot(n, "s")])
    case("u-plant", lambda n, o: [env.create(CORE, "Plant", n, "p", spec={"secretRef": {"name": "kc"}})])
    case("u-backupentry", lambda n, o: [env.create(CORE, "BackupEntry", n, "b", spec={"bucketName": "x"})])
    for where in ("same", "other"):

        def sb_secret(n, o, where=where):
            b = n if where == "same" else o
            return [
                secret(n, "creds", SB_LABEL),
                sb(b, "sb", n, "creds"),
                env.shoot(b, "s", secret_binding="sb"),
            ]

        def cb_secret(n, o, where=where):
            b = n if where == "same" else o
            ref = {"apiVersion": "v1", "kind": "Secret", "name": "creds", "namespace": n}
            return [
                secret(n, "creds", CB_LABEL),
                cb(b, "cb", ref),
                env.shoot(b, "s", credentials_binding="cb"),
            ]

        def sb_quota(n, o, where=where):
            b = n if where == "same" else o
            quotas = [{"name": "q-elsewhere", "namespace": o}, {"name": "q", "namespace": n}]  # not first
            return [quota(n, "q"), sb(b, "sb", b, "c", quotas), env.shoot(b, "s", secret_binding="sb")]

        def cb_quota(n, o, where=where):
            b = n if where == "same" else o
            quotas = [{"name": "q-elsewhere", "namespace": o}, {"name": "q", "namespace": n}]
            return [quota(n, "q"), cb(b, "cb", quotas=quotas), env.shoot(b, "s", credentials_binding="cb")]

        def cb_internal(n, o, where=where):
            b = n if where == "same" else o
            ref = {"apiVersion": CORE, "kind": "InternalSecret", "name": "is", "namespace": n}
            return [
                env.create(CORE, "InternalSecret", n, "is", CB_LABEL, data={"k": "dg=="}),
                cb(b, "cb", ref),
                env.shoot(b, "s", credentials_binding="cb"),
            ]

        def cb_identity(n, o, where=where):
            b = n if where == "same" else o
            ref = {"apiVersion": SECURITY, "kind": "WorkloadIdentity", "name": "wi", "namespace": n}
            return [
                env.create(SECURITY, "WorkloadIdentity", n, "wi", CB_LABEL, spec={"audiences": ["a"]}),
                cb(b, "cb", ref),
                env.shoot(b, "s", credentials_binding="cb"),
            ]

        case(f"u-sb-secret-{where}", sb_secret)
        case(f"u-cb-secret-{where}", cb_secret)
        case(f"u-sb-quota-{where}", sb_quota)
        case(f"u-cb-quota-{where}", cb_quota)
        case(f"u-cb-internal-{where}", cb_internal)
        case(f"u-cb-identity-{where}", cb_identity)

    # 45-48: referenced, but no Shoot uses the binding (or nothing at all) -> stale.
    def unused_secret(n, o):
        ref = {"apiVersion": "v1", "kind": "Secret", "name": "creds", "namespace": n}
        return [
            secret(n, "creds", {**SB_LABEL, **CB_LABEL}),
            sb(o, "sb", n, "creds"),
            cb(o, "cb", ref),
            env.shoot(o, "s", secret_binding="other-sb", credentials_binding="other-cb"),
        ]

    def unused_quotas(n, o):
        quotas = [{"name": "q", "namespace": n}]
        return [quota(n, "q"), sb(o, "sb", o, "c", quotas), cb(o, "cb", quotas=quotas)]

    def unused_identity(n, o):
        ref = {"apiVersion": SECURITY, "kind": "WorkloadIdentity", "name": "wi", "namespace": n}
        return [env.create(SECURITY, "WorkloadIdentity", n, "wi", CB_LABEL, spec={}), cb(o, "cb", ref)]

    def not_counted(n, o):
        # A control-plane secret, a label value other than "true", a CredentialsBinding naming another
        # kind, a binding to a same-named secret of another namespace: none keeps the Project alive.
        wrong_kind = {"apiVersion": CORE, "kind": "InternalSecret", "name": "cbcreds", "namespace": n}
        return [
            secret(n, "creds", {**SB_LABEL, "gardener.cloud/role": "kubeconfig"}),
            secret(n, "other", {"reference.gardener.cloud/secretbinding": "True"}),
            secret(n, "cbcreds", CB_LABEL),
            secret(n, "other2", SB_LABEL),
            sb(o, "sb", n, "creds"),
            sb(o, "sb2", n, "other"),
            sb(o, "sb4", o, "other2"),
            cb(o, "cb", wrong_kind),
            env.shoot(o, "s1", secret_binding="sb", credentials_binding="cb"),
            env.shoot(o, "s2", secret_binding="sb2"),
            env.shoot(o, "s3", secret_binding="sb4"),
        ]

    case("s-unused-secret", unused_secret)
    case("s-unused-quotas", unused_quotas)
    case("s-unused-identity", unused_identity)
    case("s-nothing", lambda n, o: [])
    case("s-not-counted", not_counted)
    return objs


def test_44_to_48_in_use_by_each_kind_of_reference(env):
    objs = _in_use_cases(env)
    names = sorted(objs)
    h = env.manager(**UNIT)
    for created in objs.values():
        h.seen(*created)
    # Old enough for all of them (created within seconds of each other).
    now = env.age(names[0], 30)
    h.check(*names)
    for name in names:
        fields = stale_fields(env.status(name))
        if name.startswith("u-"):
            assert fields == (None, None), name
        else:
            assert fields == (format_time(now), None), name
    # In use is never marked, however much time passes; the stale ones are deleted in the end.
    for days in (11, 30, 400):
        env.clock.set(now + days * DAY)
        h.check(*names)
        for name in names:
            if name.startswith("u-"):
                assert stale_fields(env.status(name)) == (None, None), (name, days)
    assert all(env.get_project(n) is None for n in names if n.startswith("s-"))
    assert all(
        env.get_project(n)["metadata"].get("deletionTimestamp") is None for n in names if n.startswith("u-")
    )


def test_49_50_grace_period_then_auto_delete_timestamp(env):
    env.project("p49")
    env.project("p50")
    now = env.age("p49", 100)
    env.clock.set(now)
    preset_stale(env, "p49", now - 10 * DAY + timedelta(hours=1))
    preset_stale(env, "p50", now - 10 * DAY)
    h = env.manager(**UNIT)
    h.check("p49", "p50")
    assert stale_fields(env.status("p49")) == (format_time(now - 10 * DAY + timedelta(hours=1)), None)
    assert stale_fields(env.status("p50")) == (format_time(now - 10 * DAY), format_time(now + 5 * DAY))


def test_51_due_project_is_confirmed_then_deleted(env):
    env.project("p51")
    env.project("p51-fin")
    now = env.age("p51", 100)
    for name in ("p51", "p51-fin"):
        preset_stale(env, name, now - 50 * DAY, now)
    env.admin.patch(CORE, "Project", "p51-fin", {"metadata": {"finalizers": ["gardener"]}})
    h = env.manager(**UNIT)
    h.check("p51", "p51-fin")
    assert env.get_project("p51") is None  # no finalizer: gone
    p = env.get_project("p51-fin")
    annotations = p["metadata"]["annotations"]
    assert annotations["confirmation.gardener.cloud/deletion"] == "true"
    assert parse_time(annotations["gardener.cloud/timestamp"]) == now
    assert p["metadata"]["deletionTimestamp"]


def test_deleted_project_goes_through_the_normal_finalizer_flow(env):
    """The stale controller only confirms and deletes; the finalizer's owner finishes the deletion."""
    env.project("pfin")
    env.admin.patch(CORE, "Project", "pfin", {"metadata": {"finalizers": ["gardener"]}})
    now = env.age("pfin", 100)
    preset_stale(env, "pfin", now - 20 * DAY, now - DAY)
    h = env.manager(**UNIT)
    h.check("pfin")
    p = env.get_project("pfin")
    assert p["metadata"]["deletionTimestamp"] and p["metadata"]["finalizers"] == ["gardener"]
    assert p["metadata"]["annotations"]["confirmation.gardener.cloud/deletion"] == "true"
    # While it is being deleted, further checks leave it alone (no status writes, no second DELETE).
    deletes, patches = env.sa_requests("delete", "projects"), env.sa_requests("patch", "projects")
    env.clock.set(now + 30 * DAY)
    h.check("pfin")
    assert (env.sa_requests("delete", "projects"), env.sa_requests("patch", "projects")) == (deletes, patches)
    assert env.admin.get("v1", "Namespace", "garden-pfin")["status"]["phase"] == "Active"
    # The Project controller removes its finalizer when the namespace is gone; then the Project is gone.
    env.admin.patch(CORE, "Project", "pfin", {"metadata": {"finalizers": None}})
    assert env.get_project("pfin") is None


def test_52_lowering_expiration_never_shortens_an_announced_deadline(env):
    env.project("p52")
    now = env.age("p52", 100)
    preset_stale(env, "p52", now - 12 * DAY)
    h = env.manager(**UNIT)
    h.check("p52")
    deadline = now - 12 * DAY + 15 * DAY
    assert env.status("p52")["staleAutoDeleteTimestamp"] == format_time(deadline)
    h.stop()
    # gcm restarted with staleExpirationTimeDays 13: the candidate (now + 1d) is earlier; T stays.
    h = env.manager(minimum=5, grace=10, expiration=13, with_activity=False)
    h.check("p52")
    assert env.status("p52")["staleAutoDeleteTimestamp"] == format_time(deadline)
    assert env.get_project("p52") is not None
    h.stop()
    # Raised to 40: moves later.
    h = env.manager(minimum=5, grace=10, expiration=40, with_activity=False)
    h.check("p52")
    assert env.status("p52")["staleAutoDeleteTimestamp"] == format_time(now - 12 * DAY + 40 * DAY)


def test_53_raising_the_grace_period_clears_the_timestamp(env):
    env.project("p53")
    now = env.age("p53", 100)
    preset_stale(env, "p53", now - 12 * DAY, now + 3 * DAY)
    h = env.manager(minimum=5, grace=20, expiration=30, with_activity=False)
    h.check("p53")
    assert stale_fields(env.status("p53")) == (format_time(now - 12 * DAY), None)
    assert h.check("p53")["p53"] == Result(requeue_after=3600.0)


def test_54_missing_namespace_waits_for_the_namespace_watch(env):
    """A Project whose namespace is not there yet (the Project controller has not created it) is not a
    reconcile error: nothing is written, and the namespace's create event runs the check."""
    env.project("p54", namespace="garden-p54-late", create_ns=False)
    env.age("p54", 100)
    before = env.get_project("p54")
    h = env.manager(**UNIT)
    outcome = h.check("p54")["p54"]
    assert outcome == Result(requeue_after=3600.0)  # no error, so no reconcile_errors_total either
    assert env.get_project("p54")["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert env.sa_requests("patch", "projects") == 0
    errors = h.mgr.registry.get_sample_value(
        "controller_runtime_reconcile_errors_total", {"controller": "project-stale"}
    )
    assert not errors
    first = h.stale.count("p54")
    env.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-p54-late"}})
    env.wait_for(lambda: h.stale.count("p54") > first, what="check after the namespace was created")
    env.wait_for(lambda: env.status("p54").get("staleSinceTimestamp"), what="p54 marked stale")


def test_56_young_projects_are_consistently_not_stale(env):
    """Gardener's integration variants (defaults 30/14/90), all while the Project is still young."""
    names = [
        "i-plain",
        "i-skip",
        "i-active",
        "i-shoot",
        "i-backupentry",
        "i-sb-secret",
        "i-cb-secret",
        "i-quota",
    ]
    for name in names:
        annotations = {"project.gardener.cloud/skip-stale-check": "true"} if name == "i-skip" else None
        env.project(name, ns_annotations=annotations)
    created = env.created(names[0])
    objs = [
        env.shoot("garden-i-shoot", "s"),
        env.create(CORE, "BackupEntry", "garden-i-backupentry", "b", spec={"bucketName": "x"}),
        env.create("v1", "Secret", "garden-i-sb-secret", "c", SB_LABEL),
        env.create(CORE, "SecretBinding", "garden-i-sb-secret", "sb", secretRef={"name": "c"}),
        env.shoot("garden-i-sb-secret", "s", secret_binding="sb"),
        env.create("v1", "Secret", "garden-i-cb-secret", "c", CB_LABEL),
        env.create(
            SECURITY,
            "CredentialsBinding",
            "garden-i-cb-secret",
            "cb",
            credentialsRef={
                "apiVersion": "v1",
                "kind": "Secret",
                "name": "c",
                "namespace": "garden-i-cb-secret",
            },
        ),
        env.shoot("garden-i-cb-secret", "s", credentials_binding="cb"),
        env.create(CORE, "Quota", "garden-i-quota", "q", spec={}),
        env.create(
            CORE,
            "SecretBinding",
            "garden-i-quota",
            "sb",
            quotas=[{"name": "q", "namespace": "garden-i-quota"}],
        ),
        env.shoot("garden-i-quota", "s", secret_binding="sb"),
    ]
    for name in names:
        preset_stale(env, name, created - 40 * DAY, created + 40 * DAY)
    env.patch_status("i-active", lastActivityTimestamp=format_time(created))
    h = env.manager()
    h.seen(*objs)
    env.clock.set(created + 15 * DAY)  # half of minimumLifetimeDays
    for _ in range(2):
        h.check(*names)
        assert {n: stale_fields(env.status(n)) for n in names} == {n: (None, None) for n in names}


def test_57_stale_since_then_auto_delete_exactly_90_days_later(env):
    env.project("p57")
    now = env.age("p57", 30)
    env.patch_status("p57", lastActivityTimestamp=format_time(now - 30 * DAY))
    h = env.manager()
    h.check("p57")
    status = env.status("p57")
    assert (
        status["staleSinceTimestamp"] == format_time(now) and status.get("staleAutoDeleteTimestamp") is None
    )
    env.clock.set(now + 14 * DAY)
    h.check("p57")
    status = env.status("p57")
    since, auto = parse_time(status["staleSinceTimestamp"]), parse_time(status["staleAutoDeleteTimestamp"])
    assert since == now and auto - since == 90 * DAY


def test_58_unused_project_lifecycle_with_defaults(env):
    env.project("p58")
    now = env.age("p58", 30)
    h = env.manager()
    h.check("p58")
    assert stale_fields(env.status("p58")) == (format_time(now), None)
    env.clock.set(now + 14 * DAY - timedelta(seconds=1))
    h.check("p58")
    assert stale_fields(env.status("p58")) == (format_time(now), None)  # grace period not over
    env.clock.set(now + 14 * DAY)
    h.check("p58")
    assert stale_fields(env.status("p58")) == (format_time(now), format_time(now + 90 * DAY))
    env.clock.set(now + 90 * DAY - timedelta(seconds=1))
    h.check("p58")
    assert env.get_project("p58") is not None  # never early
    env.clock.set(now + 14 * DAY + 90 * DAY)
    h.check("p58")
    assert env.get_project("p58") is None


def test_59_successful_reconcile_requeues_after_stale_sync_period(env):
    env.project("p59")
    env.project("p59-none", namespace=None)
    h = env.manager(sync_period=0.3, with_activity=False)
    # No events after the create: only the periodic requeue runs the check again.
    env.wait_for(lambda: h.stale.count("p59") >= 4 and h.stale.count("p59-none") >= 4, what="periodic checks")
    outcomes = [o for _, o in h.stale.finished["p59"]] + [o for _, o in h.stale.finished["p59-none"]]
    assert all(o == Result(requeue_after=0.3) for o in outcomes)


def test_status_is_patched_only_when_something_changes(env):
    names = ["w-stale", "w-scheduled", "w-inuse", "w-clear"]
    for name in names:
        env.project(name)
    shoot = env.shoot("garden-w-inuse", "s")
    now = env.age("w-stale", 100)
    preset_stale(env, "w-scheduled", now - 12 * DAY, now + 3 * DAY)
    preset_stale(env, "w-clear", now - 12 * DAY, now + 3 * DAY)
    h = env.manager(**UNIT)
    h.seen(shoot)
    env.patch_status("w-clear", lastActivityTimestamp=format_time(now - DAY))  # active again: cleared
    h.check(*names)
    first = env.sa_requests("patch", "projects")
    assert first == 2  # w-stale marked, w-clear cleared; the others already match
    for _ in range(3):
        h.check(*names)
    assert env.sa_requests("patch", "projects") == first


def test_expiration_shorter_than_grace_deletes_in_the_pass_that_assigns(env):
    env.project("pshort")
    env.admin.patch(CORE, "Project", "pshort", {"metadata": {"finalizers": ["gardener"]}})
    now = env.age("pshort", 100)
    preset_stale(env, "pshort", now - 10 * DAY)
    h = env.manager(minimum=5, grace=10, expiration=5, with_activity=False)
    h.check("pshort")
    p = env.get_project("pshort")
    assert p["status"]["staleAutoDeleteTimestamp"] == format_time(now - 5 * DAY)
    assert p["metadata"]["deletionTimestamp"]


def test_gauges_count_stale_and_scheduled_projects(env):
    for name in ("g-1", "g-2", "g-3"):
        env.project(name)
    env.project("g-skip", ns_annotations={"project.gardener.cloud/skip-stale-check": "true"})
    now = env.age("g-1", 100)
    preset_stale(env, "g-2", now - 11 * DAY)
    preset_stale(env, "g-3", now - 11 * DAY)
    h = env.manager(**UNIT)
    env.clock.set(now)
    h.check("g-1", "g-2", "g-3")
    for name in ("g-1", "g-2", "g-3"):
        h.sync(name)
    sample = h.mgr.registry.get_sample_value
    assert (sample("gcm_projects_stale"), sample("gcm_projects_auto_delete_scheduled")) == (3.0, 2.0)
    env.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "garden-unrelated"}})
    h.seen(env.shoot("garden-g-2", "s"))
    h.check("g-2")
    h.sync("g-2")
    assert (sample("gcm_projects_stale"), sample("gcm_projects_auto_delete_scheduled")) == (2.0, 1.0)


def test_auto_deleted_counter_counts_the_projects_the_controller_deleted(env):
    for name in ("d-1", "d-2", "d-later"):
        env.project(name)
    now = env.age("d-1", 100)
    preset_stale(env, "d-1", now - 50 * DAY, now)
    preset_stale(env, "d-2", now - 50 * DAY, now - DAY)
    preset_stale(env, "d-later", now - 50 * DAY, now + DAY)  # announced, not due
    h = env.manager(**UNIT)
    sample = h.mgr.registry.get_sample_value
    h.check("d-1", "d-2", "d-later")  # the manager's first pass may have deleted them already
    assert env.get_project("d-1") is None and env.get_project("d-2") is None
    assert env.get_project("d-later") is not None
    assert sample("gcm_projects_auto_deleted_total") == 2.0
    h.check("d-1", "d-2", "d-later")  # gone ones are not counted again
    assert sample("gcm_projects_auto_deleted_total") == 2.0


def test_secrets_are_cached_without_data(env):
    from gcm.cmd.app import build_manager
    from gcm.controllers.project.stale.cache import secret_metadata_only

    env.project("sec")
    secret = env.create(
        "v1",
        "Secret",
        "garden-sec",
        "creds",
        SB_LABEL,
        data={"password": "c2VjcmV0"},
        stringData={"token": "t"},
    )
    h = env.manager(**UNIT)
    h.seen(secret)
    (cached,) = h.mgr.client.list("v1", "Secret", namespace="garden-sec", label_selector=SB_LABEL)["items"]
    assert set(cached) == {"apiVersion", "kind", "metadata"} and "managedFields" not in cached["metadata"]
    # gcm's own Manager (gcm.cmd.app.build_manager) is constructed with that transform.
    mgr = build_manager(env.config(), h.sa)
    assert mgr.cache.options[("v1", "Secret")].transform is secret_metadata_only
