#!/usr/bin/env bash
# Prints, one per line, the Debian packages that hold the shared libraries BINARY links (ldd,
# then dpkg -S), so an image's runtime stage installs exactly what the binary needs and cannot
# drift from it. Run it where the binary was built: every library must resolve and belong to
# an installed package, otherwise it fails naming the library.
#
#   deploy/runtime-packages.sh build/ksched
set -euo pipefail

bin=${1:?usage: $0 BINARY}
[ -x "$bin" ] || { echo "runtime-packages: $bin is not an executable" >&2; exit 2; }

out=$(ldd "$bin") || { echo "runtime-packages: ldd $bin failed" >&2; exit 1; }
if grep -q 'not found' <<<"$out"; then
  echo "runtime-packages: $bin has unresolved libraries:" >&2
  grep 'not found' <<<"$out" >&2
  exit 1
fi

# Owner of one file. Debian bookworm merges /lib into /usr/lib, and dpkg knows each file under
# the path its package shipped, so try the path as given, its /usr twin and the resolved path.
owner() {
  local f=$1 real candidates
  real=$(readlink -f "$f")
  candidates=("$f" "$real")
  case "$f" in
    /usr/*) candidates+=("${f#/usr}") ;;
    *) candidates+=("/usr$f") ;;
  esac
  case "$real" in
    /usr/*) candidates+=("${real#/usr}") ;;
    *) candidates+=("/usr$real") ;;
  esac
  local c pkg
  for c in "${candidates[@]}"; do
    if pkg=$(dpkg -S "$c" 2>/dev/null); then
      # "libssl3:amd64: /usr/lib/..." -> libssl3
      echo "${pkg%%:*}"
      return 0
    fi
  done
  return 1
}

pkgs=()
while read -r lib; do
  [ -n "$lib" ] || continue
  if ! p=$(owner "$lib"); then
    echo "runtime-packages: no installed package owns $lib" >&2
    exit 1
  fi
  pkgs+=("$p")
done < <(awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' <<<"$out")

printf '%s\n' "${pkgs[@]}" | sort -u
