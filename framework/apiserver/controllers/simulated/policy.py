"""How long each simulated stage takes (KWOK's stages' delays, fixed instead of jittered)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SimulationPolicy:
    """The stage delays of simulated nodes, in seconds (``APIServer(nodes=N, simulation=...)``).

    - ``pod_start_delay``: a bound Pod is ``Pending`` (containers ``ContainerCreating``) this long,
      then ``Running``; containers without a readiness probe are ready at once, those with one after
      its ``initialDelaySeconds``;
    - ``job_pod_duration``: a Pod a Job owns runs this long, then ``Succeeded`` (exit code 0);
    - ``container_stop_delay``: containers stop this long after a graceful deletion asks them to (as
      a container that exits on SIGTERM), never later than the grace period; ``None``: they ignore
      SIGTERM and the Pod goes when the grace period ends (KWOK's ``pod-delete`` stage);
    - ``lease_renew_interval``: how often each node renews its Lease in ``kube-node-lease`` (the
      kubelet's 10 s); ``node_status_interval``: how often it re-posts its status (heartbeats);
    - ``system_addons``: run kubeadm's ``kube-system`` add-ons (``coredns``, ``kube-dns``,
      ``kube-proxy``) as simulated workloads, as every kubeadm-made cluster has them.
    """

    pod_start_delay: float = 0.1
    job_pod_duration: float = 0.5
    container_stop_delay: float | None = 0.1
    lease_renew_interval: float = 10.0
    node_status_interval: float = 60.0
    system_addons: bool = True
