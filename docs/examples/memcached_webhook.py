"""Defaulting and validating webhooks for Memcached; the manager writes their configuration and
serves a self-signed certificate it rotates."""

from framework import webhook
from framework.client import Client, get_config
from framework.manager import Manager
from framework.meta import field


def default(memcached: dict) -> None:
    memcached.setdefault("spec", {}).setdefault("size", 1)


def validate(memcached: dict) -> list[str]:
    size = memcached["spec"]["size"]
    if size > 5:
        raise webhook.Invalid(field.invalid("spec.size", size, "must be at most 5"))
    return ["more than 3 replicas: is that intended?"] if size > 3 else []


def main(kubeconfig: str, cert_dir: str, host: str = "0.0.0.0", port: int = 9443) -> Manager:
    mgr = Manager(
        Client.from_config(get_config(kubeconfig)),
        webhook_server=webhook.WebhookServer(host, port, cert_dir=cert_dir),
        webhook_configuration=webhook.WebhookConfiguration(
            "memcached",
            service=webhook.ServiceReference("memcached-system", "memcached-webhook-service"),
            self_signed=webhook.SelfSigned(),
        ),
    )
    hooks = webhook.WebhookBuilder(mgr).for_("cache.example.com/v1alpha1", "Memcached")
    hooks.with_defaulter(default).with_validator(on_create=validate, on_update=lambda old, new: validate(new))
    hooks.complete()
    return mgr
