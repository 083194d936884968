# gcm — the Gardener Controller Manager in Python.
#
# Debian's own Python (no python.org build to trust or pull): a builder stage makes a virtualenv with gcm
# and its runtime dependencies (wheels from PyPI; no test extra, no compilers), the runtime stage copies
# it onto the plain base with python3 only, running as 65532 (distroless' "nonroot"). Deployed by
# manifests/deploy: read-only root filesystem, /tmp an emptyDir, `command: [python, -m, gcm]`.
#
#   podman build -t gcm .                      # any machine that reaches docker.io and PyPI
#   hack/build-image.sh                        # no registry: a debootstrap-made base, localhost/gcm:dev
#
# Linted by hadolint (tests/gcm/manifests); run as a Pod would by tests/gcm/image (pytest -m image).
ARG BASE=docker.io/library/debian:bookworm-slim

FROM ${BASE} AS builder
# Debian's python3 is the version (a pin would break on every point release): hadolint DL3008.
# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 python3-venv \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/*
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md /src/
COPY framework/ /src/framework/
COPY manifests/ /src/manifests/
COPY gcm/ /src/gcm/
# A non-editable install: the manifests travel as package data (gcm/manifests links to manifests/),
# nothing is read from /src at run time. pip and setuptools leave the venv afterwards, and so does
# kubernetes.aio, the client's asyncio copy (68 MB): gcm uses the kubernetes package for kubeconfig and
# in-cluster configuration only. The optional build secret pip-ca is a CA bundle for pip to trust (a
# TLS-intercepting proxy's): `podman build --secret id=pip-ca,src=FILE`.
RUN --mount=type=secret,id=pip-ca \
    if [ -f /run/secrets/pip-ca ]; then export PIP_CERT=/run/secrets/pip-ca; fi \
    && python3 -m venv /opt/gcm \
    && /opt/gcm/bin/pip install --no-cache-dir /src \
    && /opt/gcm/bin/pip uninstall --yes pip setuptools \
    && rm -rf /opt/gcm/lib/python3*/site-packages/kubernetes/aio \
    && /opt/gcm/bin/python -c 'import kubernetes, gcm.__main__, gcm.embedded' \
    && /opt/gcm/bin/python -m gcm --help >/dev/null

FROM ${BASE}
ARG BASE
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="gcm" \
      org.opencontainers.image.description="Gardener Controller Manager (Project, stale/activity, quota and Event controllers; namespace-deletion webhook) in Python" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.base.name="${BASE}"

# hadolint ignore=DL3008
RUN apt-get update \
    && apt-get install -y --no-install-recommends python3 \
    && apt-get clean \
    && rm -rf /var/lib/apt/lists/* /var/log/apt /var/log/dpkg.log \
    && echo 'nonroot:x:65532:65532:nonroot:/nonexistent:/usr/sbin/nologin' >>/etc/passwd \
    && echo 'nonroot:x:65532:' >>/etc/group
COPY --from=builder /opt/gcm /opt/gcm

# The venv first: `python` is the venv's (Debian's base has python3 only), as the Deployment's command
# expects. Nothing is written below / at run time (read-only root filesystem).
ENV PATH=/opt/gcm/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
# 2718 /healthz /readyz, 2719 /metrics, 2721 webhooks (HTTPS)
EXPOSE 2718 2719 2721
ENTRYPOINT ["python", "-m", "gcm"]
