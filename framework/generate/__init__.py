"""Generators: Kubernetes manifests from Python declarations, as kubebuilder's controller-gen makes
them from Go (``crd``: CustomResourceDefinitions from ``@resource`` ``TypedDict`` types; ``rbac``: the
manager's role; ``webhook``: its webhook configurations). ``python -m framework generate``
(:mod:`framework.generate.cli`) writes them into a project."""
