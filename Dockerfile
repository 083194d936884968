# gcm — the Gardener Controller Manager in Python. Runtime image: slim Python, the package and its
# runtime dependencies only (no test extra), running as an unprivileged user. Linted by hadolint in
# tests/gcm/manifests; deployed by manifests/deploy (read-only root filesystem, /tmp is an emptyDir).
FROM python:3.11-slim-bookworm

ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="gcm" \
      org.opencontainers.image.description="Gardener Controller Manager (Project, stale/activity, quota and Event controllers; namespace-deletion webhook) in Python" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.base.name="docker.io/library/python:3.11-slim-bookworm"

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_NO_CACHE_DIR=1

WORKDIR /opt/gcm
# The manifests ship with the image: `gcm --embedded` installs manifests/crds, global and deploy.
COPY pyproject.toml README.md ./
COPY framework/ framework/
COPY gcm/ gcm/
COPY manifests/ manifests/
RUN pip install --no-cache-dir . \
    && rm -rf build ./*.egg-info \
    && groupadd --system --gid 65532 gcm \
    && useradd --system --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
       --shell /usr/sbin/nologin gcm

USER 65532:65532
# 2718 /healthz /readyz, 2719 /metrics, 2721 webhooks (HTTPS)
EXPOSE 2718 2719 2721
ENTRYPOINT ["python", "-m", "gcm"]
