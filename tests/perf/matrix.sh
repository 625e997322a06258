#!/usr/bin/env bash
# The benchmark matrix: workloads × cluster sizes × {ksched, kube-scheduler v1.20.2}, each cell
# one run of tests/perf/e2e.sh (a fresh local control plane per scheduler). Writes the figures
# as JSON and renders them as a Markdown page with tables and SVG plots (pods/s, CPU ms per
# pod and peak RSS against node count, drawn by gnuplot from Debian), stamped with the machine
# and the date.
#
#   tests/perf/matrix.sh [--sizes "500 1000 5000 15000"]
#                        [--workloads "basic basic-backlog anti-affinity topology-spread
#                                      preemption unschedulable"]
#                        [--out docs/performance-matrix.json] [--page docs/performance-matrix.md]
#   tests/perf/matrix.sh --render-only [--out FILE] [--page FILE]   (redraw from the JSON)
#   --note TEXT is printed under the stamp (e.g. what else the machine was doing).
# Runs of cells (workload × nodes) not measured again are kept from the existing JSON (each run
# carries its date; each table says when it was measured); --fresh drops them.
#
# Pods per cell (init + measured), after upstream's scheduler_perf templates, fewer where a
# 2-core machine would take too long:
#   basic, basic-backlog  min(nodes, 1000) + 3000 (2000 from 15 000 nodes); basic-backlog creates
#                         every pod before the scheduler starts (e2e.sh MODE=backlog)
#   anti-affinity         100 + 400     topology-spread  500 + 1000
#   preemption            4 × nodes + nodes (up to 1000 nodes; skipped above)
#   unschedulable         200 pods that fit nowhere + 2000 basic pods
#   dra-empty, dra-half, dra-full
#                         e2e.sh's dra workload (8 devices per node, every pod one
#                         example.com/gpu through a claim): 0, 4 or 6 pods per node first, then
#                         2 per node measured (up to 1000 nodes; ksched only: v1.20.2 has no DRA)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIZES="500 1000 5000 15000"
WORKLOADS="basic basic-backlog anti-affinity topology-spread preemption unschedulable"
OUT=$ROOT/docs/performance-matrix.json
PAGE=$ROOT/docs/performance-matrix.md
RENDER_ONLY=0
FRESH=0
NOTE=
while [ $# -gt 0 ]; do
  case $1 in
    --sizes) SIZES=$2; shift 2 ;;
    --workloads) WORKLOADS=$2; shift 2 ;;
    --out) OUT=$2; shift 2 ;;
    --page) PAGE=$2; shift 2 ;;
    --render-only) RENDER_ONLY=1; shift ;;
    --fresh) FRESH=1; shift ;;
    --note) NOTE=$2; shift 2 ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done

# init and measured pods of a cell; empty when the cell is skipped.
cell_pods() {
  local workload=$1 nodes=$2
  case $workload in
    basic|basic-backlog)
      local init=$((nodes < 1000 ? nodes : 1000))
      echo "$init $((nodes >= 15000 ? 2000 : 3000))" ;;
    anti-affinity) echo "100 400" ;;
    topology-spread) echo "500 1000" ;;
    preemption) if [ "$nodes" -le 1000 ]; then echo "$((4 * nodes)) $nodes"; fi ;;
    unschedulable) echo "200 2000" ;;
    dra-empty|dra-half|dra-full)
      if [ "$nodes" -le 1000 ]; then
        case $workload in dra-empty) echo "0 $((2 * nodes))" ;; dra-half) echo "$((4 * nodes)) $((2 * nodes))" ;;
          dra-full) echo "$((6 * nodes)) $((2 * nodes))" ;; esac
      fi ;;
    *) echo "unknown workload $workload" >&2; exit 2 ;;
  esac
}

run_matrix() {
  mkdir -p "$(dirname "$OUT")"
  local lines=$OUT.lines
  : > "$lines"
  for workload in $WORKLOADS; do
    for nodes in $SIZES; do
      local pods
      pods=$(cell_pods "$workload" "$nodes") || exit 2
      if [ -z "$pods" ]; then
        echo "== $workload, $nodes nodes: skipped"
        continue
      fi
      set -- $pods
      local init=$1 measured=$2 mode=stream base=$workload
      if [ "$workload" = basic-backlog ]; then mode=backlog; base=basic; fi
      case $workload in dra-*) base=dra ;; esac
      echo "== $workload, $nodes nodes, $init + $measured pods"
      local log
      log=$(MODE=$mode "$ROOT/tests/perf/e2e.sh" "$nodes" "$init" "$measured" "$base" 2>&1) || {
        echo "$log" | tail -n 20 >&2
        echo "== $workload, $nodes nodes: failed" >&2
        continue
      }
      # "<scheduler> pods/s P cpu_s C cpu_ms/pod M peak_rss_MiB R (...)"
      awk -v w="$workload" -v n="$nodes" -v i="$init" -v m="$measured" -v d="$(date -u +%Y-%m-%d)" '
        $1 == "ksched" || $1 == "kube-scheduler" {
          printf "{\"workload\":\"%s\",\"nodes\":%d,\"init_pods\":%d,\"pods\":%d,\"scheduler\":\"%s\",\"pods_per_s\":%s,\"cpu_s\":%s,\"cpu_ms_per_pod\":%s,\"peak_rss_mib\":%s,\"date\":\"%s\"}\n",
            w, n, i, m, $1, $3, $5, $7, $9, d
        }' <<<"$log" | tee -a "$lines"
    done
  done
  if [ "$FRESH" = 0 ] && [ -f "$OUT" ]; then
    # Keep the runs of cells (workload, nodes) this run did not measure, dated (runs written
    # before dates were kept get the file's).
    local oldDate measuredCells
    oldDate=$(sed -n 's/^{"date":"\([^"]*\)".*/\1/p' "$OUT")
    measuredCells=" $(sed -n 's/^{"workload":"\([^"]*\)","nodes":\([0-9]*\).*/\1:\2/p' "$lines" | tr '\n' ' ')"
    sed -n 's/^\({"workload":"\([^"]*\)","nodes":\([0-9]*\).*}\)[,]*$/\2:\3 \1/p' "$OUT" |
    while read -r cell rec; do
      [[ $measuredCells == *" $cell "* ]] && continue
      [[ $rec == *'"date":'* ]] || rec="${rec%\}},\"date\":\"$oldDate\"}"
      echo "$rec"
    done >> "$lines"
  fi
  local machine cores
  machine=$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo)
  cores=$(nproc)
  {
    printf '{"date":"%s","machine":"%s","cores":%d,"memory_gib":%d,"note":"%s","runs":[\n' \
      "$(date -u +%Y-%m-%d)" "${machine//\"/}" "$cores" \
      "$(awk '/MemTotal/ {printf "%d", $2 / 1048576 + 0.5}' /proc/meminfo)" "${NOTE//\"/}"
    paste -sd, "$lines" | sed 's/},{/},\n{/g'
    printf ']}\n'
  } > "$OUT"
  rm -f "$lines"
  echo "wrote $OUT"
}

# One run per line, "workload nodes scheduler pods_per_s cpu_ms_per_pod peak_rss_mib", from the
# JSON (flat objects, one per line, as run_matrix writes them).
flat_runs() {
  sed -n 's/^{\("workload".*\)}[,]*$/\1/p' "$OUT" | awk -F, '{
    for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/"/, "", kv[1]); gsub(/"/, "", kv[2]); v[kv[1]] = kv[2] }
    print v["workload"], v["nodes"], v["scheduler"], v["pods_per_s"], v["cpu_ms_per_pod"], v["peak_rss_mib"], v["date"]
  }'
}

render() {
  [ -f "$OUT" ] || { echo "no $OUT: run the matrix first" >&2; exit 1; }
  command -v gnuplot >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gnuplot-nox >/dev/null
  local date machine cores img
  date=$(sed -n 's/^{"date":"\([^"]*\)".*/\1/p' "$OUT")
  machine=$(sed -n 's/.*"machine":"\([^"]*\)".*/\1/p' "$OUT")
  cores=$(sed -n 's/.*"cores":\([0-9]*\).*/\1/p' "$OUT")
  [ -n "$NOTE" ] || NOTE=$(sed -n 's/.*"note":"\([^"]*\)".*/\1/p' "$OUT")
  img=$(dirname "$PAGE")/img
  mkdir -p "$img"
  local runs
  runs=$(flat_runs)
  {
    echo "# Benchmark matrix"
    echo
    echo "Generated by \`tests/perf/matrix.sh\` from \`$(realpath --relative-to="$ROOT" "$OUT")\`:"
    echo "$machine, $cores cores (latest run $date). One run per cell; each scheduler on a fresh local"
    echo "control plane (etcd + kube-apiserver v1.20.2 on the same machine), client QPS/burst 5000."
    echo "Ratios are ksched / kube-scheduler v1.20.2. See [performance.md](performance.md) for the"
    echo "workloads and how each figure is measured. The dra workloads have no kube-scheduler column:"
    echo "v1.20.2 has no Dynamic Resource Allocation (upstream's scheduler_perf floors for its DRA"
    echo "workloads at 500 nodes are 40-70 pods/s, on other machines)."
    [ -z "$NOTE" ] || { echo; echo "$NOTE"; }
    for workload in $(awk '{print $1}' <<<"$runs" | awk '!seen[$0]++'); do
      echo
      echo "## $workload"
      echo
      echo "Measured $(awk -v w="$workload" '$1 == w && $7 != "" {print $7; exit}' <<<"$runs")."
      echo
      echo "| nodes | pods/s ksched | pods/s kube-scheduler | ratio | CPU ms/pod ksched | CPU ms/pod kube-scheduler | ratio | peak RSS MiB ksched | peak RSS MiB kube-scheduler | ratio |"
      echo "|---|---|---|---|---|---|---|---|---|---|"
      sort -k2,2n <<<"$runs" | awk -v w="$workload" '$1 == w { key = $2
          if (!(key in seen)) { seen[key] = 1; order[++n] = key }
          if ($3 == "ksched") { kp[key] = $4; kc[key] = $5; kr[key] = $6 } else { sp[key] = $4; sc[key] = $5; sr[key] = $6 } }
        function ratio(a, b) { return (a != "" && b != "" && b + 0 > 0) ? sprintf("%.2f", a / b) : "—" }
        END { for (i = 1; i <= n; i++) { k = order[i]
            printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, kp[k], sp[k], ratio(kp[k], sp[k]),
              kc[k], sc[k], ratio(kc[k], sc[k]), kr[k], sr[k], ratio(kr[k], sr[k]) } }'
    done
    echo
    echo "## Against node count"
    echo
    for metric in pods_per_s cpu_ms_per_pod peak_rss_mib; do
      echo "![$metric](img/matrix-$metric.svg)"
      echo
    done
  } > "$PAGE"
  local data
  data=$(mktemp -d)
  awk -v d="$data" '{ print $2, $4, $5, $6 > (d "/" $1 "." $3 ".dat") }' <<<"$runs"
  for f in "$data"/*.dat; do sort -n -o "$f" "$f"; done
  local col title
  for metric in pods_per_s cpu_ms_per_pod peak_rss_mib; do
    case $metric in
      pods_per_s) col=2; title="pods/s" ;;
      cpu_ms_per_pod) col=3; title="scheduler CPU ms per pod" ;;
      peak_rss_mib) col=4; title="peak RSS MiB" ;;
    esac
    local plots=()
    for f in "$data"/*.dat; do
      local name
      name=$(basename "$f" .dat)
      plots+=("'$f' using 1:$col with linespoints title '${name/./ }'")
    done
    gnuplot <<GP
set terminal svg size 800,480 dynamic font "sans,11"
set output "$img/matrix-$metric.svg"
set title "$title ($cores cores)"
set xlabel "nodes"
set logscale x
set key outside right
set grid
plot $(IFS=,; echo "${plots[*]}")
GP
  done
  rm -rf "$data"
  echo "wrote $PAGE and $img/matrix-*.svg"
}

[ "$RENDER_ONLY" = 1 ] || run_matrix
render
