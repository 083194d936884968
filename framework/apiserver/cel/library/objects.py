"""The library objects' types: one protobuf message per Kubernetes CEL object type, holding the
text it was made from, in a descriptor pool the checker resolves them in."""

from __future__ import annotations

import functools
from typing import Any

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# (proto package, message name): the type names cel-go's Kubernetes libraries print.
TYPES = {
    "kubernetes.Quantity": ("kubernetes", "Quantity"),
    "kubernetes.URL": ("kubernetes", "URL"),
    "kubernetes.Semver": ("kubernetes", "Semver"),
    "kubernetes.NamedFormat": ("kubernetes", "NamedFormat"),
    "net.IP": ("net", "IP"),
    "net.CIDR": ("net", "CIDR"),
    "kubernetes.authorization.Authorizer": ("kubernetes.authorization", "Authorizer"),
    "kubernetes.authorization.PathCheck": ("kubernetes.authorization", "PathCheck"),
    "kubernetes.authorization.GroupCheck": ("kubernetes.authorization", "GroupCheck"),
    "kubernetes.authorization.ResourceCheck": ("kubernetes.authorization", "ResourceCheck"),
    "kubernetes.authorization.Decision": ("kubernetes.authorization", "Decision"),
}
# Message fields beyond ``value``: ``authorizer.requestResource`` is a field select (cel-go declares
# a variable of that dotted name).
MESSAGE_FIELDS = {"Authorizer": [("requestResource", ".kubernetes.authorization.ResourceCheck")]}


@functools.cache
def pool() -> Any:
    p = descriptor_pool.DescriptorPool()
    by_package: dict[str, list[str]] = {}
    for package, name in TYPES.values():
        by_package.setdefault(package, []).append(name)
    for package, names in by_package.items():
        fdp = descriptor_pb2.FileDescriptorProto(
            name=f"gcm/cel/{package}.proto", package=package, syntax="proto3"
        )
        for name in names:
            m = fdp.message_type.add(name=name)
            m.field.add(
                name="value",
                number=1,
                type=descriptor_pb2.FieldDescriptorProto.TYPE_STRING,
                label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
            )
            for number, (field_name, type_name) in enumerate(MESSAGE_FIELDS.get(name, []), start=2):
                m.field.add(
                    name=field_name,
                    number=number,
                    type=descriptor_pb2.FieldDescriptorProto.TYPE_MESSAGE,
                    type_name=type_name,
                    label=descriptor_pb2.FieldDescriptorProto.LABEL_OPTIONAL,
                )
        p.Add(fdp)
    return p


@functools.cache
def message_class(full_name: str) -> Any:
    return message_factory.GetMessageClass(pool().FindMessageTypeByName(full_name))


def make(full_name: str, text: str) -> Any:
    """A library object of type ``full_name`` for ``text`` (already validated by its library)."""
    return message_class(full_name)(value=text)
