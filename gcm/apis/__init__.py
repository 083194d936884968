"""The Gardener API names gcm uses, defined once (Gardener's ``pkg/apis/core/v1beta1/constants``,
``pkg/apis/core/v1beta1/types_project.go`` and the group/version registrations).

:mod:`gcm.apis.constants` holds every group/version, kind, label, annotation, finalizer, event reason
and well-known object name; no other module in ``gcm`` spells them (``tests/gcm/test_apis.py`` checks).
"""
