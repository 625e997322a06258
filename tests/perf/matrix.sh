#!/usr/bin/env bash
# The benchmark matrix: workloads × cluster sizes × {ksched, kube-scheduler v1.20.2}, each cell
# one run of tests/perf/e2e.sh (a fresh local control plane per scheduler). Writes the figures
# as JSON and renders them as a Markdown page with tables and SVG plots (pods/s, CPU ms per
# pod and peak RSS against node count, drawn by gnuplot from Debian), stamped with the machine
# and the date.
#
#   tests/perf/matrix.sh [--sizes "500 1000 5000 15000"]
#                        [--workloads "basic basic-backlog anti-affinity topology-spread
#                                      topology-spread-backlog preemption unschedulable
#                                      unschedulable-backlog latency-100 latency-300 latency-500"]
#                        [--out docs/performance-matrix.json] [--page docs/performance-matrix.md]
#   tests/perf/matrix.sh --render-only [--out FILE] [--page FILE]   (redraw from the JSON)
#   --note TEXT is printed under the stamp (e.g. what else the machine was doing).
# Runs of cells (workload × nodes) not measured again are kept from the existing JSON (each run
# carries its date; each table says when it was measured); --fresh drops them.
#
# Pods per cell (init + measured), after upstream's scheduler_perf templates, fewer where a
# 2-core machine would take too long:
#   basic, basic-backlog  min(nodes, 1000) + 3000 (2000 from 15 000 nodes)
#   anti-affinity         100 + 400     topology-spread, topology-spread-backlog  500 + 1000
#   preemption            4 × nodes + nodes (up to 1000 nodes; skipped above)
#   unschedulable, unschedulable-backlog
#                         200 pods that fit nowhere + 2000 basic pods
#   latency-100, latency-300, latency-500
#                         basic, streamed at 100, 300 or 500 pods/s (e2e.sh RATE=R):
#                         min(nodes, 1000) + 10 s worth (1000, 3000, 5000); creation-to-bound and
#                         scheduling-attempt p50/p90/p99 from each scheduler
#   dra-empty, dra-half, dra-full
#                         e2e.sh's dra workload (8 devices per node, every pod one
#                         example.com/gpu through a claim): 0, 4 or 6 pods per node first, then
#                         2 per node measured (up to 1000 nodes; ksched only: v1.20.2 has no DRA)
# The *-backlog workloads create every pod before the scheduler starts (e2e.sh MODE=backlog) and
# get a third run, the ceiling (e2e.sh CEILING=1): pods/s of tests/perf/ceiling_binder.cc, which
# binds without scheduling, on the same apiserver and load.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SIZES="500 1000 5000 15000"
WORKLOADS="basic basic-backlog anti-affinity topology-spread topology-spread-backlog preemption
  unschedulable unschedulable-backlog latency-100 latency-300 latency-500"
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
    -h|--help) sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
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
    topology-spread|topology-spread-backlog) echo "500 1000" ;;
    preemption) if [ "$nodes" -le 1000 ]; then echo "$((4 * nodes)) $nodes"; fi ;;
    unschedulable|unschedulable-backlog) echo "200 2000" ;;
    latency-100|latency-300|latency-500)
      echo "$((nodes < 1000 ? nodes : 1000)) $((10 * ${workload#latency-}))" ;;
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
      local init=$1 measured=$2 mode=stream base=$workload ceiling= rate=
      case $workload in
        *-backlog) mode=backlog; base=${workload%-backlog}; ceiling=1 ;;
        latency-*) base=basic; rate=${workload#latency-} ;;
        dra-*) base=dra ;;
      esac
      echo "== $workload, $nodes nodes, $init + $measured pods"
      local log
      log=$(MODE=$mode CEILING=$ceiling RATE=$rate "$ROOT/tests/perf/e2e.sh" "$nodes" "$init" \
              "$measured" "$base" 2>&1) || {
        echo "$log" | tail -n 20 >&2
        echo "== $workload, $nodes nodes: failed" >&2
        continue
      }
      # "<scheduler> pods/s P cpu_s C cpu_ms/pod M peak_rss_MiB R [...] (key=value ...)": the
      # latency figures, when there, from e2e_load's key=value line.
      awk -v w="$workload" -v n="$nodes" -v i="$init" -v m="$measured" -v d="$(date -u +%Y-%m-%d)" '
        $1 == "ksched" || $1 == "kube-scheduler" || $1 == "ceiling" {
          printf "{\"workload\":\"%s\",\"nodes\":%d,\"init_pods\":%d,\"pods\":%d,\"scheduler\":\"%s\",\"pods_per_s\":%s,\"cpu_s\":%s,\"cpu_ms_per_pod\":%s,\"peak_rss_mib\":%s",
            w, n, i, m, $1, $3, $5, $7, $9
          split("", v)
          for (f = 10; f <= NF; f++) {
            kv = $f; gsub(/[()]/, "", kv)
            if (split(kv, p, "=") == 2) v[p[1]] = p[2]
          }
          split("arrival_per_s p50_ms p90_ms p99_ms attempt_p50_ms attempt_p90_ms attempt_p99_ms", keys, " ")
          for (k = 1; k <= 7; k++)
            if (keys[k] in v && v[keys[k]] ~ /^[0-9.]+$/) printf ",\"%s\":%s", keys[k], v[keys[k]]
          if ("attempt_metric" in v && v["attempt_metric"] != "none") printf ",\"attempt_metric\":\"%s\"", v["attempt_metric"]
          printf ",\"date\":\"%s\"}\n", d
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

# One run per line, "workload nodes scheduler pods_per_s cpu_ms_per_pod peak_rss_mib date p50_ms
# p90_ms p99_ms attempt_p50_ms attempt_p90_ms attempt_p99_ms", from the JSON (flat objects, one per
# line, as run_matrix writes them); "-" for a field the record lacks (runs from before it).
flat_runs() {
  sed -n 's/^{\("workload".*\)}[,]*$/\1/p' "$OUT" | awk -F, '{
    split("", v)
    for (i = 1; i <= NF; i++) { split($i, kv, ":"); gsub(/"/, "", kv[1]); gsub(/"/, "", kv[2]); v[kv[1]] = kv[2] }
    n = split("workload nodes scheduler pods_per_s cpu_ms_per_pod peak_rss_mib date p50_ms p90_ms p99_ms attempt_p50_ms attempt_p90_ms attempt_p99_ms", keys, " ")
    line = ""
    for (k = 1; k <= n; k++) line = line (k > 1 ? " " : "") (v[keys[k]] == "" ? "-" : v[keys[k]])
    print line
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
  # Fields of the runs are "-" where a record lacks them: blank in the tables.
  local awkLib='
    function val(x) { return x == "-" ? "" : x }
    function ratio(a, b) { return (a != "" && a != "-" && b != "" && b != "-" && b + 0 > 0) ? sprintf("%.2f", a / b) : "—" }
    function pct(a, b) { return (a != "" && a != "-" && b != "" && b != "-" && b + 0 > 0) ? sprintf("%.0f %%", 100 * a / b) : "" }
    function three(a, b, c) { return (val(a) == "" && val(b) == "" && val(c) == "") ? "" : val(a) " / " val(b) " / " val(c) }'
  local latencyRuns=0
  grep -q '^latency-[^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [^ ]* [0-9]' <<<"$runs" && latencyRuns=1
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
    echo
    echo "What each figure stands against:"
    echo
    echo "- **kube-scheduler v1.20.2, same run**: built from the same source as the apiserver, run"
    echo "  back to back with ksched on the same machine, each on its own fresh control plane."
    echo "- **The ceiling, same apiserver** (the \`*-backlog\` workloads): \`tests/perf/ceiling_binder.cc\`"
    echo "  in place of a scheduler, on a fresh control plane under the same load, binds every"
    echo "  pending pod round-robin without scheduling, with ksched's client, QPS and 16 binders: the"
    echo "  most pods/s this apiserver accepts there. \"ksched % of ceiling\" is ksched's pods/s over it."
    echo "- **Upstream's scheduler_perf floors, as published**: other machines and an in-process"
    echo "  apiserver; not comparable with these figures, quoted for scale only."
    [ -z "$NOTE" ] || { echo; echo "$NOTE"; }
    for workload in $(awk '{print $1}' <<<"$runs" | awk '!seen[$0]++'); do
      echo
      echo "## $workload"
      echo
      echo "Measured $(awk -v w="$workload" '$1 == w && $7 != "-" {print $7; exit}' <<<"$runs")."
      echo
      case $workload in
        latency-*)
          echo "Basic pods created at ${workload#latency-} per second. Creation to bound: from each measured"
          echo "pod's create request to the first watch event showing it bound (p50 / p90 / p99, ms)."
          echo "Attempt: the scheduler's own histogram of its scheduling attempts that ended bound, over"
          echo "the measured phase (ksched's \`scheduler_scheduling_attempt_duration_seconds\`;"
          echo "v1.20.2 has no such histogram, its \`scheduler_e2e_scheduling_duration_seconds\` covers the"
          echo "same span, from the attempt's start to the end of its binding)."
          echo
          echo "| nodes | creation→bound ms ksched | creation→bound ms kube-scheduler | p99 ratio | attempt ms ksched | attempt ms kube-scheduler | attempt p99 ratio | CPU ms/pod ksched | CPU ms/pod kube-scheduler | ratio |"
          echo "|---|---|---|---|---|---|---|---|---|---|"
          sort -k2,2n <<<"$runs" | awk -v w="$workload" "$awkLib"'
            $1 == w && ($3 == "ksched" || $3 == "kube-scheduler") { key = $2
              if (!(key in seen)) { seen[key] = 1; order[++n] = key }
              s = $3 == "ksched" ? "k" : "s"
              lat[s, key] = three($8, $9, $10); p99[s, key] = $10
              att[s, key] = three($11, $12, $13); ap99[s, key] = $13; cpu[s, key] = val($5) }
            END { for (i = 1; i <= n; i++) { k = order[i]
                printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", k, lat["k", k], lat["s", k],
                  ratio(p99["k", k], p99["s", k]), att["k", k], att["s", k], ratio(ap99["k", k], ap99["s", k]),
                  cpu["k", k], cpu["s", k], ratio(cpu["k", k], cpu["s", k]) } }'
          ;;
        *)
          local ceilingCols=0
          [[ $workload == *-backlog ]] && ceilingCols=1
          if [ "$ceilingCols" = 1 ]; then
            echo "| nodes | pods/s ksched | pods/s kube-scheduler | ratio | pods/s ceiling | ksched % of ceiling | CPU ms/pod ksched | CPU ms/pod kube-scheduler | ratio | peak RSS MiB ksched | peak RSS MiB kube-scheduler | ratio |"
            echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
          else
            echo "| nodes | pods/s ksched | pods/s kube-scheduler | ratio | CPU ms/pod ksched | CPU ms/pod kube-scheduler | ratio | peak RSS MiB ksched | peak RSS MiB kube-scheduler | ratio |"
            echo "|---|---|---|---|---|---|---|---|---|---|"
          fi
          sort -k2,2n <<<"$runs" | awk -v w="$workload" -v cc="$ceilingCols" "$awkLib"'
            $1 == w { key = $2
              if (!(key in seen)) { seen[key] = 1; order[++n] = key }
              if ($3 == "ksched") { kp[key] = val($4); kc[key] = val($5); kr[key] = val($6) }
              else if ($3 == "ceiling") { cp[key] = val($4) }
              else { sp[key] = val($4); sc[key] = val($5); sr[key] = val($6) } }
            END { for (i = 1; i <= n; i++) { k = order[i]
                printf "| %s | %s | %s | %s |", k, kp[k], sp[k], ratio(kp[k], sp[k])
                if (cc) printf " %s | %s |", cp[k], pct(kp[k], cp[k])
                printf " %s | %s | %s | %s | %s | %s |\n", kc[k], sc[k], ratio(kc[k], sc[k]),
                  kr[k], sr[k], ratio(kr[k], sr[k]) } }'
          ;;
      esac
    done
    echo
    echo "## Against node count"
    echo
    for metric in pods_per_s cpu_ms_per_pod peak_rss_mib; do
      echo "![$metric](img/matrix-$metric.svg)"
      echo
    done
    if [ "$latencyRuns" = 1 ]; then
      echo "The latency workloads (p99, ms):"
      echo
      for metric in p99_ms attempt_p99_ms; do
        echo "![$metric](img/matrix-$metric.svg)"
        echo
      done
    fi
  } > "$PAGE"
  local data
  data=$(mktemp -d)
  # One file per workload and scheduler: nodes pods_per_s cpu_ms_per_pod peak_rss_mib p99_ms
  # attempt_p99_ms. The latency workloads' pods/s is their arrival rate: only in their own plots;
  # the ceiling only in the pods/s plot.
  awk -v d="$data" '{ print $2, $4, $5, $6, $10, $13 > (d "/" $1 "." $3 ".dat") }' <<<"$runs"
  for f in "$data"/*.dat; do sort -n -o "$f" "$f"; done
  local col title metrics=(pods_per_s cpu_ms_per_pod peak_rss_mib)
  [ "$latencyRuns" = 1 ] && metrics+=(p99_ms attempt_p99_ms)
  for metric in "${metrics[@]}"; do
    case $metric in
      pods_per_s) col=2; title="pods/s" ;;
      cpu_ms_per_pod) col=3; title="scheduler CPU ms per pod" ;;
      peak_rss_mib) col=4; title="peak RSS MiB" ;;
      p99_ms) col=5; title="p99 creation to bound, ms" ;;
      attempt_p99_ms) col=6; title="p99 scheduling attempt, ms" ;;
    esac
    local plots=()
    for f in "$data"/*.dat; do
      local name
      name=$(basename "$f" .dat)
      case $metric:$name in
        p99_ms:latency-*.ksched|p99_ms:latency-*.kube-scheduler) ;;
        attempt_p99_ms:latency-*.ksched|attempt_p99_ms:latency-*.kube-scheduler) ;;
        p99_ms:*|attempt_p99_ms:*|*:latency-*) continue ;;
        pods_per_s:*.ceiling) ;;
        *:*.ceiling) continue ;;
      esac
      plots+=("'$f' using 1:$col with linespoints title '${name/./ }'")
    done
    [ "${#plots[@]}" -gt 0 ] || continue
    gnuplot <<GP
set terminal svg size 800,480 dynamic font "sans,11"
set output "$img/matrix-$metric.svg"
set title "$title ($cores cores)"
set xlabel "nodes"
set logscale x
set key outside right
set grid
set datafile missing "-"
plot $(IFS=,; echo "${plots[*]}")
GP
  done
  rm -rf "$data"
  echo "wrote $PAGE and $img/matrix-*.svg"
}

[ "$RENDER_ONLY" = 1 ] || run_matrix
render
