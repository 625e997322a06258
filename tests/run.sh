#!/usr/bin/env bash
# Runs every ksched test on this machine: installs the Debian packages it needs, builds the
# local control plane (cached in ~/.cache/ksched), builds ksched with warnings as errors, and
# runs the unit, integration and browser suites through ctest (the browser tests: the simulate
# and advise reports in headless Chromium, plain build only).
#
#   tests/run.sh          release build with debug info (build/)
#   tests/run.sh asan     AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   tests/run.sh tsan     ThreadSanitizer (build-tsan/)
#   tests/run.sh all      the three in turn (the unit tests in the two sanitizer trees only),
#                         and every fuzz target for a few seconds after the asan tests
#   tests/run.sh fuzz [SECONDS]
#                         builds build-asan/ and runs every libFuzzer target (tests/fuzz/) for
#                         SECONDS each (default 20) on a copy of its corpus; fails on a crash
#
# Extra ctest arguments go after the mode, e.g. `tests/run.sh default -L unit` or `-L browser`.
# The asan build uses clang when it is installed (the libFuzzer targets need it), else gcc
# without them.
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
  # pch_defines,time_macros: the test binaries' precompiled headers (tests/CMakeLists.txt).
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1 CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-20G} \
    CCACHE_SLOPPINESS=pch_defines,time_macros,include_file_mtime,include_file_ctime
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi

START=$(date +%s)
stamp() { echo "=== ksched tests: $(( $(date +%s) - START )) s: $*"; }

run_mode() {
  local mode=$1; shift
  local dir args=()
  case "$mode" in
    # Line tables only (-g1): backtraces and perf keep file:line, the build takes a third less.
    default)
      dir=$ROOT/build; args=(-DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG")
      # In `all`, the unit tests run in the sanitizer trees (ASan: every file, clang; TSan: those
      # that run threads, gcc), where they find more; compiling them a third time was a sixth
      # of CI. The plain tree keeps the integration, image, sdk and browser suites.
      args+=(-DKSCHED_BUILD_UNIT_TESTS="$([ "$MODE" = all ] && echo OFF || echo ON)") ;;
    asan)
      dir=$ROOT/build-asan; args=(-DKSCHED_SANITIZE=ON -DKSCHED_BUILD_BENCHMARKS=OFF)
      if command -v clang++ >/dev/null 2>&1; then args+=(-DCMAKE_CXX_COMPILER=clang++); fi ;;
    tsan) dir=$ROOT/build-tsan; args=(-DKSCHED_TSAN=ON -DKSCHED_BUILD_BENCHMARKS=OFF) ;;
    *) echo "unknown mode: $mode (default|asan|tsan|all|fuzz)" >&2; exit 2 ;;
  esac
  stamp "$mode build in $dir"
  cmake -S "$ROOT" -B "$dir" -DKSCHED_WERROR=ON -DKSCHED_BUILD_TESTS=ON "${LAUNCHER[@]}" "${args[@]}" >/dev/null
  cmake --build "$dir" -j"$(nproc)"
  stamp "$mode build done"
  if [ "${BUILD_ONLY:-0}" = 1 ]; then return; fi
  stamp "$mode: running the tests"
  local env=()
  case "$mode" in
    asan) env=(ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1) ;;
    tsan) env=(TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1) ;;
  esac
  # Two at a time: the integration shards side by side (tests/CMakeLists.txt); `image` and
  # `sdk` (RUN_SERIAL) alone.
  if ! env "${env[@]}" ctest --test-dir "$dir" --output-on-failure --parallel "${KSCHED_TEST_JOBS:-2}" "$@"; then
    # A long suite's output is cut in the middle by whoever keeps only its head and tail: say
    # again, last, which tests failed and how.
    echo "=== ksched tests: $mode: the failures again"
    grep -E -A8 '(Failure|FAILED  \]|ERROR: AddressSanitizer|WARNING: ThreadSanitizer|runtime error:)' \
      "$dir/Testing/Temporary/LastTest.log" | head -150 || true
    return 1
  fi
  stamp "$mode tests passed"
}

# Runs every libFuzzer target of build-asan/fuzz/ for $1 seconds on a scratch copy of its
# corpus (tests/fuzz/corpus/<target>/, plus tests/fuzz/regressions/<target>/, read only),
# KSCHED_FUZZ_JOBS targets at a time (default: one per core; each fuzzer runs on one thread);
# prints the executions of each. A crash leaves its input in build-asan/fuzz-artifacts/<target>/.
fuzz_one() {
  local exe=$1 seconds=$2 scratch=$3 dir=$4 t
  t=$(basename "$exe" _fuzz)
  mkdir -p "$scratch/$t/corpus" "$scratch/$t/artifacts"
  cp -R "$ROOT/tests/fuzz/corpus/$t/." "$scratch/$t/corpus/"
  # New inputs go to the first corpus directory: the scratch copy, never the repo.
  local opts=() dirs=("$scratch/$t/corpus") log=$scratch/$t/log execs
  [ -f "$ROOT/tests/fuzz/dict/$t.dict" ] && opts+=(-dict="$ROOT/tests/fuzz/dict/$t.dict")
  [ -d "$ROOT/tests/fuzz/regressions/$t" ] && dirs+=("$ROOT/tests/fuzz/regressions/$t")
  if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      "$exe" -max_total_time="$seconds" -timeout=30 -print_final_stats=1 \
      -artifact_prefix="$scratch/$t/artifacts/" "${opts[@]}" "${dirs[@]}" >"$log" 2>&1; then
    execs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
    printf '  %-14s %10s executions, corpus %s inputs\n' "$t" "${execs:-?}" \
      "$(find "$scratch/$t/corpus" -type f | wc -l)" >"$scratch/$t/summary"
  else
    mkdir -p "$dir/fuzz-artifacts/$t"
    cp "$scratch/$t/artifacts/"* "$log" "$dir/fuzz-artifacts/$t/" 2>/dev/null || true
    {
      echo "  $t: CRASH (input and log in $dir/fuzz-artifacts/$t/):"
      grep -E -A30 '^==[0-9]+==ERROR|^SUMMARY|runtime error|fuzz check failed|terminate called|uncaught' \
        "$log" | head -40 | sed 's/^/    /' || true
    } >"$scratch/$t/summary"
    touch "$scratch/$t/crashed"
  fi
}

run_fuzz() {
  local seconds=$1 dir=$ROOT/build-asan jobs=${KSCHED_FUZZ_JOBS:-$(nproc)}
  local targets=("$dir"/fuzz/*_fuzz)
  if [ ! -x "${targets[0]}" ]; then
    echo "no fuzz targets in $dir/fuzz: they need clang (apt-get install clang)" >&2
    return 1
  fi
  local scratch failed=() t exe
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/ksched-fuzz.XXXXXX")
  stamp "fuzzing ${#targets[@]} targets for ${seconds} s each, ${jobs} at a time"
  for exe in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n || true; done
    fuzz_one "$exe" "$seconds" "$scratch" "$dir" &
  done
  wait
  for exe in "${targets[@]}"; do
    t=$(basename "$exe" _fuzz)
    cat "$scratch/$t/summary" 2>/dev/null || echo "  $t: no result"
    if [ -e "$scratch/$t/crashed" ] || [ ! -e "$scratch/$t/summary" ]; then failed+=("$t"); fi
  done
  rm -rf "$scratch"
  if [ ${#failed[@]} -gt 0 ]; then
    echo "fuzz targets that crashed: ${failed[*]} (docs/fuzzing.md: turning a crash into a regression)" >&2
    return 1
  fi
  stamp "fuzzing done"
}

# Seconds per fuzz target in `all` (CI): 15 targets, two at a time on 2 cores, about a minute
# and a half in all.
CI_FUZZ_SECONDS=${KSCHED_CI_FUZZ_SECONDS:-12}

case "$MODE" in
  all)
    for m in default asan tsan; do
      run_mode "$m" "$@"
      # Right after the asan tests, whose build holds the fuzz targets.
      if [ "$m" = asan ] && [ -x "$ROOT/build-asan/fuzz/config_fuzz" ]; then
        run_fuzz "$CI_FUZZ_SECONDS"
      fi
    done ;;
  fuzz)
    BUILD_ONLY=1 run_mode asan
    run_fuzz "${1:-20}" ;;
  *) run_mode "$MODE" "$@" ;;
esac
