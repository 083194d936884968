"""The REST operations on storage, one module per operation (:class:`~.api.API` composes them).

``base`` (storage, registry, codec) → ``body`` (decoding a write's body) → ``write_checks``
(namespace lifecycle, custom resource schemas, validation) and ``managed`` (managed fields) →
``create`` → ``update`` (and the ``/status``, ``/finalize`` and ``/scale`` subresources) → ``apply`` →
``patch``; ``reads`` (get, list) → ``delete`` (delete, deletecollection). ``options`` holds
:class:`~.options.WriteOptions` and :class:`~.options.Result`, ``typed`` the Go types of built-in kinds.
"""
