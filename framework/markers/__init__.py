"""Markers: what controller-gen reads from ``// +kubebuilder:...`` comments, as Python decorators and
annotations (:mod:`framework.markers.rbac` for RBAC rules on reconcilers)."""
