"""``python -m gcm stale-report`` over a mixed set of Projects: every state, table and JSON, read-only,
run as gcm's ServiceAccount, and in agreement with what the controller then does."""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import yaml

from framework.meta.time import format_time

CORE = "core.gardener.cloud/v1beta1"
DAY = timedelta(hours=24)
ROOT = Path(__file__).resolve().parents[4]
COLUMNS = ["PROJECT", "NAMESPACE", "STATE", "REASON", "STALE-SINCE", "AUTO-DELETE-AT"]


def write_config(tmp_path: Path, minimum: int, grace: int, expiration: int) -> str:
    path = tmp_path / f"config-{minimum}-{grace}-{expiration}.yaml"
    doc = {
        "apiVersion": "controllermanager.config.gardener.cloud/v1alpha1",
        "kind": "ControllerManagerConfiguration",
        "controllers": {
            "project": {
                "minimumLifetimeDays": minimum,
                "staleGracePeriodDays": grace,
                "staleExpirationTimeDays": expiration,
            }
        },
    }
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def mixed_projects(env) -> tuple:
    """Projects for every state; returns (creation time, the "now" of the report: creation + 20d)."""
    for name in ("r-plain", "r-active", "r-inuse", "r-stale", "r-scheduled", "r-due", "r-deleting"):
        env.project(name)
    env.project("r-excluded", ns_annotations={"project.gardener.cloud/skip-stale-check": "true"})
    env.project("r-nons", namespace=None)
    env.project("r-missing", namespace="garden-r-missing", create_ns=False)
    env.shoot("garden-r-inuse", "web")
    env.project("r-secret")
    env.create("v1", "Secret", "garden-r-secret", "creds", {"reference.gardener.cloud/secretbinding": "true"})
    env.create(
        CORE,
        "SecretBinding",
        "garden-r-inuse",
        "sb",
        secretRef={"name": "creds", "namespace": "garden-r-secret"},
    )
    env.shoot("garden-r-inuse", "uses-sb", secret_binding="sb")
    created = env.created("r-plain")
    now = created + 20 * DAY
    env.patch_status("r-active", lastActivityTimestamp=format_time(now - 2 * DAY))
    env.patch_status("r-scheduled", staleSinceTimestamp=format_time(now - 12 * DAY))
    env.patch_status(
        "r-due",
        staleSinceTimestamp=format_time(now - 40 * DAY),
        staleAutoDeleteTimestamp=format_time(now - DAY),
    )
    env.admin.patch(CORE, "Project", "r-deleting", {"metadata": {"finalizers": ["gardener"]}})
    env.admin.delete(CORE, "Project", "r-deleting")
    return created, now


def run_report(env, tmp_path, output: str, minimum=5, grace=10, expiration=15) -> tuple[int, str]:
    from gcm.cmd.stale_report import run

    args = argparse.Namespace(
        config=write_config(tmp_path, minimum, grace, expiration),
        kubeconfig=env.embedded.gcm_kubeconfig,
        output=output,
    )
    out = io.StringIO()
    code = run(args, clock=env.clock, out=out)
    return code, out.getvalue()


def test_stale_report_mixed_projects(env, tmp_path):
    _, now = mixed_projects(env)
    env.clock.set(now)
    env.server.reset_request_counts()
    code, out = run_report(env, tmp_path, "json", minimum=25)
    assert code == 0
    doc = json.loads(out)
    assert doc["now"] == format_time(now)
    assert doc["settings"] == {
        "minimumLifetimeDays": 25,
        "staleGracePeriodDays": 10,
        "staleExpirationTimeDays": 15,
    }
    rows = {r["project"]: r for r in doc["projects"]}
    states = {name: r["state"] for name, r in rows.items()}
    # minimumLifetimeDays 25 at creation + 20d: every Project is young except the skipped ones.
    assert states == {
        "r-active": "young",
        "r-deleting": "deleting",
        "r-due": "young",
        "r-excluded": "excluded",
        "r-inuse": "young",
        "r-missing": "error",
        "r-nons": "no-namespace",
        "r-scheduled": "young",
        "r-secret": "young",
        "r-stale": "young",
        "r-plain": "young",
    }

    code, out = run_report(env, tmp_path, "json", minimum=5)
    rows = {r["project"]: r for r in json.loads(out)["projects"]}
    assert {n: r["state"] for n, r in rows.items()} == {
        "r-active": "active",
        "r-deleting": "deleting",
        "r-due": "auto-delete-due",
        "r-excluded": "excluded",
        "r-inuse": "in-use",
        "r-missing": "error",
        "r-nons": "no-namespace",
        "r-scheduled": "auto-delete-scheduled",
        "r-secret": "in-use",
        "r-stale": "stale",
        "r-plain": "stale",
    }
    assert rows["r-inuse"]["reason"] == "in use by Shoot garden-r-inuse/uses-sb"
    assert rows["r-secret"]["reason"] == (
        "in use by Secret garden-r-secret/creds via SecretBinding garden-r-inuse/sb "
        "used by Shoot garden-r-inuse/uses-sb"
    )
    assert rows["r-stale"]["staleSince"] == format_time(now) and rows["r-stale"]["autoDeleteAt"] is None
    assert rows["r-scheduled"]["autoDeleteAt"] == format_time(now - 12 * DAY + 15 * DAY)
    assert rows["r-due"]["autoDeleteAt"] == format_time(now - DAY)
    assert "garden-r-missing" in rows["r-missing"]["reason"]
    assert rows["r-active"]["reason"] == (
        f"last activity {format_time(now - 2 * DAY)}, active until {format_time(now + 3 * DAY)}"
    )

    # Table: the columns in order, one row per Project, sorted.
    code, out = run_report(env, tmp_path, "table", minimum=5)
    assert code == 0
    settings, blank, *lines = out.splitlines()
    # The settings the report judged with and where they came from, above the table.
    config = str(tmp_path / "config-5-10-15.yaml")
    assert settings == (
        f"settings (controllers.project): minimumLifetimeDays=5 ({config}), "
        f"staleGracePeriodDays=10 ({config}), staleExpirationTimeDays=15 ({config}); now {format_time(now)}"
    )
    assert blank == ""
    assert lines[0].split() == COLUMNS
    assert [line.split()[0] for line in lines[1:]] == sorted(rows)
    due = next(line for line in lines if line.startswith("r-due "))
    assert due.split()[1:3] == ["garden-r-due", "auto-delete-due"]
    assert due.split()[-2:] == [format_time(now - 40 * DAY), format_time(now - DAY)]
    nons = next(line for line in lines if line.startswith("r-nons "))
    assert nons.split()[1] == "-" and nons.split()[-2:] == ["-", "-"]

    # Read-only: gcm's ServiceAccount only read (and the reads were allowed).
    verbs = {
        (k.verb, k.code) for k in env.server.request_counts() if k.user.startswith("system:serviceaccount")
    }
    assert {v for v, _ in verbs} <= {"get", "list"} and all(code == 200 for _, code in verbs)
    assert env.get_project("r-due") is not None

    # One source of truth: the controller now does what the report said.
    h = env.manager(minimum=5, grace=10, expiration=15, with_activity=False)
    names = [n for n in rows if n not in ("r-missing",)]
    h.check(*names)
    for name in names:
        status = env.status(name)
        if rows[name]["state"] == "auto-delete-due":
            p = env.get_project(name)
            assert p is None or p["metadata"].get("deletionTimestamp")
            continue
        if rows[name]["state"] in ("deleting", "no-namespace"):
            continue
        assert (status.get("staleSinceTimestamp"), status.get("staleAutoDeleteTimestamp")) == (
            rows[name]["staleSince"],
            rows[name]["autoDeleteAt"],
        ), name


def test_stale_report_cli_process(env, tmp_path):
    env.project("c-old")
    env.project("c-used")
    env.shoot("garden-c-used", "s")
    config = write_config(tmp_path, 0, 1, 2)  # real clock: with 0 days nothing is young
    proc_env = {k: v for k, v in os.environ.items() if not k.startswith("KUBE")} | {"HOME": str(tmp_path)}
    cmd = [sys.executable, "-m", "gcm", "stale-report", "--config", config]
    r = subprocess.run(
        [*cmd, "--kubeconfig", env.embedded.gcm_kubeconfig, "-o", "json"],
        cwd=ROOT,
        env=proc_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    states = {p["project"]: p["state"] for p in json.loads(r.stdout)["projects"]}
    assert states == {"c-old": "stale", "c-used": "in-use"}
    r = subprocess.run(
        [*cmd, "--kubeconfig", env.embedded.gcm_kubeconfig],
        cwd=ROOT,
        env=proc_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0 and r.stdout.splitlines()[2].split() == COLUMNS
    assert r.stdout.startswith(f"settings (controllers.project): minimumLifetimeDays=0 ({config}), ")
    assert env.status("c-old") == {}  # nothing written
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\nkind: ControllerManagerConfiguration\n"
        "controllers:\n  project:\n    minimumLifetimeDays: -1\n"
    )
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "gcm",
            "stale-report",
            "--config",
            str(bad),
            "--kubeconfig",
            env.embedded.gcm_kubeconfig,
        ],
        cwd=ROOT,
        env=proc_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "minimumLifetimeDays" in r.stderr


def test_stale_report_names_defaults_and_config_values(env, tmp_path):
    """Settings the file leaves out are reported as defaults, in the table header and in JSON."""
    env.project("d-one")
    config = tmp_path / "partial.yaml"
    config.write_text(
        "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\nkind: ControllerManagerConfiguration\n"
        "controllers:\n  project:\n    staleGracePeriodDays: 7\n"
    )
    from gcm.cmd.stale_report import run

    for output in ("table", "json"):
        args = argparse.Namespace(config=str(config), kubeconfig=env.embedded.gcm_kubeconfig, output=output)
        out = io.StringIO()
        assert run(args, clock=env.clock, out=out) == 0
        if output == "table":
            assert (
                out.getvalue()
                .splitlines()[0]
                .startswith(
                    f"settings (controllers.project): minimumLifetimeDays=30 (default), "
                    f"staleGracePeriodDays=7 ({config}), staleExpirationTimeDays=90 (default); now "
                )
            )
        else:
            doc = json.loads(out.getvalue())
            assert doc["settings"] == {
                "minimumLifetimeDays": 30,
                "staleGracePeriodDays": 7,
                "staleExpirationTimeDays": 90,
            }
            assert doc["settingsSources"] == {
                "minimumLifetimeDays": "default",
                "staleGracePeriodDays": str(config),
                "staleExpirationTimeDays": "default",
            }
