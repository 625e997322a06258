#!/usr/bin/env bash
# Builds kube-apiserver, kube-scheduler and kube-controller-manager v1.20.2 from
# Debian bookworm's `kubernetes` source package, offline, and caches them under
# $KSCHED_CACHE (default ~/.cache/ksched). A second run finds the binaries and
# returns at once. Prints the directory holding the binaries on its last line.
#
#   build-k8s.sh                  the three
#   build-k8s.sh kube-apiserver   only the binaries named (the local cluster needs only the
#                                 apiserver: the demo builds it alone, about a third faster);
#                                 the others are built later, reusing Go's package cache
set -euo pipefail

CACHE=${KSCHED_CACHE:-$HOME/.cache/ksched}
BIN=$CACHE/k8s-v1.20.2/bin
WANT=(kube-apiserver kube-scheduler kube-controller-manager)
if [ $# -gt 0 ]; then
  for b in "$@"; do
    case " ${WANT[*]} " in *" $b "*) ;; *) echo "build-k8s: unknown binary $b (${WANT[*]})" >&2; exit 2 ;; esac
  done
  WANT=("$@")
fi
# Bumped whenever the patches below change, so cached binaries are rebuilt.
PATCHLEVEL=1

have_all() {
  local b
  for b in "${WANT[@]}"; do [ -x "$BIN/$b" ] || return 1; done
  [ "$(cat "$BIN/PATCHLEVEL" 2>/dev/null)" = "$PATCHLEVEL" ]
}

# The vendored modern-go/reflect2 v1.0.1 declares reflect.mapiterinit with its pre-Go-1.18
# signature; built with bookworm's Go 1.19, every map that json-iterator walks (pretty-printed
# answers, e.g. to curl) crashes kube-apiserver. reflect2 v1.0.2 fixed it by passing the
# iterator in; do the same.
patch_reflect2() {
  local d=$1/vendor/github.com/modern-go/reflect2
  grep -q 'func mapiterinit(rtype unsafe.Pointer, m unsafe.Pointer, it \*hiter)' "$d/unsafe_link.go" && return 0
  sed -i 's|^func mapiterinit(rtype unsafe.Pointer, m unsafe.Pointer) \*hiter$|func mapiterinit(rtype unsafe.Pointer, m unsafe.Pointer, it *hiter)|' "$d/unsafe_link.go"
  # The caller now owns the iterator, so it must have the runtime's full layout.
  perl -0pi -e 's|\t// rest fields are ignored\n\}|\tt           unsafe.Pointer\n\th           unsafe.Pointer\n\tbuckets     unsafe.Pointer\n\tbptr        unsafe.Pointer\n\toverflow    *[]unsafe.Pointer\n\toldoverflow *[]unsafe.Pointer\n\tstartBucket uintptr\n\toffset      uint8\n\twrapped     bool\n\tB           uint8\n\ti           uint8\n\tbucket      uintptr\n\tcheckBucket uintptr\n}|' "$d/unsafe_link.go"
  grep -q 'checkBucket uintptr' "$d/unsafe_link.go" || { echo "build-k8s: could not patch reflect2" >&2; exit 1; }
  perl -0pi -e 's|return &UnsafeMapIterator\{\n\t\thiter:      mapiterinit\(type2.rtype, \*\(\*unsafe.Pointer\)\(obj\)\),|var it hiter\n\tmapiterinit(type2.rtype, *(*unsafe.Pointer)(obj), &it)\n\treturn &UnsafeMapIterator{\n\t\thiter:      &it,|' "$d/unsafe_map.go"
  grep -q 'mapiterinit(type2.rtype, \*(\*unsafe.Pointer)(obj), &it)' "$d/unsafe_map.go" ||
    { echo "build-k8s: could not patch reflect2" >&2; exit 1; }
}

if have_all; then
  echo "$BIN"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi

# apt needs a deb-src entry for the same archive as the binary packages.
SRCLIST=/etc/apt/sources.list.d/ksched-deb-src.sources
if ! apt-cache showsrc kubernetes >/dev/null 2>&1 || [ -z "$(apt-cache showsrc kubernetes 2>/dev/null)" ]; then
  if [ ! -f "$SRCLIST" ]; then
    uri=$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
    uri=${uri:-http://deb.debian.org/debian}
    $SUDO tee "$SRCLIST" >/dev/null <<SRC
Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  fi
  $SUDO apt-get update -qq
fi

WORK=$CACHE/k8s-src
mkdir -p "$WORK"
tree=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
if [ -z "$tree" ]; then
  (cd "$WORK" && apt-get source --download-only kubernetes >/dev/null && dpkg-source -x --no-check kubernetes_*.dsc >/dev/null)
  tree=$(find "$WORK" -maxdepth 1 -type d -name 'kubernetes-*' | head -n 1)
fi
[ -n "$tree" ] || { echo "build-k8s: could not unpack the kubernetes source package" >&2; exit 1; }

patch_reflect2 "$tree"

# Debian builds in GOPATH mode; module mode fails with go 1.19.
mkdir -p "$tree/.go/src/k8s.io"
ln -sfn "$tree" "$tree/.go/src/k8s.io/kubernetes"
export GOPATH=$tree/.go GO111MODULE=off CGO_ENABLED=0 GOFLAGS= GOCACHE=$CACHE/go-build
export KUBE_GIT_VERSION=v1.20.2 KUBE_GIT_TREE_STATE=clean
cd "$tree/.go/src/k8s.io/kubernetes"
echo "build-k8s: building ${WANT[*]} (several minutes on 2 cores)" >&2
make WHAT="${WANT[*]/#/cmd/}" >&2

mkdir -p "$BIN"
# Binaries of an older patch level are stale: none of them may be taken as built.
if [ "$(cat "$BIN/PATCHLEVEL" 2>/dev/null)" != "$PATCHLEVEL" ]; then
  rm -f "$BIN"/kube-* "$BIN/PATCHLEVEL"
fi
for b in "${WANT[@]}"; do
  src=$(find "$tree/_output" -type f -name "$b" -perm -u+x | head -n 1)
  [ -n "$src" ] || { echo "build-k8s: $b was not built" >&2; exit 1; }
  install -m 0755 "$src" "$BIN/$b"
done
echo "$PATCHLEVEL" > "$BIN/PATCHLEVEL"
echo "$BIN"
