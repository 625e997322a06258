#!/usr/bin/env bash
# Installs every Debian package ksched needs to build, test and run its local
# control plane on a fresh Debian bookworm machine. Idempotent: packages that are
# already present are left alone, and apt is only refreshed when something is missing.
set -euo pipefail

PKGS=(
  # build
  build-essential cmake pkg-config git clang-format clang-tidy ccache lld
  # the asan build and the fuzz targets (tests/fuzz/): clang and its libFuzzer runtime
  clang libclang-rt-dev
  # libraries
  libcpp-httplib-dev nlohmann-json3-dev libssl-dev libyaml-cpp-dev libspdlog-dev
  libfmt-dev prometheus-cpp-dev libgoogle-perftools-dev libgtest-dev libgmock-dev libbenchmark-dev
  zlib1g-dev
  # RE2: the regular expressions of CEL device selectors (src/cel/)
  libre2-dev
  # simdjson: watched pods decoded straight from the text (src/api/fast_decode.cc)
  libsimdjson-dev
  # local control plane
  etcd-server etcd-client openssl curl golang-go rsync jq make dpkg-dev
  # the container image and its test (deploy/build-image.sh: buildah needs no daemon)
  buildah debootstrap
  # the simulate report in a real browser (the `browser` test, tests/browser/)
  chromium
  # promtool for the alerting and recording rules (deploy/monitoring, the monitoring_rules test)
  prometheus
)

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# kubectl for people poking at the local cluster; any kubectl already on the machine will do.
if ! command -v kubectl >/dev/null 2>&1; then PKGS+=(kubernetes-client); fi

missing=()
for p in "${PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "install-deps: all packages present"
fi

# etcd-server's package starts a system etcd on 2379; the local control plane runs its own.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet etcd 2>/dev/null; then
  $SUDO systemctl stop etcd || true
  $SUDO systemctl disable etcd >/dev/null 2>&1 || true
fi
