#!/usr/bin/env bash
# Installs every Debian package the build, the tests and the benchmarks need.
# Idempotent: quiet when everything is present; uses sudo when not root.
set -euo pipefail
PKGS=(
  build-essential cmake pkg-config clang clang-format libclang-rt-14-dev
  libcmocka-dev libpcre2-dev libxxhash-dev libcurl4-openssl-dev libmicrohttpd-dev
  libyaml-dev libjansson-dev libzstd-dev zlib1g-dev libprotobuf-c-dev protobuf-c-compiler
  libsnappy-dev libdeflate-dev
  prometheus prometheus-alertmanager victoria-metrics prometheus-node-exporter
  python3 python3-prometheus-client curl procps bc time
)
missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# Node.js and npm fetch the dashboard's libraries; use the machine's own when present.
if ! command -v npm >/dev/null 2>&1; then missing+=(nodejs npm); fi
# Headless Chromium for the dashboard's browser test.
for p in chromium fonts-dejavu-core; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The packaged services must not run on their own: tests start their own instances.
for svc in prometheus prometheus-alertmanager prometheus-node-exporter victoria-metrics; do
  $SUDO systemctl stop "$svc" >/dev/null 2>&1 || true
done
