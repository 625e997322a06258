#!/usr/bin/env bash
# Runs every ksched test on this machine: installs the Debian packages it needs, builds the
# local control plane (cached in ~/.cache/ksched), builds ksched with warnings as errors, and
# runs the unit and integration suites through ctest.
#
#   tests/run.sh          release build with debug info (build/)
#   tests/run.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   tests/run.sh tsan     ThreadSanitizer (build-tsan/)
#   tests/run.sh all      the three in turn
#
# Extra ctest arguments go after the mode, e.g. `tests/run.sh default -L unit`.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MODE=${1:-default}
shift || true

"$ROOT/deploy/local/install-deps.sh"
"$ROOT/deploy/local/build-k8s.sh" >/dev/null

# Compiler cache (~/.ccache): rebuilds of an unchanged tree, or of another clone of it on the
# same machine, take seconds. Paths are taken relative to the repo so clones share entries.
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G}
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

START=$(date +%s)
stamp() { echo "=== ksched tests: $(( $(date +%s) - START )) s: $*"; }

run_mode() {
  local mode=$1; shift
  local dir args=()
  case "$mode" in
    # Line tables only (-g1): backtraces and perf keep file:line, the build takes a third less.
    default) dir=$ROOT/build; args=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG") ;;
    asan) dir=$ROOT/build-asan; args=(-DKSCHED_SANITIZE=ON -DKSCHED_BUILD_BENCHMARKS=OFF) ;;
    tsan) dir=$ROOT/build-tsan; args=(-DKSCHED_TSAN=ON -DKSCHED_BUILD_BENCHMARKS=OFF) ;;
    *) echo "unknown mode: $mode (default|asan|tsan|all)" >&2; exit 2 ;;
  esac
  stamp "$mode build in $dir"
  cmake -S "$ROOT" -B "$dir" -DKSCHED_WERROR=ON -DKSCHED_BUILD_TESTS=ON "${LAUNCHER[@]}" "${args[@]}" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  stamp "$mode build done; running the tests"
  local env=()
  case "$mode" in
    asan) env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1) ;;
    tsan) env=(TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1) ;;
  esac
  env "${env[@]}" ctest --test-dir "$dir" --output-on-failure "$@"
  stamp "$mode tests passed"
}

if [ "$MODE" = all ]; then
  for m in default asan tsan; do run_mode "$m" "$@"; done
else
  run_mode "$MODE" "$@"
fi
