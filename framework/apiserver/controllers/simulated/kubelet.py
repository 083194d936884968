"""The simulated kubelet of every simulated node: moves the Pods bound to them through the kubelet's
status (KWOK's ``pod-create``, ``pod-ready``, ``pod-complete`` and ``pod-delete`` stages, timed by
:class:`~.policy.SimulationPolicy`), ends graceful deletions, and answers ``pods/log``.

No container runs: a Pod is ``Pending`` with its containers ``ContainerCreating``, then ``Running``
with every container started (init containers ``Completed``), ready at once or after its readiness
probe's ``initialDelaySeconds``; a Pod owned by a Job then ends ``Succeeded`` with exit code 0. Other
Pods run until deleted, whatever their ``restartPolicy``.
"""

from __future__ import annotations

import asyncio
import hashlib
from datetime import datetime

from framework.apiserver.controllers.manager import WorkQueue
from framework.apiserver.controllers.simulated.context import KUBELET, Context, controller_ref
from framework.apiserver.controllers.simulated.nodes import NodeController
from framework.apiserver.controllers.simulated.pods import is_terminal, set_pod_condition
from framework.apiserver.encoding import timefmt
from framework.apiserver.machinery import errors
from framework.apiserver.registry.rest.objects import deep_copy
from framework.meta.time import now, parse_time


def _names(containers: list[dict]) -> str:
    return "[" + " ".join(c.get("name", "") for c in containers) + "]"


def _container_id(pod: dict, name: str) -> str:
    digest = hashlib.sha256(f"{pod['metadata'].get('uid')}/{name}".encode()).hexdigest()
    return f"simulated://{digest}"


def _image_id(image: str) -> str:
    return f"{image.split('@')[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def _waiting(c: dict, reason: str) -> dict:
    return {
        "name": c.get("name", ""),
        "image": c.get("image", ""),
        "imageID": "",
        "ready": False,
        "restartCount": 0,
        "started": False,
        "state": {"waiting": {"reason": reason}},
        "lastState": {},
    }


def _started(pod: dict, c: dict, state: dict, ready: bool, started: bool) -> dict:
    """The status of a container the runtime created: with its container and image IDs."""
    return {
        "name": c.get("name", ""),
        "image": c.get("image", ""),
        "imageID": _image_id(c.get("image", "")),
        "containerID": _container_id(pod, c.get("name", "")),
        "ready": ready,
        "restartCount": 0,
        "started": started,
        "state": state,
        "lastState": {},
    }


def _running(pod: dict, c: dict, started_at: str, ready: bool) -> dict:
    return _started(pod, c, {"running": {"startedAt": started_at}}, ready, True)


def _terminated(pod: dict, c: dict, started_at: str, finished_at: str) -> dict:
    state = {
        "terminated": {
            "exitCode": 0,
            "reason": "Completed",
            "startedAt": started_at,
            "finishedAt": finished_at,
            "containerID": _container_id(pod, c.get("name", "")),
        }
    }
    return _started(pod, c, state, False, False)


def _probe_delay(c: dict) -> int:
    probe = c.get("readinessProbe")
    return int(probe.get("initialDelaySeconds") or 0) if isinstance(probe, dict) else 0


class Kubelet:
    """The kubelets of the simulated nodes (one controller: the nodes are alike)."""

    def __init__(self, ctx: Context, nodes: NodeController) -> None:
        self.ctx = ctx
        self.nodes = nodes
        self.queue = WorkQueue("simulated-kubelet", self.sync)
        self.queues = [self.queue]
        # Pod uid -> loop time its next stage is due (in memory: after a restart stages are due at once).
        self.due: dict[str, float] = {}
        self.pod_ips: dict[str, int] = {}

    def manages(self, pod: dict) -> bool:
        return (pod.get("spec") or {}).get("nodeName") in self.nodes.names

    def forget(self, uid: str) -> None:
        self.due.pop(uid, None)

    def _wait(self, key: tuple[str, str], uid: str, delay: float) -> bool:
        """True once ``delay`` has passed since the stage began; else requeue ``key`` for then."""
        loop = asyncio.get_running_loop()
        due = self.due.setdefault(uid, loop.time() + delay)
        left = due - loop.time()
        if left > 0:
            self.queue.add_later(key, left)
            return False
        del self.due[uid]
        return True

    def sync(self, key: tuple[str, str]) -> None:
        ctx = self.ctx
        pod = ctx.get(ctx.pods, *key)
        if pod is None or not self.manages(pod):
            return
        uid = pod["metadata"]["uid"]
        status = pod.get("status") or {}
        if pod["metadata"].get("deletionTimestamp"):
            self._terminate(key, pod)
        elif is_terminal(pod):
            return
        elif not status.get("hostIP"):
            self._start(pod)
            self.due[uid] = asyncio.get_running_loop().time() + ctx.policy.pod_start_delay
            self.queue.add_later(key, ctx.policy.pod_start_delay)
        elif status.get("phase") == "Pending":
            if self._wait(key, uid, ctx.policy.pod_start_delay):
                self._run(pod)
                self.queue.add(key)
        else:
            self._progress(key, pod)

    # -- stages --------------------------------------------------------------------------------------

    def _start(self, pod: dict) -> None:
        """Accepted by the kubelet: ``Pending``, sandbox not ready, containers being created."""
        spec = pod.get("spec") or {}
        node = spec["nodeName"]
        host_ip = self.nodes.address(node) or ""
        status = deep_copy(pod.get("status") or {})
        inits, containers = spec.get("initContainers") or [], spec.get("containers") or []
        status.update(
            {
                "phase": "Pending",
                "hostIP": host_ip,
                "hostIPs": [{"ip": host_ip}],
                "startTime": status.get("startTime") or timefmt.now_time(),
            }
        )
        set_pod_condition(status, "PodReadyToStartContainers", "False", "", "")
        if inits:
            set_pod_condition(
                status,
                "Initialized",
                "False",
                "ContainersNotInitialized",
                f"containers with incomplete status: {_names(inits)}",
            )
            status["initContainerStatuses"] = [_waiting(c, "PodInitializing") for c in inits]
        else:
            set_pod_condition(status, "Initialized", "True", "", "")
        unready = f"containers with unready status: {_names(containers)}"
        set_pod_condition(status, "Ready", "False", "ContainersNotReady", unready)
        set_pod_condition(status, "ContainersReady", "False", "ContainersNotReady", unready)
        waiting = "PodInitializing" if inits else "ContainerCreating"
        status["containerStatuses"] = [_waiting(c, waiting) for c in containers]
        self.ctx.write_status(self.ctx.pods, pod, status, KUBELET)

    def _pod_ip(self, pod: dict) -> str:
        spec = pod.get("spec") or {}
        if spec.get("hostNetwork"):
            return self.nodes.address(spec["nodeName"]) or ""
        index = self.nodes.names[spec["nodeName"]]
        n = self.pod_ips.get(spec["nodeName"], 0) % 250 + 2
        self.pod_ips[spec["nodeName"]] = n
        return f"10.244.{index}.{n}"

    def _run(self, pod: dict) -> None:
        """Sandbox ready, init containers completed, containers started."""
        spec = pod.get("spec") or {}
        status = deep_copy(pod.get("status") or {})
        at = timefmt.now_time()
        ip = self._pod_ip(pod)
        status.update({"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}]})
        inits = spec.get("initContainers") or []
        if inits:
            status["initContainerStatuses"] = [
                _running(pod, c, at, _probe_delay(c) == 0)
                if c.get("restartPolicy") == "Always"  # a sidecar keeps running
                else {**_terminated(pod, c, at, at), "ready": True}
                for c in inits
            ]
        status["containerStatuses"] = [
            _running(pod, c, at, _probe_delay(c) == 0) for c in spec.get("containers") or []
        ]
        set_pod_condition(status, "PodReadyToStartContainers", "True", "", "")
        set_pod_condition(status, "Initialized", "True", "", "")
        self._readiness(pod, status)
        self.ctx.write_status(self.ctx.pods, pod, status, KUBELET)

    def _readiness(self, pod: dict, status: dict) -> None:
        """``ContainersReady`` and ``Ready`` from the containers and the readiness gates."""
        statuses = list(status.get("containerStatuses") or []) + [
            s for s in status.get("initContainerStatuses") or [] if "running" in (s.get("state") or {})
        ]
        unready = [s for s in statuses if not s.get("ready")]
        if unready:
            message = f"containers with unready status: {_names(unready)}"
            set_pod_condition(status, "ContainersReady", "False", "ContainersNotReady", message)
            set_pod_condition(status, "Ready", "False", "ContainersNotReady", message)
            return
        set_pod_condition(status, "ContainersReady", "True", "", "")
        conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
        for gate in (pod.get("spec") or {}).get("readinessGates") or []:
            ctype = gate.get("conditionType", "")
            if ctype not in conditions:
                message = f'corresponding condition of pod readiness gate "{ctype}" does not exist.'
            elif conditions[ctype] != "True":
                message = f'the status of pod readiness gate "{ctype}" is not "True", but {conditions[ctype]}'
            else:
                continue
            set_pod_condition(status, "Ready", "False", "ReadinessGatesNotReady", message)
            return
        set_pod_condition(status, "Ready", "True", "", "")

    def _progress(self, key: tuple[str, str], pod: dict) -> None:
        """A running Pod: readiness probes pass after their initial delay; a Job's Pod completes."""
        spec = pod.get("spec") or {}
        status = deep_copy(pod.get("status") or {})
        started = min(
            (
                parse_time(((s.get("state") or {}).get("running") or {}).get("startedAt"))
                for s in status.get("containerStatuses") or []
            ),
            key=lambda t: t or datetime.max.replace(tzinfo=now().tzinfo),
            default=None,
        )
        running_for = (now() - started).total_seconds() if started else 0.0
        waits = []
        containers = {
            c.get("name"): c for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])
        }
        for s in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
            if "running" in (s.get("state") or {}) and not s.get("ready"):
                delay = _probe_delay(containers.get(s.get("name"), {}))
                if running_for >= delay:
                    s["ready"] = True
                else:
                    waits.append(delay - running_for)
        self._readiness(pod, status)
        ref = controller_ref(pod)
        jobs = self.ctx.jobs
        job_pod = ref is not None and (ref.get("apiVersion"), ref.get("kind")) == (
            jobs.api_version,
            jobs.kind,
        )
        if job_pod and self._wait(key, pod["metadata"]["uid"], self.ctx.policy.job_pod_duration):
            self._complete(pod, status)
            return
        self.ctx.write_status(self.ctx.pods, pod, status, KUBELET)
        if waits:
            self.queue.add_later(key, min(waits) + 0.05)

    def _complete(self, pod: dict, status: dict) -> None:
        at = timefmt.now_time()
        spec = pod.get("spec") or {}

        def finished(s: dict) -> dict:
            running = (s.get("state") or {}).get("running")
            if running is None:
                return s
            c = {"name": s.get("name"), "image": s.get("image", "")}
            return _terminated(pod, c, running.get("startedAt") or at, at)

        status["containerStatuses"] = [finished(s) for s in status.get("containerStatuses") or []]
        if spec.get("initContainers"):
            status["initContainerStatuses"] = [finished(s) for s in status.get("initContainerStatuses") or []]
        status["phase"] = "Succeeded"
        set_pod_condition(status, "PodReadyToStartContainers", "False", "", "")
        set_pod_condition(status, "Initialized", "True", "PodCompleted", "")
        set_pod_condition(status, "Ready", "False", "PodCompleted", "")
        set_pod_condition(status, "ContainersReady", "False", "PodCompleted", "")
        self.ctx.write_status(self.ctx.pods, pod, status, KUBELET)

    def _terminate(self, key: tuple[str, str], pod: dict) -> None:
        """A graceful deletion: the containers stop, then the kubelet deletes the Pod for good."""
        meta = pod["metadata"]
        grace = meta.get("deletionGracePeriodSeconds")
        if grace == 0:
            return  # already deleted for good; only finalizers keep it
        deadline = parse_time(meta["deletionTimestamp"])
        left = max((deadline - now()).total_seconds(), 0.0) if deadline else 0.0
        stop = self.ctx.policy.container_stop_delay
        delay = left if stop is None else min(stop, left)
        if self._wait(key, meta["uid"], delay):
            self.ctx.delete(self.ctx.pods, pod, grace=0)

    # -- pods/log --------------------------------------------------------------------------------------

    def log(self, pod: dict, container: str | None, previous: bool = False) -> bytes:
        """The log of a container: always empty (nothing runs, and a follow ends at once); 400 as the
        kubelet answers for a container that is not valid or has not started, or for ``previous``
        (no container ever restarts)."""
        spec = pod.get("spec") or {}
        name = pod["metadata"]["name"]
        containers = spec.get("containers") or []
        inits = spec.get("initContainers") or []
        every = containers + inits + (spec.get("ephemeralContainers") or [])
        if not container:
            if len(containers) != 1:
                message = (
                    f"a container name must be specified for pod {name}, choose one of: {_names(containers)}"
                )
                if inits:
                    message += f" or one of the init containers: {_names(inits)}"
                raise errors.bad_request(message)
            container = containers[0].get("name", "")
        if not any(c.get("name") == container for c in every):
            raise errors.bad_request(f"container {container} is not valid for pod {name}")
        if not spec.get("nodeName"):
            return b""
        if previous:
            raise errors.bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        status = pod.get("status") or {}
        for s in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
            waiting = (s.get("state") or {}).get("waiting")
            if s.get("name") == container and waiting is not None:
                reason = waiting.get("reason", "")
                raise errors.bad_request(
                    f'container "{container}" in pod "{name}" is waiting to start: {reason}'
                )
        return b""
