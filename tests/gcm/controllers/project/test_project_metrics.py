"""``gcm_projects{phase}``: the Projects of the manager's cache by phase, every phase exported (0 too),
a phase gcm does not know (or none yet) as ``Unknown``; a deleted Project leaves the count. Seen on the
manager's registry, as ``/metrics`` serves it."""

from __future__ import annotations

from gcm.controllers.project.project.metrics import PHASES, UNKNOWN_PHASE
from tests.gcm.controllers.project import project_harness as h

P = h.P


def by_phase(env: h.Env) -> dict[str, float | None]:
    assert env.mgr is not None
    sample = env.mgr.registry.get_sample_value
    return {phase: sample("gcm_projects", {"phase": phase}) for phase in (*PHASES, UNKNOWN_PHASE)}


def test_every_phase_is_exported_at_zero_without_projects(env):
    assert by_phase(env) == dict.fromkeys((*PHASES, UNKNOWN_PHASE), 0.0)


def test_projects_are_counted_by_phase(env):
    env.create_project("ready", namespace="garden-ready")
    env.create_namespace("garden-failed")  # without the project labels: the Project fails
    env.create_project("failed", namespace="garden-failed")
    env.create_project("ending", namespace="garden-ending")
    env.wait_phase("ready", "Ready")
    env.wait_phase("failed", "Failed")
    env.wait_phase("ending", "Ready")
    env.create_shoot("s", "garden-ending")  # keeps the Project Terminating once deleted
    h.wait_for(
        lambda: env.mgr.client.list(P, "Shoot", namespace="garden-ending", metadata_only=True)["items"],
        message="shoot cached",
    )
    env.delete_project("ending")
    env.wait_phase("ending", "Terminating")
    expected = {"Pending": 0.0, "Ready": 1.0, "Failed": 1.0, "Terminating": 1.0, UNKNOWN_PHASE: 0.0}
    h.wait_for(lambda: by_phase(env) == expected, message=f"counts {expected}, last {by_phase(env)}")

    # A phase that is not one of Gardener's is counted as Unknown (the label set stays fixed).
    env.admin.patch(P, "Project", "ready", {"status": {"phase": "Bogus"}}, subresource="status")
    expected = {**expected, "Ready": 0.0, UNKNOWN_PHASE: 1.0}
    h.wait_for(lambda: by_phase(env) == expected, message=f"counts {expected}, last {by_phase(env)}")

    env.admin.delete(P, "Shoot", "s", "garden-ending")
    env.wait_gone(P, "Project", "ending")
    expected = {**expected, "Terminating": 0.0}
    h.wait_for(lambda: by_phase(env) == expected, message=f"counts {expected}, last {by_phase(env)}")
