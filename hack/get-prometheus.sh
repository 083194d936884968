#!/usr/bin/env bash
# Puts Debian's prometheus and promtool into .ci/cache/prometheus/bin, without root and without
# installing or starting anything: `apt-get download` of the package and `dpkg -x` of its files.
# The monitoring tests (tests/gcm/monitoring) look there, then on PATH, and are skipped with the reason
# when neither has them. Exits 0 either way: a machine without apt still runs the rest of the suite.
set -uo pipefail
cd "$(dirname "$0")/.."
dest=.ci/cache/prometheus
if [[ -x $dest/bin/prometheus && -x $dest/bin/promtool ]]; then
  exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg >/dev/null; then
  echo "get-prometheus: no apt-get/dpkg here; the tests that need Prometheus will be skipped" >&2
  exit 0
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if ! (cd "$work" && apt-get download -q prometheus >/dev/null 2>"$work/err"); then
  echo "get-prometheus: apt-get download prometheus failed; the tests that need Prometheus will be skipped:" >&2
  cat "$work/err" >&2
  exit 0
fi
dpkg -x "$work"/prometheus_*.deb "$work/x"
mkdir -p "$dest/bin"
cp "$work/x/usr/bin/prometheus" "$work/x/usr/bin/promtool" "$dest/bin/"
"$dest/bin/prometheus" --version 2>&1 | head -1
