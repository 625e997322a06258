#!/usr/bin/env bash
# One command from a fresh Debian machine to ksched scheduling on a real local control plane:
# installs packages, builds the control plane (cached) and ksched, starts etcd and
# kube-apiserver on loopback, starts ksched as the scheduler identity, creates three nodes and
# six pods, and shows where the pods were bound. ksched keeps running until Ctrl-C; the control
# plane stays up afterwards (`deploy/local/cluster.sh down` stops it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$ROOT/deploy/local/install-deps.sh"
# The first run builds kube-apiserver (Go) and ksched (C++) side by side: each leaves cores idle
# while it links or waits. Later runs find both built (the compiler cache keeps ksched's objects
# across clones and clean builds). build/ is configured as tests/run.sh configures it, so the
# test command that follows reuses every object built here.
K8S_LOG=$(mktemp)
"$ROOT/deploy/local/build-k8s.sh" kube-apiserver >"$K8S_LOG" 2>&1 &
K8S_PID=$!
LAUNCHER=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$ROOT CCACHE_NOHASHDIR=1
  LAUNCHER=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$ROOT" -B "$ROOT/build" -DKSCHED_WERROR=ON -DKSCHED_BUILD_TESTS=ON \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" "${LAUNCHER[@]}" >/dev/null
cmake --build "$ROOT/build" -j"$(nproc)" --target ksched
if ! wait $K8S_PID; then
  cat "$K8S_LOG" >&2
  exit 1
fi
rm -f "$K8S_LOG"
"$ROOT/deploy/local/cluster.sh" up
eval "$("$ROOT/deploy/local/cluster.sh" env)"

SERVER=$(awk '/server:/ {print $2; exit}' "$KUBECONFIG")
TOKEN=$(awk '/token:/ {print $2; exit}' "$KUBECONFIG")
api() {  # api METHOD PATH [JSON]
  curl -sS --cacert "$KSCHED_CLUSTER_DIR/pki/ca.crt" -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' -X "$1" "$SERVER$2" ${3:+-d "$3"}
}

"$ROOT/build/ksched" --kubeconfig "$KSCHED_CLUSTER_DIR/scheduler.kubeconfig" "$@" &
KSCHED_PID=$!
trap 'kill -TERM $KSCHED_PID 2>/dev/null; wait $KSCHED_PID' INT TERM

for i in 1 2 3; do
  api POST /api/v1/nodes "{\"metadata\":{\"name\":\"demo-node-$i\",\"labels\":{\"kubernetes.io/hostname\":\"demo-node-$i\"}},
    \"status\":{\"capacity\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"},
                \"allocatable\":{\"cpu\":\"4\",\"memory\":\"8Gi\",\"pods\":\"110\"}}}" >/dev/null
done
for i in 1 2 3 4 5 6; do
  api POST /api/v1/namespaces/default/pods "{\"metadata\":{\"name\":\"demo-$i-$RANDOM\"},
    \"spec\":{\"terminationGracePeriodSeconds\":0,\"containers\":[{\"name\":\"c\",\"image\":\"registry.k8s.io/pause:3.9\",
    \"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"256Mi\"}}}]}}" >/dev/null
done
sleep 2
echo
echo "pods in namespace default (pod -> node):"
api GET /api/v1/namespaces/default/pods | jq -r '.items[] | "  \(.metadata.name) -> \(.spec.nodeName // "(pending)")"'
echo
echo "leader (Lease kube-system/kube-scheduler): $(api GET /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler | jq -r '.spec.holderIdentity // "(none)"')"
# /metrics answers callers the apiserver authorizes (TokenReview, SubjectAccessReview): the
# admin token is one.
echo "metrics (https://127.0.0.1:10259/metrics, with the admin token):"
curl -sk -H "Authorization: Bearer $TOKEN" https://127.0.0.1:10259/metrics |
  grep -E '^scheduler_(schedule_attempts_total|pending_pods)' | sed 's/^/  /' || true
echo "  scrape it: curl -sk -H \"Authorization: Bearer \$(awk '/token:/ {print \$2; exit}' $KUBECONFIG)\" https://127.0.0.1:10259/metrics"
echo
echo "ksched is running (pid $KSCHED_PID); Ctrl-C stops it. Try: KUBECONFIG=$KUBECONFIG kubectl get pods -o wide"
wait $KSCHED_PID
