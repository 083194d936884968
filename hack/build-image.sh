#!/usr/bin/env bash
# Builds gcm's container image, localhost/gcm:dev, from the Dockerfile with podman, on machines that reach
# Debian's package mirror and PyPI but no container registry.
#
#   hack/build-image.sh [--rebuild-base]
#
# 1. Installs podman (Debian's, with runc) and debootstrap when missing (apt-get; root or sudo), and
#    configures podman for machines without systemd (see below).
# 2. Makes the base image once: `debootstrap --variant=minbase bookworm`, slimmed as Debian's official
#    bookworm-slim is (no docs, man pages or locales; no apt lists), imported as
#    localhost/debian:bookworm-slim. Cached in podman's storage; --rebuild-base makes it again.
# 3. Builds localhost/gcm:dev with --build-arg BASE=<that image> (the Dockerfile's default is
#    docker.io/library/debian:bookworm-slim, for machines that reach a registry) and --network host
#    (the build's apt-get and pip reach Debian's mirror and PyPI), then prints the image size.
#
# Environment: IMAGE (default localhost/gcm:dev), BASE (default localhost/debian:bookworm-slim),
# MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

cd "$(dirname "$0")/.."
IMAGE=${IMAGE:-localhost/gcm:dev}
BASE=${BASE:-localhost/debian:bookworm-slim}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm

rebuild_base=false
for arg in "$@"; do
  case $arg in
    --rebuild-base) rebuild_base=true ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "build-image.sh: unknown argument '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then command "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "build-image.sh: '$*' needs root (or sudo)" >&2; exit 2
  fi
}

missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
command -v debootstrap >/dev/null || missing+=(debootstrap)
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing ${missing[*]} (apt-get)"
  as_root apt-get update -q
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

# Machines without systemd (containers, CI sandboxes) need the cgroupfs manager; podman's default
# RLIMIT_NOFILE can exceed a sandbox's hard limit; bookworm's crun refuses hybrid cgroup v1 hierarchies
# ("cgroups in hybrid mode not supported"), runc runs everywhere. A containers.conf of the machine's own
# (not written by this script) is left alone.
conf=/etc/containers/containers.conf
marker='# written by gcm hack/build-image.sh'
if [ ! -e "$conf" ] || [ "$(head -n1 "$conf")" = "$marker" ]; then
  as_root mkdir -p /etc/containers
  printf '%s\n' "$marker" \
    '[containers]' 'default_ulimits = []' \
    '[engine]' 'cgroup_manager = "cgroupfs"' 'events_logger = "file"' 'runtime = "runc"' |
    as_root tee "$conf" >/dev/null
fi

podman() { as_root podman "$@"; }

if $rebuild_base || ! podman image exists "$BASE"; then
  echo "making $BASE with debootstrap ($SUITE, minbase, $MIRROR)"
  root=$(mktemp -d /var/tmp/gcm-base.XXXXXX)
  trap 'as_root rm -rf "$root"' EXIT
  as_root debootstrap --variant=minbase "$SUITE" "$root" "$MIRROR"
  # As Debian's -slim images: keep documentation and translations out of later apt-get installs too.
  as_root tee "$root/etc/dpkg/dpkg.cfg.d/docker-slim" >/dev/null <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/groff/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
path-exclude /usr/share/lintian/*
path-exclude /usr/share/linda/*
EOF
  # ... and apt keeps no downloaded packages, as in Debian's images (debuerreotype's docker-clean).
  as_root tee "$root/etc/apt/apt.conf.d/docker-clean" >/dev/null <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/archives/partial/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  as_root find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  as_root find "$root/usr/share/doc" -mindepth 1 -type d -empty -delete
  as_root rm -rf "$root"/usr/share/{man,groff,info,lintian,linda}/* "$root"/var/cache/apt/*.bin \
    "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/* "$root"/var/log/*.log
  as_root find "$root/usr/share/locale" -mindepth 1 -maxdepth 1 -not -name locale.alias -exec rm -rf {} +
  # The Debian mirror the build's apt-get uses (debootstrap wrote only the suite's main component).
  printf 'deb %s %s main\ndeb %s %s-updates main\ndeb http://deb.debian.org/debian-security %s-security main\n' \
    "$MIRROR" "$SUITE" "$MIRROR" "$SUITE" "$SUITE" | as_root tee "$root/etc/apt/sources.list" >/dev/null
  podman image rm --force "$BASE" >/dev/null 2>&1 || true
  as_root tar -C "$root" --numeric-owner -c . | podman import \
    --change 'CMD ["bash"]' --message "debootstrap --variant=minbase $SUITE $MIRROR" - "$BASE" >/dev/null
  as_root rm -rf "$root"
  trap - EXIT
fi
echo "base: $BASE ($(podman image inspect --format '{{.Size}}' "$BASE" | numfmt --to=si)B)"

# Behind a TLS-intercepting proxy this machine's pip trusts the proxy's CA by pip's `cert` (PIP_CERT or
# pip.conf); the build's pip gets the same bundle as the build secret pip-ca (no layer keeps it).
build_opts=()
cert=${PIP_CERT:-$(python3 -m pip config get global.cert 2>/dev/null || true)}
if [ -n "$cert" ] && [ -f "$cert" ]; then
  build_opts+=(--secret "id=pip-ca,src=$cert")
  echo "the build's pip trusts $cert (pip's cert on this machine)"
fi

start=$(date +%s)
podman build --network host --pull=never "${build_opts[@]}" --build-arg BASE="$BASE" \
  --build-arg VERSION="$(sed -n 's/^version = "\(.*\)"/\1/p' pyproject.toml)" -t "$IMAGE" .
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
echo "built $IMAGE in $(($(date +%s) - start)) s: $(numfmt --to=si "$size")B ($size bytes)"
