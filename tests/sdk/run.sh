#!/usr/bin/env bash
# The plugin SDK as a plugin author uses it: installs this build (`cmake --install`), builds
# docs/examples/out-of-tree-plugin against the installed package only (find_package(ksched)),
# runs its unit tests, builds and runs docs/examples/simulate (the Simulator, ksched::sim) and
# checks its placements, then the SdkIntegration tests, which run the out-of-tree example's
# scheduler binary against the real apiserver.
#
#   tests/sdk/run.sh BUILD_DIR INTEGRATION_TEST_BINARY
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:?usage: $0 BUILD_DIR INTEGRATION_TEST_BINARY}
TESTS=${2:?usage: $0 BUILD_DIR INTEGRATION_TEST_BINARY}
PREFIX=$BUILD/sdk-prefix
EXAMPLE=$BUILD/sdk-example
SIM_EXAMPLE=$BUILD/sdk-simulate-example

rm -rf "$PREFIX"
cmake --install "$BUILD" --prefix "$PREFIX" >/dev/null
echo "sdk: installed to $PREFIX ($(du -sh "$PREFIX" | cut -f1))"

LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
# Nothing of the source tree is on the example's paths: only the installed prefix.
cmake -S "$ROOT/docs/examples/out-of-tree-plugin" -B "$EXAMPLE" -DCMAKE_PREFIX_PATH="$PREFIX" \
  "${LAUNCHER[@]}" >/dev/null
cmake --build "$EXAMPLE" -j"$(nproc)"
ctest --test-dir "$EXAMPLE" --output-on-failure
echo "sdk: my-scheduler is $(du -h "$EXAMPLE/my-scheduler" | cut -f1)"

cmake -S "$ROOT/docs/examples/simulate" -B "$SIM_EXAMPLE" -DCMAKE_PREFIX_PATH="$PREFIX" \
  "${LAUNCHER[@]}" >/dev/null
cmake --build "$SIM_EXAMPLE" -j"$(nproc)"
SIM_OUT=$("$SIM_EXAMPLE/simulate-example")
echo "$SIM_OUT"
for want in "canSchedule batch: node-c" "placed web-0 on node-c" "placed web-1 on node-a" \
  "placed web-2 on node-c" "in the transaction: 4 pods bound" "after revert: 1 pods bound" \
  "capacity for web: 11 more" \
  "unschedulable huge: 0/3 nodes are available: 3 Insufficient cpu, 3 Insufficient memory. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."; do
  if ! grep -qxF -- "$want" <<<"$SIM_OUT"; then
    echo "sdk: simulate-example did not print the line: $want" >&2
    exit 1
  fi
done
echo "sdk: simulate-example placed as expected"

KSCHED_EXAMPLE_BINARY=$EXAMPLE/my-scheduler \
KSCHED_EXAMPLE_CONFIG=$ROOT/docs/examples/out-of-tree-plugin/config.yaml \
  "$TESTS" --gtest_brief=1 --gtest_filter='SdkIntegration.*'
