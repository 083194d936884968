"""CustomResourceDefinitions and the custom resources they define (as k8s.io/apiextensions-apiserver), as
pure functions on plain JSON dicts, one concept per module:

* ``definition``: the CRD object's versions, subresources, selectable fields and defaults;
* ``definition_validation``: validation of the CRD object;
* ``structural``: the structural-schema rules a CRD's schema must follow;
* ``defaulting``, ``pruning`` and ``object_validation``: a custom resource against its schema;
* ``conversion``, ``conversion_webhook``, ``conversion_scope`` and ``conversion_validation``: custom
  resources between versions (the ``None`` and ``Webhook`` strategies); ``deprecation``: deprecated
  versions' warnings.
* ``cel_rules``, ``cel_definition`` and ``cel_validation``: its ``x-kubernetes-validations`` rules,
  compiled, checked in the CRD and evaluated.
"""
