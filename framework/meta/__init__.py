"""What apimachinery gives Go, once, for ``framework``, ``framework.testing`` and applications.

- :mod:`framework.meta.time` — ``metav1.Time`` / ``MicroTime`` parse and format;
- :mod:`framework.meta.labels` — label selectors (string and ``LabelSelector`` forms), validation;
- :mod:`framework.meta.quantity` — ``resource.Quantity``;
- :mod:`framework.meta.field` — field paths and field errors with Go's messages;
- :mod:`framework.meta.schema` — GroupVersion / GroupVersionKind / GroupVersionResource;
- :mod:`framework.meta.validation` — name and label rules (``pkg/util/validation``);
- :mod:`framework.meta.object` — accessors for objects as dicts (``get_name``, ``get_labels``, ...);
- :mod:`framework.meta.conditions` — ``SetStatusCondition`` and friends;
- :mod:`framework.meta.jsoncodec` — JSON in and out up to ``encoding/json``'s nesting limit (orjson first).

The accessors and condition helpers are re-exported here: ``from framework import meta;
meta.get_name(obj)``, ``meta.set_status_condition(conditions, {...})``.
"""

from framework.meta import conditions, object
from framework.meta.conditions import *  # noqa: F403
from framework.meta.object import *  # noqa: F403

__all__ = [*conditions.__all__, *object.__all__]
