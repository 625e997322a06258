#!/usr/bin/env bash
# A real local control plane on loopback: etcd + kube-apiserver v1.20.2, fresh PKI, RBAC on, and
# v1.20's alpha storage capacity API on (CSIStorageCapacity gate, storage.k8s.io/v1alpha1).
#
#   cluster.sh up                    build (cached) and start; prints how to use it
#   cluster.sh down                  stop exactly what `up` started and remove the state dir
#   cluster.sh status                say what runs
#   cluster.sh env                   print `export KUBECONFIG=...` for the admin identity
#   cluster.sh stop-apiserver        stop kube-apiserver only (etcd keeps running)
#   cluster.sh start-apiserver       start kube-apiserver again with the same state
#   cluster.sh kill-apiserver        SIGKILL kube-apiserver (no graceful shutdown); start-apiserver
#                                    brings it back
#   cluster.sh pause-apiserver       SIGSTOP kube-apiserver: its port accepts, nothing answers
#   cluster.sh resume-apiserver      SIGCONT it
#   cluster.sh stop-etcd             stop etcd only (its data is kept; kube-apiserver keeps running)
#   cluster.sh kill-etcd             SIGKILL etcd (its data is kept)
#   cluster.sh start-etcd            start etcd again on the same data
#   cluster.sh compact               compact etcd to its current revision
#   cluster.sh start-controller-manager
#                                    start kube-controller-manager with only the volume
#                                    controllers (PV binder, expander, PV/PVC protection) as
#                                    CN=system:kube-controller-manager; `down` stops it too
#   cluster.sh stop-controller-manager
#                                    stop it
#   cluster.sh start-workload-controllers
#                                    a second kube-controller-manager with the Deployment,
#                                    ReplicaSet and PodDisruptionBudget controllers (pods
#                                    recreated after an eviction, budgets' status); `down` stops
#                                    it too
#   cluster.sh stop-workload-controllers
#                                    stop it
#   cluster.sh identity NAME SUBJECT a client certificate for SUBJECT (e.g.
#                                    /O=system:serviceaccounts/CN=system:serviceaccount:ns:sa)
#                                    and NAME.kubeconfig; prints its path
#
# Settings (environment):
#   KSCHED_CLUSTER_DIR     state dir             (default /tmp/ksched-cluster-$KSCHED_APISERVER_PORT)
#   KSCHED_APISERVER_PORT  secure port           (default 6443)
#   KSCHED_ETCD_PORT       etcd client port      (default 2379; peer port is this + 1)
#   KSCHED_CACHE           build cache           (default ~/.cache/ksched)
# Two clusters run side by side when they differ in all three of dir and ports.
#
# Identities written to the state dir:
#   admin.kubeconfig       bearer token, group system:masters
#   scheduler.kubeconfig   client certificate CN=system:kube-scheduler (upstream's RBAC role)
#   nobody.kubeconfig      client certificate CN=ksched:nobody, no permissions (for 403 tests)
#   controller-manager.kubeconfig
#                          client certificate CN=system:kube-controller-manager, also bound to
#                          the roles of the controllers it runs (written by start-controller-manager
#                          and start-workload-controllers)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PORT=${KSCHED_APISERVER_PORT:-6443}
ETCD_PORT=${KSCHED_ETCD_PORT:-2379}
ETCD_PEER_PORT=$((ETCD_PORT + 1))
DIR=${KSCHED_CLUSTER_DIR:-/tmp/ksched-cluster-$PORT}
PKI=$DIR/pki
LOGS=$DIR/logs

log() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop_pid() {
  local f=$1 name=$2 pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      log "$name did not stop on TERM; killing"
      kill -KILL "$pid" 2>/dev/null || true
      for i in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    fi
  fi
  rm -f "$f"
}

make_pki() {
  mkdir -p "$PKI"
  (
    cd "$PKI"
    openssl req -x509 -newkey rsa:2048 -nodes -days 3650 -subj "/CN=ksched-local-ca" \
      -keyout ca.key -out ca.crt 2>/dev/null
    cat > server.ext <<EXT
subjectAltName = IP:127.0.0.1, DNS:localhost, DNS:kubernetes, DNS:kubernetes.default, DNS:kubernetes.default.svc
extendedKeyUsage = serverAuth
EXT
    openssl req -newkey rsa:2048 -nodes -subj "/CN=kube-apiserver" -keyout server.key -out server.csr 2>/dev/null
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile server.ext -out server.crt 2>/dev/null
    printf 'extendedKeyUsage = clientAuth\n' > client.ext
    for who in "scheduler:/CN=system:kube-scheduler" "nobody:/CN=ksched:nobody"; do
      local name=${who%%:*} subj=${who#*:}
      openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$name.key" -out "$name.csr" 2>/dev/null
      openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
        -extfile client.ext -out "$name.crt" 2>/dev/null
    done
    openssl genrsa -out sa.key 2048 2>/dev/null
    openssl rsa -in sa.key -pubout -out sa.pub 2>/dev/null
    openssl rand -hex 24 > admin.token
    printf '%s,admin,admin-uid,"system:masters"\n' "$(cat admin.token)" > tokens.csv
    rm -f ./*.csr ./*.ext ca.srl
    chmod 600 ./*.key admin.token tokens.csv
  )
}

# signal_pid FILE SIGNAL NAME: sends SIGNAL to the process named in FILE, if it runs.
signal_pid() {
  local f=$1 sig=$2 name=$3
  pid_alive "$f" || die "$name is not running in $DIR"
  kill "-$sig" "$(cat "$f")"
}

# kill_pid FILE NAME: SIGKILL and wait for the exit.
kill_pid() {
  local f=$1 name=$2 pid i
  [ -f "$f" ] || return 0
  pid=$(cat "$f")
  kill -KILL "$pid" 2>/dev/null || true
  for i in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  kill -0 "$pid" 2>/dev/null && die "$name (pid $pid) survived SIGKILL"
  rm -f "$f"
}

b64() { base64 -w0 < "$1"; }

# kubeconfig NAME USER-FIELDS: writes $DIR/NAME.kubeconfig for the local cluster.
kubeconfig() {
  cat > "$DIR/$1.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: https://127.0.0.1:$PORT
    certificate-authority-data: $(b64 "$PKI/ca.crt")
users:
- name: $1
  user:
$2
contexts:
- name: local
  context: {cluster: local, user: $1}
current-context: local
KC
}

write_kubeconfigs() {
  kubeconfig admin "    token: $(cat "$PKI/admin.token")"
  local who
  for who in scheduler nobody; do
    kubeconfig "$who" "    client-certificate-data: $(b64 "$PKI/$who.crt")
    client-key-data: $(b64 "$PKI/$who.key")"
  done
  chmod 600 "$DIR"/*.kubeconfig
}

etcd_data_dir() {
  # etcd fsyncs on every write; tmpfs keeps a loopback test cluster fast.
  if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    echo "/dev/shm/ksched-etcd-$ETCD_PORT"
  else
    echo "$DIR/etcd"
  fi
}

start_etcd() {
  local data
  data=$(etcd_data_dir)
  echo "$data" > "$DIR/etcd.datadir"
  mkdir -p "$data"
  etcd --name default --data-dir "$data" \
    --listen-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --advertise-client-urls "http://127.0.0.1:$ETCD_PORT" \
    --listen-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-advertise-peer-urls "http://127.0.0.1:$ETCD_PEER_PORT" \
    --initial-cluster "default=http://127.0.0.1:$ETCD_PEER_PORT" \
    --quota-backend-bytes 4294967296 --snapshot-count 100000 \
    > "$LOGS/etcd.log" 2>&1 &
  echo $! > "$DIR/etcd.pid"
  local i
  for i in $(seq 1 100); do
    if ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$ETCD_PORT" endpoint health >/dev/null 2>&1; then
      return 0
    fi
    pid_alive "$DIR/etcd.pid" || die "etcd exited; see $LOGS/etcd.log"
    sleep 0.1
  done
  die "etcd not healthy after 10 s; see $LOGS/etcd.log"
}

start_apiserver() {
  local bin
  bin=$(cat "$DIR/bin")
  "$bin/kube-apiserver" \
    --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$PORT" \
    --etcd-servers "http://127.0.0.1:$ETCD_PORT" \
    --tls-cert-file "$PKI/server.crt" --tls-private-key-file "$PKI/server.key" \
    --client-ca-file "$PKI/ca.crt" --token-auth-file "$PKI/tokens.csv" \
    --authorization-mode RBAC --anonymous-auth=false \
    --service-account-issuer https://kubernetes.default.svc.cluster.local \
    --service-account-key-file "$PKI/sa.pub" --service-account-signing-key-file "$PKI/sa.key" \
    --service-cluster-ip-range 10.96.0.0/16 \
    --enable-admission-plugins NamespaceLifecycle,LimitRanger,Priority,DefaultTolerationSeconds,DefaultStorageClass,ResourceQuota,MutatingAdmissionWebhook,ValidatingAdmissionWebhook \
    --disable-admission-plugins ServiceAccount,TaintNodesByCondition,StorageObjectInUseProtection \
    --max-requests-inflight 2000 --max-mutating-requests-inflight 1000 \
    --feature-gates CSIStorageCapacity=true --runtime-config storage.k8s.io/v1alpha1=true \
    --profiling=false --logtostderr=true --v=0 \
    > "$LOGS/kube-apiserver.log" 2>&1 &
  echo $! > "$DIR/apiserver.pid"
  local i
  for i in $(seq 1 600); do
    if curl -fsS --cacert "$PKI/ca.crt" -H "Authorization: Bearer $(cat "$PKI/admin.token")" \
      "https://127.0.0.1:$PORT/readyz" >/dev/null 2>&1; then
      return 0
    fi
    pid_alive "$DIR/apiserver.pid" || die "kube-apiserver exited; see $LOGS/kube-apiserver.log"
    sleep 0.1
  done
  die "kube-apiserver not ready after 60 s; see $LOGS/kube-apiserver.log"
}

# POSTs a JSON object as admin; 409 (already exists) is fine.
admin_post() {
  local path=$1 body=$2 code
  code=$(curl -sS -o /dev/null -w '%{http_code}' --cacert "$PKI/ca.crt" \
    -H "Authorization: Bearer $(cat "$PKI/admin.token")" -H 'Content-Type: application/json' \
    -X POST --data "$body" "https://127.0.0.1:$PORT$path")
  [ "$code" = 201 ] || [ "$code" = 409 ] || die "POST $path answered $code"
}

# v1.20's system:kube-scheduler role predates namespaceSelector; newer releases grant it
# namespace reads. Grant the same to the scheduler identity here.
grant_scheduler_extras() {
  admin_post /apis/rbac.authorization.k8s.io/v1/clusterroles \
    '{"metadata":{"name":"ksched:namespace-reader"},"rules":[{"apiGroups":[""],"resources":["namespaces"],"verbs":["get","list","watch"]}]}'
  admin_post /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
    '{"metadata":{"name":"ksched:namespace-reader"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"ksched:namespace-reader"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:kube-scheduler"}]}'
  # Coscheduling (docs/gang.md) reads PodGroups and keeps their status, as in
  # deploy/manifests/rbac.yaml; the CRD itself is installed only by those who use it.
  admin_post /apis/rbac.authorization.k8s.io/v1/clusterroles \
    '{"metadata":{"name":"ksched:podgroups"},"rules":[{"apiGroups":["scheduling.x-k8s.io"],"resources":["podgroups"],"verbs":["get","list","watch"]},{"apiGroups":["scheduling.x-k8s.io"],"resources":["podgroups/status"],"verbs":["get","update","patch"]}]}'
  admin_post /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
    '{"metadata":{"name":"ksched:podgroups"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"ksched:podgroups"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:kube-scheduler"}]}'
}

# The volume controllers of kube-controller-manager v1.20 (controller names as its --controllers
# flag spells them).
VOLUME_CONTROLLERS=persistentvolume-binder,persistentvolume-expander,pv-protection,pvc-protection

# The controllers `start-workload-controllers` runs, and their roles.
WORKLOAD_CONTROLLERS=deployment,replicaset,disruption
WORKLOAD_ROLES="deployment-controller replicaset-controller disruption-controller"

# With --use-service-account-credentials=false every controller acts as the controller
# manager's own identity, whose bootstrap role only lists and watches: bind it to the roles the
# controllers (named in $@) would get as service accounts.
grant_controller_manager_roles() {
  local role
  for role in "$@"; do
    admin_post /apis/rbac.authorization.k8s.io/v1/clusterrolebindings \
      '{"metadata":{"name":"ksched:kcm:'"$role"'"},"roleRef":{"apiGroup":"rbac.authorization.k8s.io","kind":"ClusterRole","name":"system:controller:'"$role"'"},"subjects":[{"apiGroup":"rbac.authorization.k8s.io","kind":"User","name":"system:kube-controller-manager"}]}'
  done
}

# run_controller_manager NAME CONTROLLERS STARTED-CONTROLLER ROLE...: one kube-controller-manager
# running CONTROLLERS, its pid in $DIR/NAME.pid and its log in $LOGS/kube-NAME.log; returns once
# it logged that STARTED-CONTROLLER started.
run_controller_manager() {
  local name=$1 controllers=$2 started=$3
  shift 3
  pid_alive "$DIR/apiserver.pid" || die "kube-apiserver is not running in $DIR: run $0 up"
  pid_alive "$DIR/$name.pid" && return 0
  local bin
  bin=$(cat "$DIR/bin")
  # `up` builds the apiserver alone; the controller manager is built on first use (cached).
  [ -x "$bin/kube-controller-manager" ] || "$HERE/build-k8s.sh" kube-controller-manager >/dev/null ||
    die "could not build kube-controller-manager (deploy/local/build-k8s.sh)"
  [ -f "$DIR/controller-manager.kubeconfig" ] ||
    cmd_identity controller-manager /CN=system:kube-controller-manager >/dev/null
  grant_controller_manager_roles "$@"
  # No serving ports (--port 0, --secure-port 0): nothing to collide with other clusters or the
  # other instance; no leader election, so the two instances run side by side.
  "$bin/kube-controller-manager" \
    --kubeconfig "$DIR/controller-manager.kubeconfig" \
    --controllers "$controllers" --use-service-account-credentials=false \
    --leader-elect=false --bind-address 127.0.0.1 --port 0 --secure-port 0 \
    --pvclaimbinder-sync-period 5s --logtostderr=true --v=1 \
    > "$LOGS/kube-$name.log" 2>&1 &
  echo $! > "$DIR/$name.pid"
  local i
  for i in $(seq 1 300); do
    if grep -q "Started \"$started\"" "$LOGS/kube-$name.log"; then
      return 0
    fi
    pid_alive "$DIR/$name.pid" || die "kube-controller-manager exited; see $LOGS/kube-$name.log"
    sleep 0.1
  done
  die "kube-controller-manager did not start its controllers in 30 s; see $LOGS/kube-$name.log"
}

start_controller_manager() {
  run_controller_manager controller-manager "$VOLUME_CONTROLLERS" persistentvolume-binder \
    persistent-volume-binder expand-controller pv-protection-controller pvc-protection-controller
}

start_workload_controllers() {
  # shellcheck disable=SC2086
  run_controller_manager workload-controllers "$WORKLOAD_CONTROLLERS" disruption $WORKLOAD_ROLES
}

cmd_up() {
  if pid_alive "$DIR/apiserver.pid" && pid_alive "$DIR/etcd.pid"; then
    log "already up in $DIR"
    cmd_env
    return 0
  fi
  command -v etcd >/dev/null || die "etcd not found: run deploy/local/install-deps.sh"
  local bin
  bin=$("$HERE/build-k8s.sh" kube-apiserver | tail -n 1)
  cmd_down_quiet
  mkdir -p "$DIR" "$LOGS"
  echo "$bin" > "$DIR/bin"
  make_pki
  write_kubeconfigs
  start_etcd
  start_apiserver
  grant_scheduler_extras
  log "up: kube-apiserver https://127.0.0.1:$PORT, etcd 127.0.0.1:$ETCD_PORT, state in $DIR"
  log "admin:     export KUBECONFIG=$DIR/admin.kubeconfig"
  log "scheduler: $DIR/scheduler.kubeconfig (CN=system:kube-scheduler)"
  log "stop:      $0 down"
}

cmd_down_quiet() {
  stop_pid "$DIR/controller-manager.pid" kube-controller-manager
  stop_pid "$DIR/workload-controllers.pid" kube-controller-manager
  stop_pid "$DIR/apiserver.pid" kube-apiserver
  stop_pid "$DIR/etcd.pid" etcd
  if [ -f "$DIR/etcd.datadir" ]; then rm -rf "$(cat "$DIR/etcd.datadir")"; fi
  rm -rf "$DIR"
}

cmd_down() {
  [ -d "$DIR" ] || { log "nothing to stop in $DIR"; return 0; }
  cmd_down_quiet
  log "down: stopped and removed $DIR"
}

cmd_status() {
  local rc=0
  if pid_alive "$DIR/etcd.pid"; then echo "etcd: running (pid $(cat "$DIR/etcd.pid"), 127.0.0.1:$ETCD_PORT)"; else echo "etcd: stopped"; rc=1; fi
  if pid_alive "$DIR/apiserver.pid"; then echo "kube-apiserver: running (pid $(cat "$DIR/apiserver.pid"), https://127.0.0.1:$PORT)"; else echo "kube-apiserver: stopped"; rc=1; fi
  if pid_alive "$DIR/controller-manager.pid"; then echo "kube-controller-manager: running (pid $(cat "$DIR/controller-manager.pid"), volume controllers)"; fi
  return $rc
}

# identity NAME SUBJECT: a client certificate signed by the cluster CA (e.g.
# "/O=system:serviceaccounts/CN=system:serviceaccount:ksched:ksched") and $DIR/NAME.kubeconfig
# for it; prints the kubeconfig path.
cmd_identity() {
  local name=$1 subj=$2
  [ -n "$name" ] && [ -n "$subj" ] || die "usage: $0 identity NAME SUBJECT"
  (
    cd "$PKI"
    printf 'extendedKeyUsage = clientAuth\n' > "$name.ext"
    openssl req -newkey rsa:2048 -nodes -subj "$subj" -keyout "$name.key" -out "$name.csr" 2>/dev/null
    openssl x509 -req -in "$name.csr" -CA ca.crt -CAkey ca.key -CAcreateserial -days 3650 \
      -extfile "$name.ext" -out "$name.crt" 2>/dev/null
    rm -f "$name.csr" "$name.ext" ca.srl
    chmod 600 "$name.key"
  )
  kubeconfig "$name" "    client-certificate-data: $(b64 "$PKI/$name.crt")
    client-key-data: $(b64 "$PKI/$name.key")"
  chmod 600 "$DIR/$name.kubeconfig"
  echo "$DIR/$name.kubeconfig"
}

cmd_env() {
  echo "export KUBECONFIG=$DIR/admin.kubeconfig"
  echo "export KSCHED_CLUSTER_DIR=$DIR"
}

case "${1:-}" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  env) cmd_env ;;
  identity) cmd_identity "${2:-}" "${3:-}" ;;
  stop-apiserver) stop_pid "$DIR/apiserver.pid" kube-apiserver ;;
  start-apiserver) pid_alive "$DIR/apiserver.pid" || start_apiserver ;;
  kill-apiserver) kill_pid "$DIR/apiserver.pid" kube-apiserver ;;
  pause-apiserver) signal_pid "$DIR/apiserver.pid" STOP kube-apiserver ;;
  resume-apiserver) signal_pid "$DIR/apiserver.pid" CONT kube-apiserver ;;
  stop-etcd) stop_pid "$DIR/etcd.pid" etcd ;;
  kill-etcd) kill_pid "$DIR/etcd.pid" etcd ;;
  start-etcd) pid_alive "$DIR/etcd.pid" || start_etcd ;;
  start-controller-manager) start_controller_manager ;;
  stop-controller-manager) stop_pid "$DIR/controller-manager.pid" kube-controller-manager ;;
  start-workload-controllers) start_workload_controllers ;;
  stop-workload-controllers) stop_pid "$DIR/workload-controllers.pid" kube-controller-manager ;;
  compact)
    rev=$(ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$ETCD_PORT" endpoint status -w json | jq -r '.[0].Status.header.revision')
    ETCDCTL_API=3 etcdctl --endpoints "127.0.0.1:$ETCD_PORT" compact "$rev" >/dev/null
    echo "$rev"
    ;;
  *) sed -n '2,49p' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
