"""A conversion webhook for a CronJob kind served in two versions, as kubebuilder's multi-version
tutorial has it: v1 (the hub and the storage version) keeps ``spec.schedule`` as a cron string, v2 splits
it into ``spec.schedule.{minute,hour,dayOfMonth,month,dayOfWeek}``."""

from framework import webhook
from framework.client import Client
from framework.manager import Manager

GROUP = "batch.tutorial.kubebuilder.io"
PARTS = ("minute", "hour", "dayOfMonth", "month", "dayOfWeek")


class CronJobV2:
    """The v2 spoke: converts itself to the hub (v1) and back; v1 needs no code of its own."""

    def convert_to(self, obj: dict) -> dict:
        spec = dict(obj.get("spec") or {})
        schedule = spec.get("schedule") or {}
        spec["schedule"] = " ".join(schedule.get(part, "*") for part in PARTS)
        return {**obj, "spec": spec}

    def convert_from(self, hub: dict) -> dict:
        spec = dict(hub.get("spec") or {})
        spec["schedule"] = dict(zip(PARTS, str(spec.get("schedule", "")).split(), strict=False))
        return {**hub, "spec": spec}


def main(kubeconfig: str, cert_dir: str, host: str = "0.0.0.0", port: int = 9443) -> Manager:
    mgr = Manager(
        Client.from_kubeconfig(kubeconfig),
        webhook_server=webhook.WebhookServer(host, port, cert_dir=cert_dir),
    )
    hooks = webhook.WebhookBuilder(mgr).for_(f"{GROUP}/v1", "CronJob")
    hooks.with_conversion(hub="v1", spokes={"v2": CronJobV2()})
    hooks.complete()  # serves /convert
    return mgr
