"""Generators: Kubernetes manifests from Python declarations, as kubebuilder's controller-gen makes
them from Go (``crd``: CustomResourceDefinitions from ``@resource`` ``TypedDict`` types)."""
