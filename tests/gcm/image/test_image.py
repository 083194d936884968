"""The container image run as a Pod would run it (issue 17): hack/build-image.sh, then pytest -m image.

Every podman argument is derived from ``manifests/deploy``: the Deployment's command and args, its pod
and container securityContext (user, group, fsGroup, read-only root filesystem, no capabilities, no
privilege escalation), its memory limit, and its volumes where it mounts them: the ConfigMap's files,
the webhook certificate Secret's ``tls.crt``/``tls.key`` (made here; the Secret is not shipped), the
``/tmp`` emptyDir as a tmpfs of its sizeLimit, and the ServiceAccount files (``token``, ``ca.crt``,
``namespace``) at ``/var/run/secrets/kubernetes.io/serviceaccount``. The API server is
``python -m framework.apiserver`` on the host (RBAC on, the manifests applied with kubectl), found
through ``KUBERNETES_SERVICE_HOST``/``_PORT`` as in a cluster; the container shares the host's network,
so the ports are the ones the ConfigMap configures and the Service's webhook is mapped to them.

Needs root (rootful podman) and the image (``GCM_IMAGE``, default ``localhost/gcm:dev``); without them
the test fails and says what to run.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import urllib3
import yaml
from kubernetes import client
from kubernetes import config as kube_config
from kubernetes.client.rest import ApiException

from framework.certs import self_signed_cert
from framework.meta.quantity import parse_quantity
from framework.testing import eventually, free_port
from framework.testing.kubectl import Kubectl

pytestmark = pytest.mark.image

REPO = Path(__file__).resolve().parents[3]
MANIFESTS = REPO / "manifests"
DEPLOY = MANIFESTS / "deploy"
IMAGE = os.environ.get("GCM_IMAGE", "localhost/gcm:dev")
SA_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
POD = "gardener-controller-manager-7d9f8c6b5-image"  # the hostname, as a Deployment's pod has its name
MAX_IMAGE_BYTES = 250_000_000
CORE = ("core.gardener.cloud", "v1beta1")


def _deploy_objects() -> dict[tuple[str, str], dict]:
    docs = [d for f in sorted(DEPLOY.glob("*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    return {(d["kind"], d["metadata"]["name"]): d for d in docs if d.get("kind") != "Kustomization"}


def _podman(*args: str, timeout: float = 120, check: bool = True) -> subprocess.CompletedProcess:
    r = subprocess.run(["podman", *args], capture_output=True, text=True, timeout=timeout)
    if check:
        assert r.returncode == 0, f"podman {' '.join(args)}: {r.stderr}"
    return r


@dataclass
class Pod:
    """The Deployment's pod template, as podman arguments (plus the files its volumes hold)."""

    deployment: dict
    objects: dict[tuple[str, str], dict]
    files: Path  # host directory for the volumes' contents

    @property
    def spec(self) -> dict:
        return self.deployment["spec"]["template"]["spec"]

    @property
    def container(self) -> dict:
        (container,) = self.spec["containers"]
        return container

    def port(self, name_or_number: str | int) -> int:
        if isinstance(name_or_number, int):
            return name_or_number
        (port,) = [p["containerPort"] for p in self.container["ports"] if p["name"] == name_or_number]
        return port

    def probe(self, kind: str) -> tuple[str, int]:
        get = self.container[kind]["httpGet"]
        assert get.get("scheme", "HTTP") == "HTTP"
        return get["path"], self.port(get["port"])

    @property
    def grace_seconds(self) -> int:
        return self.spec["terminationGracePeriodSeconds"]

    def webhook_target(self) -> tuple[str, str, int, int]:
        """(namespace, service, service port, container port) of the webhook configuration's Service."""
        # Every webhook configuration of manifests/deploy points at the same Service.
        config = self.objects[("ValidatingWebhookConfiguration", "validate-namespace-deletion")]
        ref = config["webhooks"][0]["clientConfig"]["service"]
        service = self.objects[("Service", ref["name"])]
        (port,) = [p for p in service["spec"]["ports"] if p["port"] == ref.get("port", 443)]
        return ref["namespace"], ref["name"], port["port"], self.port(port["targetPort"])

    def volume_args(self, service_account: dict[str, str], webhook_ca: list[bytes]) -> list[str]:
        args: list[str] = []
        fs_group = self.spec["securityContext"]["fsGroup"]
        volumes = {v["name"]: v for v in self.spec["volumes"]}
        for mount in self.container["volumeMounts"]:
            volume = volumes[mount["name"]]
            ro = ":ro" if mount.get("readOnly") else ""
            if "emptyDir" in volume:
                size = int(parse_quantity(volume["emptyDir"].get("sizeLimit", "0")).value)
                args += ["--tmpfs", f"{mount['mountPath']}:rw,mode=1777" + (f",size={size}" if size else "")]
                continue
            directory = self.files / mount["name"]
            directory.mkdir()
            if "configMap" in volume:
                data = self.objects[("ConfigMap", volume["configMap"]["name"])]["data"]
                mode = volume["configMap"].get("defaultMode", 0o644)
            elif "secret" in volume:
                # The webhook's kubernetes.io/tls Secret, which the manifests leave to cert-manager.
                namespace, service, _, _ = self.webhook_target()
                hosts = (f"{service}.{namespace}.svc", "127.0.0.1", "localhost")
                cert, key, ca = self_signed_cert(directory, hosts)
                webhook_ca.append(ca)
                data = {"tls.crt": cert.read_text(), "tls.key": key.read_text()}
                mode = volume["secret"].get("defaultMode", 0o644)
            else:
                raise AssertionError(f"volume {mount['name']}: a kind this test does not translate")
            self._write(directory, data, mode, fs_group)
            args += ["--volume", f"{directory}:{mount['mountPath']}{ro}"]
        if self.spec.get("automountServiceAccountToken", True):
            directory = self.files / "serviceaccount"
            directory.mkdir()
            self._write(directory, service_account, 0o644, fs_group)
            args += ["--volume", f"{directory}:{SA_DIR}:ro"]
        return args

    @staticmethod
    def _write(directory: Path, data: dict[str, str], mode: int, group: int) -> None:
        """As the kubelet writes volume files: root-owned, group fsGroup, the volume's mode."""
        for name, content in data.items():
            path = directory / name
            path.write_text(content)
            os.chown(path, 0, group)
            path.chmod(mode)
        directory.chmod(0o755)

    def security_args(self) -> list[str]:
        pod_sc, sc = self.spec["securityContext"], self.container["securityContext"]
        assert pod_sc["runAsNonRoot"] and sc["runAsNonRoot"]
        args = [
            "--user",
            f"{pod_sc['runAsUser']}:{pod_sc['runAsGroup']}",
            "--group-add",
            str(pod_sc["fsGroup"]),
        ]
        if sc.get("readOnlyRootFilesystem"):
            # only the volumes are writable: no podman-provided tmpfs on /run, /var/tmp
            args += ["--read-only", "--read-only-tmpfs=false"]
        for cap in sc.get("capabilities", {}).get("drop", []):
            args += ["--cap-drop", cap]
        if sc.get("allowPrivilegeEscalation") is False:
            args += ["--security-opt", "no-new-privileges"]
        assert pod_sc.get("seccompProfile", {}).get("type") == "RuntimeDefault"  # podman's default profile
        memory = self.container.get("resources", {}).get("limits", {}).get("memory")
        if memory:
            args += ["--memory", f"{int(parse_quantity(memory).value)}b"]
        return args

    def run_args(self, name: str, env: dict[str, str], volumes: list[str]) -> list[str]:
        c = self.container
        return [
            "run",
            "--detach",
            "--name",
            name,
            "--network",
            "host",
            "--hostname",
            POD,
            *self.security_args(),
            *volumes,
            *(f"--env={k}={v}" for k, v in env.items()),
            "--entrypoint",
            json.dumps(c["command"]),
            IMAGE,
            *c.get("args", []),
        ]


def _port_in_use(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


@pytest.fixture(scope="module")
def image() -> dict:
    if shutil.which("podman") is None or os.geteuid() != 0:
        pytest.fail("the image test needs root and podman: run hack/build-image.sh (it installs podman)")
    r = _podman("image", "inspect", IMAGE, check=False)
    if r.returncode != 0:
        pytest.fail(f"image {IMAGE} not found: build it with hack/build-image.sh")
    return json.loads(r.stdout)[0]


@dataclass
class Cluster:
    url: str
    port: int
    kubeconfig: Path
    kubectl: Kubectl
    api: client.ApiClient
    ca_pem: str


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    """The host's API server with RBAC, the CRDs, ``manifests/global`` and ``manifests/deploy`` applied."""
    tmp = tmp_path_factory.mktemp("apiserver")
    pod = Pod(_deploy_objects()[("Deployment", "gardener-controller-manager")], _deploy_objects(), tmp)
    namespace, service, service_port, container_port = pod.webhook_target()
    port, kubeconfig = free_port(), tmp / "admin.kubeconfig"
    log = (tmp / "apiserver.log").open("wb")
    proc = subprocess.Popen(
        [
            *(sys.executable, "-m", "framework.apiserver", "--port", str(port)),
            *("--kubeconfig", str(kubeconfig), "--crds", str(MANIFESTS / "crds")),
            *("--authorization-mode", "RBAC"),
            *("--webhook-service", f"{namespace}/{service}:{service_port}=127.0.0.1:{container_port}"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:

        def written() -> bool:
            assert proc.poll() is None, (tmp / "apiserver.log").read_text()
            return kubeconfig.is_file()

        eventually(written, timeout=60, interval=0.1, message="the API server's kubeconfig")
        kubectl = Kubectl(str(kubeconfig), tmp_path_factory.mktemp("kubectl-home"))
        kubectl.ok("apply", "-k", str(MANIFESTS / "global"))
        kubectl.ok("apply", "-k", str(DEPLOY))
        cfg = yaml.safe_load(kubeconfig.read_text())
        ca_pem = base64.b64decode(cfg["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        api = kube_config.new_client_from_config(str(kubeconfig))
        yield Cluster(cfg["clusters"][0]["cluster"]["server"], port, kubeconfig, kubectl, api, ca_pem)
        api.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        log.close()


def _metrics_reader_token(cluster: Cluster) -> str:
    """A token of ServiceAccount garden/prometheus, bound to manifests/deploy's metrics-reader role."""
    core, rbac = client.CoreV1Api(cluster.api), client.RbacAuthorizationV1Api(cluster.api)
    core.create_namespaced_service_account("garden", {"metadata": {"name": "prometheus"}})
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": "prometheus-gcm-metrics"},
            "roleRef": {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "gardener-controller-manager-metrics-reader",
            },
            "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "garden"}],
        }
    )
    request = {"spec": {"expirationSeconds": 3600}}
    return core.create_namespaced_service_account_token("prometheus", "garden", request).status.token


def _service_account_files(cluster: Cluster, deployment: dict) -> dict[str, str]:
    namespace = deployment["metadata"]["namespace"]
    sa = deployment["spec"]["template"]["spec"]["serviceAccountName"]
    token = (
        client.CoreV1Api(cluster.api)
        .create_namespaced_service_account_token(sa, namespace, {"spec": {"expirationSeconds": 3600}})
        .status.token
    )
    return {"token": token, "ca.crt": cluster.ca_pem, "namespace": namespace}


def _config(pod: Pod) -> dict:
    """The ControllerManagerConfiguration the Deployment's --config names, from the mounted ConfigMap."""
    args = pod.container["args"]
    path = Path(args[args.index("--config") + 1])
    (mount,) = [m for m in pod.container["volumeMounts"] if Path(m["mountPath"]) == path.parent]
    volume = next(v for v in pod.spec["volumes"] if v["name"] == mount["name"])
    return yaml.safe_load(pod.objects[("ConfigMap", volume["configMap"]["name"])]["data"][path.name])


def test_image_metadata(image):
    config = image["Config"]
    assert config["User"] == "65532:65532"
    assert config["Entrypoint"] == ["python", "-m", "gcm"]
    assert config["Labels"]["org.opencontainers.image.title"] == "gcm"
    assert {"org.opencontainers.image.version", "org.opencontainers.image.base.name"} <= set(config["Labels"])
    assert image["Size"] < MAX_IMAGE_BYTES, f"{image['Size']} bytes"


def test_image_has_no_build_tools_or_caches(image):
    r = _podman(
        "run",
        "--rm",
        "--entrypoint",
        "sh",
        IMAGE,
        "-c",
        "for f in /usr/bin/gcc /usr/bin/cc /opt/gcm/bin/pip /src /root/.cache; do [ -e $f ] && echo $f; done;"
        " ls /var/lib/apt/lists/*_Packages 2>/dev/null; python -c 'import gcm; print(gcm.__file__)'",
    )
    assert r.stdout.strip() == "/opt/gcm/lib/python3.11/site-packages/gcm/__init__.py", r.stdout


def test_image_runs_as_the_deployment_declares(image, cluster, tmp_path):
    objects = _deploy_objects()
    deployment = objects[("Deployment", "gardener-controller-manager")]
    pod = Pod(deployment, objects, tmp_path)
    cfg = _config(pod)
    # The ports the config binds are the ones the Deployment declares (probes, metrics, Service target).
    server = cfg["server"]
    assert {p["name"]: p["containerPort"] for p in pod.container["ports"]} == {
        "health": server["healthProbes"]["port"],
        "metrics": server["metrics"]["port"],
        "webhook": server["webhooks"]["port"],
    }
    (mount,) = [m for m in pod.container["volumeMounts"] if m["name"] == "webhook-cert"]
    assert server["webhooks"]["tls"]["serverCertDir"] == mount["mountPath"]
    for port in (p["containerPort"] for p in pod.container["ports"]):
        if _port_in_use(port):
            pytest.fail(f"port {port} on this host is in use: the container shares the host's network")

    webhook_ca: list[bytes] = []
    volumes = pod.volume_args(_service_account_files(cluster, deployment), webhook_ca)
    # The caBundle the kustomization leaves to the operator (cert-manager's cainjector in a cluster).
    for (kind, name), _ in objects.items():
        if kind == "ValidatingWebhookConfiguration":
            bundle = base64.b64encode(webhook_ca[0]).decode()
            patch = [{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": bundle}]
            cluster.kubectl.ok(
                "patch", "validatingwebhookconfiguration", name, "--type=json", "-p", json.dumps(patch)
            )
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(cluster.port)}
    name = f"gcm-image-test-{uuid.uuid4().hex[:8]}"
    _podman(*pod.run_args(name, env, volumes))
    try:
        _assert_gcm_works(pod, cfg, cluster, name)
        _podman("stop", "--time", str(pod.grace_seconds), name, timeout=pod.grace_seconds + 30)
        state = json.loads(_podman("inspect", name).stdout)[0]["State"]
        # podman stop sends SIGKILL after the grace period: exit code 137 would say gcm did not stop.
        assert state["ExitCode"] == 0, _logs(name)
        lease = _lease(cluster, cfg)
        assert not lease.spec.holder_identity, "a graceful stop releases the Lease"
        assert "Traceback" not in _logs(name)
    finally:
        _podman("rm", "--force", name, check=False)


def _logs(name: str) -> str:
    r = _podman("logs", name, check=False)
    return r.stdout + r.stderr


def _lease(cluster: Cluster, cfg: dict) -> Any:
    le = cfg["leaderElection"]
    return client.CoordinationV1Api(cluster.api).read_namespaced_lease(
        le["resourceName"], le["resourceNamespace"]
    )


def _assert_gcm_works(pod: Pod, cfg: dict, cluster: Cluster, name: str) -> None:
    http = urllib3.PoolManager(retries=False, timeout=5)

    def running() -> None:
        state = json.loads(_podman("inspect", name).stdout)[0]["State"]
        assert state["Running"], f"gcm exited with {state['ExitCode']}:\n{_logs(name)}"

    def get(port: int, path: str) -> urllib3.BaseHTTPResponse:
        running()
        return http.request("GET", f"http://127.0.0.1:{port}{path}")

    timeout = 120  # a cold start under load: the container, the interpreter, the informers' lists
    errors = (urllib3.exceptions.HTTPError, ApiException)
    for path, port in (pod.probe("livenessProbe"), pod.probe("readinessProbe")):
        eventually(
            lambda p=port, u=path: get(p, u).status == 200,
            timeout=timeout,
            interval=0.25,
            message=path,
            ignore=errors,
        )

    # gcm took the Lease, under its pod's name (client-go's identity: hostname_<uuid>).
    lease = eventually(lambda: _lease(cluster, cfg), timeout=timeout, message="the Lease", ignore=errors)
    assert eventually(
        lambda: (_lease(cluster, cfg).spec.holder_identity or "").startswith(POD + "_"), timeout=timeout
    ), lease

    # A Project becomes Ready with its namespace and member RBAC.
    objs, core = client.CustomObjectsApi(cluster.api), client.CoreV1Api(cluster.api)
    project, namespace = "imgtest", "garden-imgtest"
    member = {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice@example.com"}
    body = {
        "apiVersion": "/".join(CORE),
        "kind": "Project",
        "metadata": {"name": project},
        "spec": {"namespace": namespace, "members": [{**member, "role": "admin"}]},
    }
    objs.create_cluster_custom_object(*CORE, "projects", body)

    def ready() -> bool:
        running()
        status = objs.get_cluster_custom_object(*CORE, "projects", project).get("status", {})
        return status.get("phase") == "Ready"

    eventually(ready, timeout=timeout, interval=0.25, message=f"Project {project} Ready")
    ns = core.read_namespace(namespace)
    assert ns.metadata.labels["project.gardener.cloud/name"] == project
    assert ns.metadata.labels["gardener.cloud/role"] == "project"
    rbac = client.RbacAuthorizationV1Api(cluster.api)
    binding = eventually(
        lambda: rbac.read_namespaced_role_binding("gardener.cloud:system:project-member", namespace),
        timeout=timeout,
        ignore=errors,
    )
    assert [(s.kind, s.name) for s in binding.subjects] == [("User", "alice@example.com")]

    # /metrics on the Service's metrics port has controller-runtime's reconcile counter for Projects:
    # served securely (--metrics-secure), to a ServiceAccount bound to the metrics-reader ClusterRole.
    metrics = pod.port("metrics")
    bearer = {"Authorization": f"Bearer {_metrics_reader_token(cluster)}"}
    scraper = urllib3.PoolManager(retries=False, timeout=5, cert_reqs="CERT_NONE")  # self-signed
    assert scraper.request("GET", f"https://127.0.0.1:{metrics}/metrics").status == 401
    eventually(
        lambda: (
            'controller_runtime_reconcile_total{controller="project"'
            in scraper.request("GET", f"https://127.0.0.1:{metrics}/metrics", headers=bearer).data.decode()
        ),
        timeout=timeout,
        message="controller_runtime_reconcile_total",
        ignore=errors,
    )

    # The namespace-deletion webhook, called by the API server through the Service, denies the deletion.
    with pytest.raises(ApiException) as denied:
        core.delete_namespace(namespace)
    assert denied.value.status == 403
    assert json.loads(denied.value.body)["message"] == (
        'admission webhook "validate-namespace-deletion.gardener.cloud" denied the request: '
        f'Namespace "{namespace}" is forbidden: direct deletion of namespace "{namespace}" is not permitted '
        f'(you must delete the corresponding project "{project}")'
    )
    assert core.read_namespace(namespace).status.phase == "Active"
