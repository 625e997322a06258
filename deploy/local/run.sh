#!/usr/bin/env bash
# One command from a fresh Debian machine to ksched running against a real local control
# plane: installs packages, builds the control plane (cached) and ksched, starts etcd and
# kube-apiserver on loopback, and runs ksched as the scheduler identity until Ctrl-C.
# The control plane stays up afterwards (`deploy/local/cluster.sh down` stops it).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
"$ROOT/deploy/local/install-deps.sh"
cmake -S "$ROOT" -B "$ROOT/build" >/dev/null
cmake --build "$ROOT/build" -j"$(nproc)" --target ksched
"$ROOT/deploy/local/cluster.sh" up
eval "$("$ROOT/deploy/local/cluster.sh" env)"
echo "ksched: running; try: kubectl --kubeconfig $KUBECONFIG get nodes   (Ctrl-C stops ksched)"
exec "$ROOT/build/ksched" --kubeconfig "$KSCHED_CLUSTER_DIR/scheduler.kubeconfig" "$@"
