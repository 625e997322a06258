#!/usr/bin/env bash
# Builds the ksched container image (deploy/Dockerfile) with whatever is present: docker (when
# its daemon answers), podman, or buildah (chroot isolation, no daemon, works without a
# container engine). When the Debian base images cannot be pulled, a bookworm base is made with
# debootstrap from the Debian mirror and used instead.
#
#   deploy/build-image.sh [TAG]                     compile in the image's build stage
#   deploy/build-image.sh --binary build/ksched [TAG]
#                                                   package a ksched built on this (bookworm)
#                                                   machine: only the runtime stage runs
#
# TAG defaults to ksched:dev, the image deploy/manifests runs. Prints the image size at the end.
#
# Environment:
#   KSCHED_IMAGE_ENGINE    docker | podman | buildah        (default: the first that works)
#   KSCHED_STORAGE_DRIVER  buildah's storage driver         (default: vfs, works everywhere)
#   KSCHED_DEBIAN_MIRROR   mirror for debootstrap           (default: http://deb.debian.org/debian)
#   KSCHED_BASE_IMAGE      use this base for both stages instead of pulling debian:bookworm(-slim)
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LOCAL_BASE=localhost/ksched-base:bookworm

usage() { sed -n '2,19p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "build-image: $*" >&2; exit 1; }
log() { echo "build-image: $*" >&2; }

BINARY=""
TAG=""
while [ $# -gt 0 ]; do
  case "$1" in
    --binary) BINARY=${2:?--binary needs a path}; shift 2 ;;
    --binary=*) BINARY=${1#--binary=}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [ -z "$TAG" ] || die "more than one TAG given"; TAG=$1; shift ;;
  esac
done
TAG=${TAG:-ksched:dev}

# --- engine ---------------------------------------------------------------------------------
pick_engine() {
  if [ -n "${KSCHED_IMAGE_ENGINE:-}" ]; then echo "$KSCHED_IMAGE_ENGINE"; return; fi
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then echo docker; return; fi
  if command -v podman >/dev/null 2>&1 && podman info >/dev/null 2>&1; then echo podman; return; fi
  if command -v buildah >/dev/null 2>&1; then echo buildah; return; fi
  die "no docker daemon, podman or buildah found (Debian: apt-get install buildah)"
}
ENGINE=$(pick_engine)
case "$ENGINE" in
  docker|podman) ENG=("$ENGINE") ;;
  buildah)
    export BUILDAH_ISOLATION=${BUILDAH_ISOLATION:-chroot}
    ENG=(buildah --storage-driver "${KSCHED_STORAGE_DRIVER:-vfs}") ;;
  *) die "KSCHED_IMAGE_ENGINE=$ENGINE: expected docker, podman or buildah" ;;
esac
log "engine: ${ENG[*]}"

have_image() {
  case "$ENGINE" in
    buildah) "${ENG[@]}" inspect --type image "$1" >/dev/null 2>&1 ;;
    *) "${ENG[@]}" image inspect "$1" >/dev/null 2>&1 ;;
  esac
}

# --- base images ----------------------------------------------------------------------------
# A minimal bookworm (debootstrap --variant=minbase) with the security and updates suites, and
# without docs, man pages and locales, like the slim images.
make_local_base() {
  command -v debootstrap >/dev/null 2>&1 || die "cannot pull debian:bookworm and debootstrap is missing (apt-get install debootstrap)"
  [ "$(id -u)" -eq 0 ] || die "debootstrap needs root to make the base image"
  local mirror=${KSCHED_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  local work
  work=$(mktemp -d /tmp/ksched-base.XXXXXX)
  log "making $LOCAL_BASE with debootstrap from $mirror (a few minutes, once)"
  mkdir -p "$work/rootfs/etc/dpkg/dpkg.cfg.d"
  cat >"$work/rootfs/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-include /usr/share/locale/locale.alias
EOF
  debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" >"$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; rm -rf "$work"; die "debootstrap failed"; }
  local security=${mirror%/debian}/debian-security
  cat >"$work/rootfs/etc/apt/sources.list" <<EOF
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
EOF
  cat >"$work/rootfs/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
EOF
  rm -rf "$work/rootfs/var/cache/apt/archives/"*.deb "$work/rootfs/var/lib/apt/lists/"* \
    "$work/rootfs/var/log/"*.log "$work/rootfs/usr/share/doc" "$work/rootfs/usr/share/man" \
    "$work/rootfs/usr/share/info"
  find "$work/rootfs/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar -C "$work/rootfs" --numeric-owner -cf "$work/rootfs.tar" .
  case "$ENGINE" in
    buildah)
      local ctr
      ctr=$("${ENG[@]}" from scratch)
      "${ENG[@]}" add "$ctr" "$work/rootfs.tar" / >/dev/null
      "${ENG[@]}" config --cmd /bin/bash --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
      "${ENG[@]}" commit --rm "$ctr" "$LOCAL_BASE" >/dev/null ;;
    *)
      "${ENG[@]}" import --change 'CMD ["/bin/bash"]' "$work/rootfs.tar" "$LOCAL_BASE" >/dev/null ;;
  esac
  rm -rf "$work"
}

BASE_ARGS=()
if [ -n "${KSCHED_BASE_IMAGE:-}" ]; then
  BASE_ARGS=(--build-arg "BASE_IMAGE=$KSCHED_BASE_IMAGE" --build-arg "RUNTIME_BASE_IMAGE=$KSCHED_BASE_IMAGE")
else
  need=(debian:bookworm-slim)
  [ -n "$BINARY" ] || need+=(debian:bookworm)
  pulled=1
  for img in "${need[@]}"; do
    have_image "$img" && continue
    log "pulling $img"
    if ! timeout 300 "${ENG[@]}" pull "$img" >/dev/null 2>&1; then pulled=0; break; fi
  done
  if [ "$pulled" -eq 0 ]; then
    log "cannot pull the Debian images; using $LOCAL_BASE"
    have_image "$LOCAL_BASE" || make_local_base
    BASE_ARGS=(--build-arg "BASE_IMAGE=$LOCAL_BASE" --build-arg "RUNTIME_BASE_IMAGE=$LOCAL_BASE")
  fi
fi

# --- build context --------------------------------------------------------------------------
# Only what the Dockerfile copies, so no build directory is ever sent.
CTX=$(mktemp -d /tmp/ksched-image.XXXXXX)
trap 'rm -rf "$CTX"' EXIT
cp "$ROOT/deploy/Dockerfile" "$ROOT/LICENSE" "$CTX/"
cp -r "$ROOT/config" "$CTX/"
mkdir -p "$CTX/deploy" "$CTX/prebuilt"
cp "$ROOT/deploy/runtime-packages.sh" "$CTX/deploy/"
STAGE=build
if [ -n "$BINARY" ]; then
  [ -x "$BINARY" ] || die "--binary $BINARY: not an executable"
  if ldd "$BINARY" | grep -q 'libasan\|libtsan\|libubsan'; then
    die "--binary $BINARY is a sanitizer build; package a plain build"
  fi
  STAGE=prebuilt
  strip -o "$CTX/prebuilt/ksched" "$BINARY"
  "$ROOT/deploy/runtime-packages.sh" "$BINARY" >"$CTX/prebuilt/packages"
  # The scratch stage copies both files whichever stage is used.
else
  cp "$ROOT/CMakeLists.txt" "$CTX/"
  cp -r "$ROOT/include" "$ROOT/src" "$ROOT/plugins" "$CTX/"
  : >"$CTX/prebuilt/ksched"
  : >"$CTX/prebuilt/packages"
fi

VERSION=$(sed -n 's/^project(ksched VERSION \([0-9.]*\).*/\1/p' "$ROOT/CMakeLists.txt")
REVISION=$(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)
CREATED=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ARGS=(-f "$CTX/Dockerfile" -t "$TAG"
  --build-arg "BINARY_STAGE=$STAGE" --build-arg "VERSION=$VERSION"
  --build-arg "REVISION=$REVISION" --build-arg "CREATED=$CREATED" "${BASE_ARGS[@]}")
case "$ENGINE" in
  buildah) ARGS+=(--layers --isolation "$BUILDAH_ISOLATION") ;;
  podman) ARGS+=(--layers) ;;
esac

log "building $TAG ($STAGE binary)"
start=$(date +%s)
"${ENG[@]}" build "${ARGS[@]}" "$CTX"
secs=$(( $(date +%s) - start ))

case "$ENGINE" in
  buildah|podman) size=$("${ENG[@]}" images --format '{{.Size}}' "$TAG" | head -1) ;;
  docker) size=$(docker image inspect --format '{{.Size}}' "$TAG" | awk '{ printf "%.1f MB", $1 / 1e6 }') ;;
esac
log "built $TAG in ${secs}s, size $size"
