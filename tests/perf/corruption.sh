#!/usr/bin/env bash
# Pods bound per minute by ksched and by kube-scheduler v1.20.2 while a TLS proxy corrupts a share
# of the apiserver's answers: FaultIntegration.CorruptionComparedWithKubeScheduler of
# tests/integration/fault_test.cc, which describes the runs (the same backlog of 480 pods on 10
# nodes each time, at most KSCHED_CORRUPTION_RUN_SECONDS a run) and prints the table. A
# measurement, not part of the suite: that test skips itself unless this script runs it.
#
#   tests/perf/corruption.sh [percentages] [schedulers]   (default "0,1,3" "ksched,kube-scheduler")
#
# Builds ksched and the integration tests in KSCHED_BUILD_DIR (default build/) and runs against
# a control plane of its own on ports 18443/18379 (KSCHED_TEST_APISERVER_PORT,
# KSCHED_TEST_ETCD_PORT), so that it may run beside the suite. KSCHED_CORRUPTION_RUN_SECONDS
# (180) bounds each run; KSCHED_CORRUPTION_SEED repeats the proxy's draws.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${KSCHED_BUILD_DIR:-$ROOT/build}
export KSCHED_CORRUPTION_COMPARE=1
export KSCHED_CORRUPTION_RATES=${1:-0,1,3}
export KSCHED_CORRUPTION_SCHEDULERS=${2:-ksched,kube-scheduler}
export KSCHED_CORRUPTION_RUN_SECONDS=${KSCHED_CORRUPTION_RUN_SECONDS:-180}
export KSCHED_TEST_APISERVER_PORT=${KSCHED_TEST_APISERVER_PORT:-18443}
export KSCHED_TEST_ETCD_PORT=${KSCHED_TEST_ETCD_PORT:-18379}

"$ROOT/deploy/local/install-deps.sh" >/dev/null
"$ROOT/deploy/local/build-k8s.sh" >/dev/null
cmake -S "$ROOT" -B "$BUILD" -DKSCHED_BUILD_TESTS=ON >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target ksched ksched_integration_tests >/dev/null

# The integration binary's watchdog stops a test after 300 s; this one runs every pair in turn.
IFS=, read -r -a rates <<<"$KSCHED_CORRUPTION_RATES"
IFS=, read -r -a schedulers <<<"$KSCHED_CORRUPTION_SCHEDULERS"
export KSCHED_TEST_TIMEOUT_SECONDS=$(( ${#rates[@]} * ${#schedulers[@]} *
                                       (KSCHED_CORRUPTION_RUN_SECONDS + 90) + 120 ))
# As ctest runs it (tests/CMakeLists.txt): from the build's tests/ directory.
cd "$BUILD/tests"
./ksched_integration_tests --gtest_filter=FaultIntegration.CorruptionComparedWithKubeScheduler |
  grep -E '^\[compare\]|^\[ *(OK|FAILED|SKIPPED) *\]|Failure|error'
exit "${PIPESTATUS[0]}"
