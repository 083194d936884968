"""The files ``python -m framework init`` writes, as :class:`string.Template` texts (``${name}``
placeholders; ``$$`` is a literal dollar). Names: ``domain``, ``project`` (the project name),
``package`` (its import package), ``framework_requirement`` (how the project depends on the framework),
``framework_dist`` (the framework's distribution name).

The generated project's test files live beside this module in ``project_tests/`` (package data, read
with :func:`project_test`): they use ``framework.testing``, which no framework module may import.
"""

from __future__ import annotations

from importlib import resources


def project_test(name: str) -> str:
    """The template of a generated project's test file ``project_tests/<name>``."""
    return resources.files(__package__).joinpath("project_tests", name).read_text(encoding="utf-8")


INIT: dict[str, str] = {}

INIT["pyproject.toml"] = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "${project}"
version = "0.1.0"
description = "${project}: a Kubernetes operator on the framework"
readme = "README.md"
requires-python = ">=3.11"
dependencies = [
    # The controller framework (python -m framework ...), distributed as ${framework_dist}.
    "${framework_requirement}",
]

[project.optional-dependencies]
test = ["pytest>=8"]

[tool.setuptools.packages.find]
include = ["${package}*"]

# python -m framework generate reads this table (see docs/extension-guide.md of the framework).
[tool.framework]
domain = "${domain}"
project = "${project}"
package = "${package}"
# The manager writes its webhook configurations itself (its role gets the rights for it); set false
# when cert-manager and config/webhook/manifests.yaml configure the webhooks instead.
managed-webhook-configuration = true

# The code python -m framework writes passes ruff check and ruff format --check with these settings.
[tool.ruff]
line-length = 110  # framework.scaffold.files.LINE_LENGTH
target-version = "py311"

[tool.ruff.lint]
select = ["E", "F", "W", "I", "B", "UP"]

[tool.pytest.ini_options]
testpaths = ["tests"]
# The tests import the package from the project root, installed or not.
pythonpath = ["."]
"""

INIT["README.md"] = """\
# ${project}

A Kubernetes operator on the framework, laid out as a kubebuilder project: types in `${package}/api`,
reconcilers in `${package}/controllers`, admission webhooks in `${package}/webhooks`, manifests in
`config/` (kustomize).

```sh
pip install -e '.[test]'   # the framework comes with it
python -m pytest           # the tests run against the framework's test API server, no cluster needed
```

Add a kind with `python -m framework create api --group GROUP --version VERSION --kind KIND` (a further
version of it with `--no-controller`), its webhooks with `python -m framework create webhook ...
--defaulting --validation` (a conversion webhook with `--conversion --spoke VERSION`), and after every change
to the types, RBAC markers or watches regenerate the CRDs, `config/rbac/role.yaml` and
`config/webhook/manifests.yaml` with `python -m framework generate` (`--check` in CI).

Run the manager against the cluster of your kubeconfig with `python -m ${package}`
(`--help` for its flags), or deploy it: build the image (`Dockerfile`) and `kubectl apply -k config/default`.
"""

INIT[".gitignore"] = """\
__pycache__/
*.egg-info/
.venv/
build/
dist/
wheels/
"""

INIT[".dockerignore"] = """\
.git
.venv
**/__pycache__
*.egg-info
tests
"""

INIT["Dockerfile"] = """\
# ${project}: the manager image.
#
# The framework is not on PyPI: put its wheel into wheels/ first, then build:
#   pip wheel --no-deps -w wheels <the framework's checkout> && podman build -t ${project} .
FROM docker.io/library/python:3.11-slim
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \\
    PIP_NO_CACHE_DIR=1
WORKDIR /workspace
COPY wheels/ wheels/
COPY pyproject.toml README.md ./
COPY ${package}/ ${package}/
# The framework from wheels/ (its dependencies from PyPI), then the project without re-resolving it;
# the framework's version is the wheel's, so it is not pinned here: hadolint DL3013.
# hadolint ignore=DL3013
RUN pip install --no-cache-dir --find-links=wheels ${framework_dist} \\
    && pip install --no-cache-dir --no-deps .
# distroless' "nonroot"
USER 65532:65532
ENTRYPOINT ["python", "-m", "${package}"]
"""

INIT["${package}/__init__.py"] = '''\
"""${project}: a Kubernetes operator on the framework."""
'''

INIT["${package}/__main__.py"] = '''\
"""The manager of ${project}, with the flags of kubebuilder's ``main.go``.

It runs the controllers while it holds the leader lease (``--leader-elect``), serves metrics
(``--metrics-bind-address``) and the ``/healthz`` and ``/readyz`` probes
(``--health-probe-bind-address``), and when the project has webhooks serves them on
``--webhook-port`` and writes their Mutating/ValidatingWebhookConfiguration with a self-signed
certificate it rotates: for the Service ``--webhook-service`` in a cluster (default: the project's
webhook Service in the pod's namespace), or ``--webhook-url`` when the API server reaches this
process directly (running on your machine against a test API server).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

import structlog
from framework import Client, LeaderElectionOptions, Manager
from framework.webhook import SelfSigned, ServiceReference, WebhookConfiguration, WebhookServer
from prometheus_client import CollectorRegistry

from ${package} import controllers, webhooks

PROJECT = "${project}"
LEADER_ELECTION_ID = "${project}.${domain}"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description="The manager of ${project}.")
    p.add_argument(
        "--kubeconfig",
        help="kubeconfig file (default: $$KUBECONFIG, in a pod its service account, else ~/.kube/config)",
    )
    p.add_argument(
        "--metrics-bind-address",
        default="0",
        help="address the metrics endpoint binds to, e.g. :8080; 0 disables it (default 0)",
    )
    p.add_argument(
        "--health-probe-bind-address", default=":8081", help="address the probes bind to (default :8081)"
    )
    p.add_argument(
        "--leader-elect",
        action="store_true",
        help="run the controllers only while holding the lease, so that only one replica acts",
    )
    p.add_argument("--leader-election-namespace", help="namespace of the lease (default: the pod's)")
    p.add_argument("--webhook-port", type=int, default=9443, help="webhook server port (default 9443)")
    p.add_argument("--webhook-cert-dir", help="where the webhook server's certificate is written")
    p.add_argument(
        "--webhook-service", metavar="NAMESPACE/NAME", help="the Service in front of the webhook server"
    )
    p.add_argument(
        "--webhook-url", metavar="https://HOST:PORT", help="where the API server reaches the webhook server"
    )
    p.add_argument("--log-level", default="info", choices=("debug", "info", "warning", "error"))
    return p.parse_args(argv)


def configure_logging(level: str) -> None:
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,  # controller, namespace, name, reconcile_id
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.JSONRenderer(),
        ],
        wrapper_class=structlog.make_filtering_bound_logger(getattr(logging, level.upper())),
    )


def make_client(kubeconfig: str | None) -> Client:
    in_pod = os.environ.get("KUBERNETES_SERVICE_HOST") and not os.environ.get("KUBECONFIG")
    return Client.in_cluster() if in_pod and not kubeconfig else Client.from_kubeconfig(kubeconfig)


def build_manager(args: argparse.Namespace) -> Manager:
    """The manager with every controller and webhook of the project added (not started)."""
    client = make_client(args.kubeconfig)
    namespace = os.environ.get("POD_NAMESPACE") or client.namespace
    registry = CollectorRegistry()
    server = configuration = None
    if webhooks.SETUPS:
        server = WebhookServer(port=args.webhook_port, cert_dir=args.webhook_cert_dir, registry=registry)
        if args.webhook_url:
            configuration = WebhookConfiguration(PROJECT, url=args.webhook_url, self_signed=SelfSigned())
        else:
            service = args.webhook_service or f"{namespace}/{PROJECT}-webhook-service"
            service_namespace, _, name = service.partition("/")
            configuration = WebhookConfiguration(
                PROJECT, service=ServiceReference(service_namespace, name), self_signed=SelfSigned()
            )
    election = None
    if args.leader_elect:
        election = LeaderElectionOptions(
            namespace=args.leader_election_namespace or namespace, name=LEADER_ELECTION_ID
        )
    mgr = Manager(
        client,
        leader_election=election,
        metrics_bind_address=args.metrics_bind_address,
        health_probe_bind_address=args.health_probe_bind_address,
        webhook_server=server,
        webhook_configuration=configuration,
        registry=registry,
    )
    controllers.setup(mgr)
    webhooks.setup(mgr)
    return mgr


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.log_level)
    mgr = build_manager(args)
    structlog.get_logger("${package}").info("starting manager", project=PROJECT)
    mgr.start()  # until SIGTERM or SIGINT
    return 0


if __name__ == "__main__":
    sys.exit(main())
'''

INIT["${package}/api/__init__.py"] = '''\
"""The project's API types, one module per group/version (``python -m framework create api`` adds
them); ``python -m framework generate`` writes their CRDs to ``config/crd/bases``."""
'''

INIT["${package}/controllers/__init__.py"] = '''\
"""The project's controllers. ``setup(mgr)`` adds each to the manager (``python -m framework create
api`` adds new ones at the markers below); ``python -m framework generate`` runs it without a cluster
to find the kinds the controllers watch, and reads the ``@rbac`` markers of the modules here."""

from __future__ import annotations

from collections.abc import Callable

from framework import Manager

# +framework:scaffold:imports

SETUPS: list[Callable[[Manager], None]] = [
    # +framework:scaffold:setups
]


def setup(mgr: Manager) -> None:
    """Add every controller of the project to ``mgr``."""
    for add in SETUPS:
        add(mgr)
'''

INIT["${package}/webhooks/__init__.py"] = '''\
"""The project's admission webhooks. ``setup(mgr)`` registers each on the manager's webhook server
(``python -m framework create webhook`` adds new ones at the markers below); ``python -m framework
generate`` writes ``config/webhook/manifests.yaml`` from what it registers."""

from __future__ import annotations

from collections.abc import Callable

from framework import Manager

# +framework:scaffold:imports

SETUPS: list[Callable[[Manager], None]] = [
    # +framework:scaffold:setups
]


def setup(mgr: Manager) -> None:
    """Register every webhook of the project on ``mgr.webhook_server``."""
    for add in SETUPS:
        add(mgr)
'''

INIT["tests/conftest.py"] = project_test("conftest.py.tmpl")

INIT["tests/test_manager.py"] = project_test("test_manager.py.tmpl")

INIT["tests/test_generated.py"] = '''\
"""The generated manifests match the code (``python -m framework generate --check``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_generated_manifests_are_current():
    run = subprocess.run(
        [sys.executable, "-m", "framework", "generate", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
'''

# -- config/: kubebuilder's kustomize tree ---------------------------------------------------------

INIT["config/default/kustomization.yaml"] = """\
# The whole deployment: kubectl apply -k config/default
namespace: ${project}-system
namePrefix: ${project}-

resources:
- ../crd
- ../rbac
- ../manager
- metrics_service.yaml
# With the Prometheus operator installed:
#- ../prometheus
# `python -m framework create webhook` adds ../webhook (the webhook Service) here.
# +framework:scaffold:default

patches:
# Serve metrics on :8080 for the metrics Service.
- path: manager_metrics_patch.yaml
  target:
    kind: Deployment
"""

INIT["config/default/manager_metrics_patch.yaml"] = """\
- op: add
  path: /spec/template/spec/containers/0/args/0
  value: --metrics-bind-address=:8080
"""

INIT["config/default/metrics_service.yaml"] = """\
apiVersion: v1
kind: Service
metadata:
  labels:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
  name: controller-manager-metrics-service
  namespace: system
spec:
  ports:
  - name: http
    port: 8080
    protocol: TCP
    targetPort: 8080
  selector:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
"""

INIT["config/manager/kustomization.yaml"] = """\
resources:
- manager.yaml
images:
- name: controller
  newName: ${project}
  newTag: latest
"""

INIT["config/manager/manager.yaml"] = """\
apiVersion: v1
kind: Namespace
metadata:
  labels:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
  name: system
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: controller-manager
  namespace: system
  labels:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
spec:
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${project}
  replicas: 1
  template:
    metadata:
      labels:
        control-plane: controller-manager
        app.kubernetes.io/name: ${project}
    spec:
      securityContext:
        runAsNonRoot: true
        seccompProfile:
          type: RuntimeDefault
      containers:
      - name: manager
        image: controller:latest
        args:
        - --leader-elect
        - --health-probe-bind-address=:8081
        env:
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: TMPDIR
          value: /tmp
        ports:
        - containerPort: 9443
          name: webhook-server
          protocol: TCP
        securityContext:
          readOnlyRootFilesystem: true
          allowPrivilegeEscalation: false
          capabilities:
            drop:
            - ALL
        livenessProbe:
          httpGet:
            path: /healthz
            port: 8081
          initialDelaySeconds: 15
          periodSeconds: 20
        readinessProbe:
          httpGet:
            path: /readyz
            port: 8081
          initialDelaySeconds: 5
          periodSeconds: 10
        resources:
          limits:
            cpu: 500m
            memory: 256Mi
          requests:
            cpu: 10m
            memory: 128Mi
        volumeMounts:
        - name: tmp
          mountPath: /tmp
      volumes:
      - name: tmp
        emptyDir: {}
      serviceAccountName: controller-manager
      terminationGracePeriodSeconds: 10
"""

INIT["config/rbac/kustomization.yaml"] = """\
resources:
# role.yaml is written by `python -m framework generate` from the code.
- role.yaml
- role_binding.yaml
- service_account.yaml
- leader_election_role.yaml
- leader_election_role_binding.yaml
"""

INIT["config/rbac/role_binding.yaml"] = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  labels:
    app.kubernetes.io/name: ${project}
  name: manager-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: manager-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"""

INIT["config/rbac/service_account.yaml"] = """\
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    app.kubernetes.io/name: ${project}
  name: controller-manager
  namespace: system
"""

INIT["config/rbac/leader_election_role_binding.yaml"] = """\
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
    app.kubernetes.io/name: ${project}
  name: leader-election-rolebinding
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: Role
  name: leader-election-role
subjects:
- kind: ServiceAccount
  name: controller-manager
  namespace: system
"""

INIT["config/crd/kustomization.yaml"] = """\
# The CRDs `python -m framework generate` writes to bases/ (create api adds each here).
resources:
# +framework:scaffold:crds

# create webhook --conversion adds patches/webhook_in_<plural>.yaml here: the CRD's conversion webhook.
patches:
# +framework:scaffold:crdkustomizewebhookpatch

configurations:
- kustomizeconfig.yaml
"""

INIT["config/crd/kustomizeconfig.yaml"] = """\
# Tells kustomize that a CRD's conversion webhook names a Service, so that config/default's namePrefix
# and namespace reach it as they reach the Service.
nameReference:
- kind: Service
  version: v1
  fieldSpecs:
  - kind: CustomResourceDefinition
    version: v1
    group: apiextensions.k8s.io
    path: spec/conversion/webhook/clientConfig/service/name

namespace:
- kind: CustomResourceDefinition
  version: v1
  group: apiextensions.k8s.io
  path: spec/conversion/webhook/clientConfig/service/namespace
  create: false
"""

INIT["config/samples/kustomization.yaml"] = """\
# One sample object per kind (create api adds each here).
resources:
# +framework:scaffold:samples
"""

INIT["config/prometheus/kustomization.yaml"] = """\
resources:
- monitor.yaml
"""

INIT["config/prometheus/monitor.yaml"] = """\
# Prometheus operator: scrape the manager's metrics Service.
apiVersion: monitoring.coreos.com/v1
kind: ServiceMonitor
metadata:
  labels:
    control-plane: controller-manager
    app.kubernetes.io/name: ${project}
  name: controller-manager-metrics-monitor
  namespace: system
spec:
  endpoints:
  - path: /metrics
    port: http
    scheme: http
  selector:
    matchLabels:
      control-plane: controller-manager
      app.kubernetes.io/name: ${project}
"""
