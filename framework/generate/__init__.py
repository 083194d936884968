"""Generators: ``python -m framework generate`` writes a project's CRDs, RBAC role and webhook
configurations from its code, as controller-gen does for a kubebuilder project (see
:mod:`framework.generate.cli`)."""
