"""Simulated nodes (opt-in, as KWOK does it): Ready Nodes with Lease heartbeats, a scheduler, their
kubelets, and the workload controllers that turn Deployments, ReplicaSets, StatefulSets, DaemonSets and
Jobs into Pods, so a client that waits for its workload to become available can be tested end to end.
``docs/apiserver.md`` ("Simulated nodes") says what is simulated and what is not."""

from framework.apiserver.controllers.simulated.cluster import SimulatedCluster
from framework.apiserver.controllers.simulated.policy import SimulationPolicy

__all__ = ["SimulatedCluster", "SimulationPolicy"]
