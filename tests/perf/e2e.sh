#!/usr/bin/env bash
# End-to-end comparison against a real local apiserver: ksched and kube-scheduler v1.20.2 (built
# from the same Debian source as the apiserver), each on a fresh control plane, each with client
# QPS/burst 5000, under the same load (tests/perf/e2e_load.cc: scheduler_perf SchedulingBasic
# style, 16 parallel creating clients). Prints pods/s, scheduler CPU seconds, CPU ms per pod
# and peak RSS for each, and the ratios.
#
#   tests/perf/e2e.sh [nodes] [init-pods] [pods] [workload]   (default 500 500 2000 basic)
#
# MODE=backlog (basic, unschedulable, topology-spread): the nodes and all pods are created before
# the scheduler starts; pods/s is the pods that can bind (unschedulable: the measured pods) over
# the time from the first binding to the last (the sustained rate; the line also gives
# first_bound_s, the start-up, and pods_per_s_from_start), and CPU per pod counts every pod.
#
# CEILING=1 (basic, anti-affinity, topology-spread, unschedulable) adds a third run, "ceiling":
# a fresh control plane, the same load, and in place of a scheduler tests/perf/ceiling_binder.cc,
# which binds every pending pod round-robin without scheduling (the same client, QPS/burst and
# 16 binder threads; the 9999-CPU pods stay pending): the most pods/s this apiserver accepts on
# the workload. Ends with "ksched/ceiling: pods/s R".
#
# RATE=R (basic, topology-spread; streamed) creates the measured pods at R per second and prints
# in each line the creation-to-bound p50/p90/p99 (ms) of the measured pods and the scheduling
# attempts' p50/p90/p99 (ms) read from the scheduler's /metrics (ksched's
# scheduler_scheduling_attempt_duration_seconds, v1.20.2's scheduler_e2e_scheduling_duration_seconds;
# see e2e_load.cc). Each scheduler serves /metrics for it as for churn.
#
# Workloads (see e2e_load.cc): basic, anti-affinity (500 100 400), topology-spread
# (500 500 1000), preemption (500 2000 500), churn (500 1000 2000: 60 s of status updates of
# bound pods while 2000 pods are pending; prints the schedulers' attempts and CPU in that window
# and the time to refill 200 freed slots; each scheduler serves /metrics for it), gang
# (500 0 1600: the PodGroup CRD installed, groups of GANG_SIZE (16) pods; ksched runs the
# Coscheduling profile of deploy/manifests/examples/ksched-gang-config.yaml and prints each
# group's time from its last pod created to its last pod bound; kube-scheduler v1.20.2, which has
# no gang scheduling, places the same pods one by one, for reference), dra (500 0 2000: the
# resource.k8s.io CRDs, a DeviceClass serving example.com/gpu and 8 devices per node; every pod
# asks for one example.com/gpu, which ksched allocates through a claim it creates (KEP 5004);
# ksched runs with the admin kubeconfig, and alone: kube-scheduler v1.20.2 has no DRA).
#
# SCRAPE=1 has a real Prometheus (Debian's) scrape each scheduler's /metrics every second for
# SCRAPE_SECONDS (20) once the load is done (after its CPU and RSS are read), and prints the
# scrape's mean and max duration (scrape_duration_seconds), the samples per scrape
# (scrape_samples_scraped) and the body's bytes, with the ratios.
# LOAD=1 (basic) measures the load-aware plugins (docs/load-aware.md): a static exporter gives
# every node a CPU and memory utilization and their deviations (fixed pseudo-random values), a
# real Prometheus scrapes it every 5 s, and besides the usual runs a third, "ksched-load", runs
# ksched with TargetLoadPacking, LoadVariationRiskBalancing and LoadAwareFilter enabled
# (multiPoint) over that Prometheus, refreshed every LOAD_REFRESH (1s). After its load and its
# CPU and RSS are read, it runs LOAD_SETTLE (10) more seconds and prints its refreshes: how
# many, their mean duration (scheduler_load_metrics_refresh_duration_seconds), the CPU of its
# refresh thread per refresh, and the nodes read fresh. Ends with "ksched-load/ksched: pods/s".
# AA=1 runs the ceiling binder twice and nothing else, and ends with "ceiling2/ceiling: pods/s R"
# (and the p99 ratio with RATE): how far apart two runs of the same program land on this machine.
# CEILING_FIRST=1 runs the ceiling binder before the schedulers: alternate it between pairs, as
# the order of the runs leans the result a little (docs/performance.md). CEILING_ARGS adds flags
# to the ceiling binder (e.g. --watch-all-pods true: it watches bound pods too, as a scheduler
# does).
# THREADS=1 prints each scheduler's CPU seconds by thread name before its line.
# APISERVER=1 (MODE=backlog) prints, before each line, what the run cost the control plane from
# the scheduler's start to the last pod bound: kube-apiserver's and etcd's CPU seconds, and the
# requests the apiserver served in that window by verb and resource (apiserver_request_total,
# the load's own creations are done before the window opens).
# APISERVER_PERF=DIR (with APISERVER=1) also records kube-apiserver over that window with
# `perf record -e cpu-clock -g` into DIR/NAME.perf.data (build-k8s.sh strips the binary: link an
# unstripped one, GOLDFLAGS=-buildid=, for its functions' names).
# KSCHED_EXTRA_ARGS adds flags to ksched (e.g. --diagnosis-annotation); KSCHED_ONLY=1 skips
# kube-scheduler; KSCHED_BIN runs another ksched binary (e.g. an older build, to compare);
# KSCHED_WRAPPER runs ksched (and ksched-load) under a profiler ("heaptrack -o /tmp/ksched-heap":
# its CPU and RSS figures are then the wrapper's). heaptrack sees only malloc: profile a binary built with
# -DKSCHED_TCMALLOC=OFF (tcmalloc's operator new bypasses it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
NODES=${1:-500}
INIT=${2:-500}
PODS=${3:-2000}
WORKLOAD=${4:-basic}
BUILD=${KSCHED_BUILD_DIR:-$ROOT/build}
export KSCHED_APISERVER_PORT=${KSCHED_PERF_PORT:-26443}
export KSCHED_ETCD_PORT=${KSCHED_PERF_ETCD_PORT:-22379}
export KSCHED_CLUSTER_DIR=/tmp/ksched-perf-$KSCHED_APISERVER_PORT
CLUSTER=$ROOT/deploy/local/cluster.sh

"$ROOT/deploy/local/install-deps.sh" >/dev/null
K8S_BIN=$("$ROOT/deploy/local/build-k8s.sh" | tail -n 1)
cmake -S "$ROOT" -B "$BUILD" >/dev/null
cmake --build "$BUILD" -j"$(nproc)" --target ksched ksched_e2e_load ksched_ceiling_binder >/dev/null
[ "${AA:-}" = 1 ] && CEILING=1
case "${CEILING:-}:$WORKLOAD" in
  1:basic|1:anti-affinity|1:topology-spread|1:unschedulable|0:*|:*) ;;
  *) echo "CEILING=1: basic, anti-affinity, topology-spread or unschedulable" >&2; exit 2 ;;
esac
if [ -n "${RATE:-}" ] && { [ "${MODE:-stream}" != stream ] ||
                           { [ "$WORKLOAD" != basic ] && [ "$WORKLOAD" != topology-spread ]; }; }; then
  echo "RATE: streamed basic or topology-spread" >&2; exit 2
fi

ticks=$(getconf CLK_TCK)
cpu_seconds() { awk -v t="$ticks" '{printf "%.2f", ($14 + $15) / t}' "/proc/$1/stat"; }
peak_rss_mib() { awk '/VmHWM/ {printf "%.0f", $2 / 1024}' "/proc/$1/status"; }

# Prometheus scraping <url> every second for SCRAPE_SECONDS: "scrape_ms_avg A  scrape_ms_max M
# samples S  bytes B".
scrape_stats() {
  local url=$1 dir=/tmp/ksched-perf-prometheus
  local scheme=${url%%://*} target=${url#*://}
  target=${target%%/*}
  rm -rf "$dir" && mkdir -p "$dir"
  cat > "$dir/prometheus.yml" <<YAML
global: {scrape_interval: 1s, scrape_timeout: 1s}
scrape_configs:
  - job_name: scheduler
    scheme: $scheme
    tls_config: {insecure_skip_verify: true}
    static_configs: [{targets: ["$target"]}]
YAML
  prometheus --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
    --web.listen-address=127.0.0.1:29090 --log.level=warn > "$dir/log" 2>&1 &
  local prom=$!
  sleep "${SCRAPE_SECONDS:-20}"
  local q="http://127.0.0.1:29090/api/v1/query" window="${SCRAPE_SECONDS:-20}s"
  value() { curl -s --data-urlencode "query=$1" "$q" | python3 -c \
    'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "-")'; }
  local avg max samples bytes
  avg=$(value "avg_over_time(scrape_duration_seconds[$window]) * 1000")
  max=$(value "max_over_time(scrape_duration_seconds[$window]) * 1000")
  samples=$(value "max_over_time(scrape_samples_scraped[$window])")
  kill $prom; wait $prom 2>/dev/null || true
  bytes=$(curl -sk "$url" | wc -c)
  printf 'scrape_ms_avg %.2f  scrape_ms_max %.2f  samples %s  bytes %s' "$avg" "$max" "$samples" "$bytes"
}

# The load-aware run's refreshes, from its /metrics and its refresh thread's CPU.
load_refresh_stats() {
  local url=$1 pid=$2 m
  m=$(curl -sk "$url")
  local cpu=0 t
  for t in /proc/$pid/task/*; do
    [ "$(cat "$t/comm")" = load-metrics ] && cpu=$(cpu_seconds "$pid/task/${t##*/}")
  done
  awk -v cpu="$cpu" '
    /^scheduler_load_metrics_refresh_duration_seconds_sum\{source="prometheus"\}/ { sum = $2 }
    /^scheduler_load_metrics_refresh_duration_seconds_count\{source="prometheus"\}/ { n = $2 }
    /^scheduler_load_metrics_refreshes_total\{result="error",source="prometheus"\}/ { err = $2 }
    /^scheduler_load_metrics_nodes\{source="prometheus",state="fresh"\}/ { fresh = $2 }
    END { printf "ksched-load refreshes %d (errors %d)  refresh_ms_avg %.1f  refresh_cpu_ms %.1f  nodes_fresh %d\n",
            n, err, n ? 1000 * sum / n : 0, n ? 1000 * cpu / n : 0, fresh }' <<<"$m"
}

# The apiserver's request counters (verb resource subresource code count), as it serves them.
apiserver_requests() {
  curl -sk -H "Authorization: Bearer $(cat "$KSCHED_CLUSTER_DIR/pki/admin.token")" \
    "https://127.0.0.1:$KSCHED_APISERVER_PORT/metrics" |
    awk '/^apiserver_request_total\{/ {
      l = $1; split("verb resource subresource code", ks, " "); key = ""
      for (i = 1; i <= 4; i++) {
        v = "-"; if (match(l, ks[i] "=\"[^\"]*\"")) v = substr(l, RSTART + length(ks[i]) + 2, RLENGTH - length(ks[i]) - 3)
        if (v == "") v = "-"; key = key v " " }
      n[key] += $2 } END { for (k in n) print k n[k] }'
}
control_plane_mark() {
  cp_apiserver0=$(cpu_seconds "$(cat "$KSCHED_CLUSTER_DIR/apiserver.pid")")
  cp_etcd0=$(cpu_seconds "$(cat "$KSCHED_CLUSTER_DIR/etcd.pid")")
  apiserver_requests > /tmp/ksched-perf-requests-before
  if [ -n "${APISERVER_PERF:-}" ]; then
    mkdir -p "$APISERVER_PERF"
    perf record -q -e cpu-clock -g -p "$(cat "$KSCHED_CLUSTER_DIR/apiserver.pid")" \
      -o "$APISERVER_PERF/$1.perf.data" >/dev/null 2>&1 &
    cp_perf=$!
  fi
}
# "NAME control plane: apiserver_cpu_s A  etcd_cpu_s E" and the requests of the window, by count.
control_plane_report() {
  local a e
  if [ -n "${cp_perf:-}" ]; then kill -INT "$cp_perf"; wait "$cp_perf" || true; cp_perf=; fi
  a=$(cpu_seconds "$(cat "$KSCHED_CLUSTER_DIR/apiserver.pid")")
  e=$(cpu_seconds "$(cat "$KSCHED_CLUSTER_DIR/etcd.pid")")
  awk -v n="$1" -v a="$a" -v a0="$cp_apiserver0" -v e="$e" -v e0="$cp_etcd0" -v p=$((INIT + PODS)) \
    'BEGIN { printf "%s control plane: apiserver_cpu_s %.2f  etcd_cpu_s %.2f  (ms per pod %.2f / %.2f)\n",
             n, a - a0, e - e0, 1000 * (a - a0) / p, 1000 * (e - e0) / p }'
  apiserver_requests | awk 'NR == FNR { b[$1 " " $2 " " $3 " " $4] = $5; next }
    { d = $5 - b[$1 " " $2 " " $3 " " $4]; if (d > 0) printf "  %8d  %s %s %s %s\n", d, $1, $2, $3, $4 }' \
    /tmp/ksched-perf-requests-before - | sort -rn | head -n 15
}

run_one() {
  local name=$1 metrics=$2; shift 2
  "$CLUSTER" down >/dev/null 2>&1 || true
  "$CLUSTER" up >/dev/null
  local out extra=()
  if [ "${MODE:-stream}" = backlog ]; then
    "$BUILD/tests/ksched_e2e_load" --kubeconfig "$KSCHED_CLUSTER_DIR/admin.kubeconfig" \
      --nodes "$NODES" --init-pods "$INIT" --pods "$PODS" --clients 16 --workload "$WORKLOAD" \
      --mode create >/dev/null
    [ -n "${APISERVER:-}" ] && control_plane_mark "$name"
    "$@" > "/tmp/ksched-perf-$name.log" 2>&1 &
    local pid=$!
    out=$("$BUILD/tests/ksched_e2e_load" --kubeconfig "$KSCHED_CLUSTER_DIR/admin.kubeconfig" \
          --nodes "$NODES" --init-pods "$INIT" --pods "$PODS" --workload "$WORKLOAD" \
          --mode wait | tail -n 1)
    [ -n "${APISERVER:-}" ] && control_plane_report "$name"
  else
    if [ "$WORKLOAD" = dra ]; then  # the kinds must be served when the scheduler starts
      "$BUILD/tests/ksched_e2e_load" --kubeconfig "$KSCHED_CLUSTER_DIR/admin.kubeconfig" \
        --nodes "$NODES" --workload dra --mode setup \
        --crd "$ROOT/tests/integration/crds/resource.k8s.io.yaml" >/dev/null
    fi
    "$@" > "/tmp/ksched-perf-$name.log" 2>&1 &
    local pid=$!
    sleep 2
    [ "$WORKLOAD" = churn ] && extra=(--metrics-url "$metrics" --scheduler-pid "$pid")
    if [ -n "${RATE:-}" ]; then
      extra=(--rate "$RATE")
      [ -z "$metrics" ] || extra+=(--metrics-url "$metrics")
    fi
    # ksched's secure port serves a self-signed certificate.
    [[ ${extra[*]} == *"--metrics-url https:"* ]] && extra+=(--metrics-insecure)
    [ "$WORKLOAD" = gang ] && extra=(--gang-size "${GANG_SIZE:-16}"
                                     --crd "$ROOT/deploy/manifests/podgroup-crd.yaml")
    [ "$WORKLOAD" = dra ] && extra=(--crd "$ROOT/tests/integration/crds/resource.k8s.io.yaml")
    out=$("$BUILD/tests/ksched_e2e_load" --kubeconfig "$KSCHED_CLUSTER_DIR/admin.kubeconfig" \
          --nodes "$NODES" --init-pods "$INIT" --pods "$PODS" --clients 16 --workload "$WORKLOAD" \
          "${extra[@]}" | tail -n 1)
  fi
  local cpu rss
  if [ -n "${THREADS:-}" ]; then  # CPU seconds by thread name (threads that ended are not listed)
    for t in /proc/$pid/task/*; do
      printf '%s %s\n' "$(cat "$t/comm")" "$(cpu_seconds "$pid/task/${t##*/}")"
    done | awk '{sub(/-[0-9]+$/, "-*", $1); s[$1] += $2} END {for (k in s) printf "  %-18s %6.2f\n", k, s[k]}' | sort -k2 -rn
  fi
  cpu=$(cpu_seconds $pid)
  rss=$(peak_rss_mib $pid)
  if [ "$name" = ksched-load ]; then
    sleep "${LOAD_SETTLE:-10}"
    load_refresh_stats "$metrics" "$pid"
  fi
  local scrape=
  if [ -n "${SCRAPE:-}" ] && [ -n "$metrics" ]; then
    scrape=$(scrape_stats "$metrics")
    echo "$name /metrics: $scrape"
    eval "${name//-/_}_scrape_avg=$(awk '{print $2}' <<<"$scrape") ${name//-/_}_samples=$(awk '{print $6}' <<<"$scrape")"
  fi
  kill -TERM $pid; wait $pid 2>/dev/null || true
  "$CLUSTER" down >/dev/null
  local pps
  pps=$(sed -n 's/.*pods_per_s=\([0-9.]*\).*/\1/p' <<<"$out")
  local msPerPod
  msPerPod=$(awk -v c="$cpu" -v n=$((INIT + PODS)) 'BEGIN {printf "%.2f", c * 1000 / n}')
  local latency=
  if [ -n "${RATE:-}" ]; then  # creation-to-bound and attempt percentiles, from e2e_load's line
    latency=$(awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
      printf "   p50/p90/p99_ms %s/%s/%s   attempt_p50/p90/p99_ms %s/%s/%s", v["p50_ms"], v["p90_ms"],
        v["p99_ms"], v["attempt_p50_ms"] == "" ? "-" : v["attempt_p50_ms"],
        v["attempt_p90_ms"] == "" ? "-" : v["attempt_p90_ms"],
        v["attempt_p99_ms"] == "" ? "-" : v["attempt_p99_ms"] }' <<<"$out")
  fi
  printf '%-16s pods/s %8s   cpu_s %7s   cpu_ms/pod %6s   peak_rss_MiB %5s%s   (%s)\n' \
    "$name" "$pps" "$cpu" "$msPerPod" "$rss" "$latency" "$out"
  eval "${name//-/_}_pps=$pps ${name//-/_}_cpu=$cpu ${name//-/_}_rss=$rss"
  eval "${name//-/_}_p99=$(sed -n 's/.* p99_ms=\([0-9.]*\).*/\1/p' <<<"$out")"
  eval "${name//-/_}_ap99=$(sed -n 's/.*attempt_p99_ms=\([0-9.]*\).*/\1/p' <<<"$out")"
}

# The client and election settings both schedulers' config files share.
CLIENT_CONFIG="kind: KubeSchedulerConfiguration
clientConnection:
  kubeconfig: $KSCHED_CLUSTER_DIR/scheduler.kubeconfig
  qps: 5000
  burst: 5000
leaderElection:
  leaderElect: false"
printf 'apiVersion: kubescheduler.config.k8s.io/v1beta1\n%s\n' "$CLIENT_CONFIG" \
  > /tmp/ksched-perf-kube-scheduler.yaml
# kube-scheduler v1.20.2 takes its insecure metrics address from the file, not from --port.
METRICS=0
if [ "$WORKLOAD" = churn ] || [ -n "${RATE:-}" ] || [ -n "${SCRAPE:-}" ] || [ -n "${LOAD:-}" ]; then
  METRICS=1
fi
if [ -n "${LOAD:-}" ] && [ "$WORKLOAD" != basic ]; then echo "LOAD=1: basic" >&2; exit 2; fi
if [ "$METRICS" = 1 ]; then
  printf 'healthzBindAddress: 127.0.0.1:20251\nmetricsBindAddress: 127.0.0.1:20251\n' \
    >> /tmp/ksched-perf-kube-scheduler.yaml
fi

echo "e2e $WORKLOAD (${MODE:-stream}${RATE:+, $RATE pods/s}): $NODES nodes, $INIT init pods, $PODS measured pods, 16 creating clients, QPS 5000"
# The churn workload and RATE read each scheduler's /metrics: ksched's HTTPS port with /metrics
# open to anyone, kube-scheduler v1.20.2's insecure port.
KSCHED_PORT=0
if [ "$METRICS" = 1 ]; then KSCHED_PORT=20259; fi
if [ "$WORKLOAD" = gang ]; then
  cat > /tmp/ksched-perf-gang.yaml <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
$CLIENT_CONFIG
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: Coscheduling
    queueSort:
      enabled:
      - name: Coscheduling
      disabled:
      - name: "*"
YAML
  KSCHED_EXTRA_ARGS="--config /tmp/ksched-perf-gang.yaml ${KSCHED_EXTRA_ARGS:-}"
fi
if [ -n "${LOAD:-}" ]; then
  # Every node's utilization (fixed pseudo-random: cpu 5-75 %, memory 20-80 %), served as a
  # static file, scraped every 5 s by a Prometheus that lives through every run.
  LOAD_DIR=/tmp/ksched-perf-load
  rm -rf "$LOAD_DIR" && mkdir -p "$LOAD_DIR/www"
  awk -v n="$NODES" 'BEGIN { srand(1); for (i = 0; i < n; i++) {
      l = "{node=\"perf-node-" i "\"}"
      printf "ksched_perf_node_cpu%s %.3f\nksched_perf_node_memory%s %.3f\n", l, 0.05 + 0.7 * rand(), l, 0.2 + 0.6 * rand()
      printf "ksched_perf_node_cpu_stddev%s %.3f\nksched_perf_node_memory_stddev%s %.3f\n", l, 0.1 * rand(), l, 0.05 * rand() } }' \
    > "$LOAD_DIR/www/metrics"
  python3 -m http.server 29100 --bind 127.0.0.1 --directory "$LOAD_DIR/www" > "$LOAD_DIR/exporter.log" 2>&1 &
  LOAD_EXPORTER=$!
  cat > "$LOAD_DIR/prometheus.yml" <<YAML
global: {scrape_interval: 5s, scrape_timeout: 5s}
scrape_configs:
  - job_name: nodes
    honor_labels: true
    static_configs: [{targets: ["127.0.0.1:29100"]}]
YAML
  prometheus --config.file="$LOAD_DIR/prometheus.yml" --storage.tsdb.path="$LOAD_DIR/data" \
    --web.listen-address=127.0.0.1:29091 --log.level=warn > "$LOAD_DIR/prometheus.log" 2>&1 &
  LOAD_PROMETHEUS=$!
  trap 'kill $LOAD_EXPORTER $LOAD_PROMETHEUS 2>/dev/null || true' EXIT
  for _ in $(seq 1 60); do
    n=$(curl -s --data-urlencode 'query=count(ksched_perf_node_cpu)' \
          http://127.0.0.1:29091/api/v1/query 2>/dev/null |
        python3 -c 'import json,sys; r=json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else 0)' 2>/dev/null || echo 0)
    [ "$n" = "$NODES" ] && break
    sleep 1
  done
  provider="metricProvider: {type: Prometheus, address: \"http://127.0.0.1:29091\", cpuQuery: ksched_perf_node_cpu, memoryQuery: ksched_perf_node_memory, cpuStddevQuery: ksched_perf_node_cpu_stddev, memoryStddevQuery: ksched_perf_node_memory_stddev, nodeLabel: node, refreshInterval: ${LOAD_REFRESH:-1s}}"
  cat > "$LOAD_DIR/ksched-load.yaml" <<YAML
apiVersion: kubescheduler.config.k8s.io/v1
$CLIENT_CONFIG
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: TargetLoadPacking
      - name: LoadVariationRiskBalancing
      - name: LoadAwareFilter
  pluginConfig:
  - name: TargetLoadPacking
    args: {$provider}
  - name: LoadVariationRiskBalancing
    args: {$provider}
  - name: LoadAwareFilter
    args: {$provider}
YAML
fi
# dra: the CRD-served kinds need RBAC the local cluster's scheduler identity lacks.
KSCHED_KUBECONFIG=$KSCHED_CLUSTER_DIR/scheduler.kubeconfig
if [ "$WORKLOAD" = dra ]; then KSCHED_KUBECONFIG=$KSCHED_CLUSTER_DIR/admin.kubeconfig; KSCHED_ONLY=1; fi
run_ceiling() {
  run_one "${1:-ceiling}" "" "$BUILD/tests/ksched_ceiling_binder" \
    --kubeconfig "$KSCHED_CLUSTER_DIR/scheduler.kubeconfig" --kube-api-qps 5000 \
    --kube-api-burst 5000 --binder-threads 16 ${CEILING_ARGS:-}
}
# "A/B: pods/s R[, p99 creation-to-bound R]" from the two runs' figures.
ratio_line() {
  local ap=${1//-/_}_pps bp=${2//-/_}_pps aq=${1//-/_}_p99 bq=${2//-/_}_p99
  awk -v n="$1/$2" -v a="${!ap:-0}" -v b="${!bp:-0}" -v c="${!aq:-0}" -v d="${!bq:-0}" 'BEGIN {
    printf "%s: pods/s %s", n, (b > 0 ? sprintf("%.2f", a / b) : "-")
    if (d > 0) printf ", p99 creation-to-bound %.2f", c / d
    printf "\n" }'
}
if [ "${AA:-}" = 1 ]; then  # the binder against itself: how far apart two equal runs land
  run_ceiling ceiling
  run_ceiling ceiling2
  ratio_line ceiling2 ceiling
  exit 0
fi
[ "${CEILING:-}" = 1 ] && [ "${CEILING_FIRST:-}" = 1 ] && run_ceiling
run_one ksched "https://127.0.0.1:$KSCHED_PORT/metrics" \
  ${KSCHED_WRAPPER:-} "${KSCHED_BIN:-$BUILD/ksched}" --kubeconfig "$KSCHED_KUBECONFIG" \
  --kube-api-qps 5000 --kube-api-burst 5000 --leader-elect=false --secure-port=$KSCHED_PORT \
  --bind-address=127.0.0.1 --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics \
  ${KSCHED_EXTRA_ARGS:-}
if [ -n "${LOAD:-}" ]; then
  run_one ksched-load "https://127.0.0.1:$KSCHED_PORT/metrics" \
    ${KSCHED_WRAPPER:-} "${KSCHED_BIN:-$BUILD/ksched}" --config "$LOAD_DIR/ksched-load.yaml" \
    --secure-port=$KSCHED_PORT --bind-address=127.0.0.1 \
    --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics ${KSCHED_EXTRA_ARGS:-}
fi
if [ "${KSCHED_ONLY:-}" != 1 ]; then
  run_one kube-scheduler "http://127.0.0.1:20251/metrics" \
    "$K8S_BIN/kube-scheduler" --config /tmp/ksched-perf-kube-scheduler.yaml \
    $([ "$METRICS" = 1 ] || echo --port 0) --secure-port 0 --v 0
fi
[ "${CEILING:-}" = 1 ] && [ "${CEILING_FIRST:-}" != 1 ] && run_ceiling
[ "$WORKLOAD" = churn ] && exit 0  # its figures are in each line above
if [ "${KSCHED_ONLY:-}" != 1 ]; then
  awk -v a="$ksched_pps" -v b="$kube_scheduler_pps" -v c="$ksched_cpu" -v d="$kube_scheduler_cpu" \
      -v e="$ksched_rss" -v f="$kube_scheduler_rss" -v g="$ksched_p99" -v h="$kube_scheduler_p99" \
      -v i="$ksched_ap99" -v j="$kube_scheduler_ap99" 'BEGIN {
    printf "ratios ksched/kube-scheduler: pods/s %.2f, cpu %.2f, peak rss %.2f", a / b, c / d, e / f
    if (h > 0) printf ", p99 creation-to-bound %.2f", g / h
    if (j > 0) printf ", p99 attempt %.2f", i / j
    printf "\n" }'
fi
if [ -n "${SCRAPE:-}" ] && [ "${KSCHED_ONLY:-}" != 1 ]; then
  awk -v a="$ksched_scrape_avg" -v b="$kube_scheduler_scrape_avg" -v c="$ksched_samples" \
      -v d="$kube_scheduler_samples" 'BEGIN {
    printf "scrape ksched/kube-scheduler: duration %.2f, samples %.2f\n", a / b, c / d }'
fi
if [ -n "${LOAD:-}" ]; then
  awk -v a="$ksched_load_pps" -v b="$ksched_pps" -v c="$ksched_load_cpu" -v d="$ksched_cpu" 'BEGIN {
    printf "ksched-load/ksched: pods/s %.2f, cpu %.2f\n", a / b, c / d }'
fi
if [ "${CEILING:-}" = 1 ]; then ratio_line ksched ceiling; fi
