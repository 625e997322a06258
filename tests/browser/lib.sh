# What the browser checks share (check_report.sh, check_advise_report.sh), sourced by them after
# `set -euo pipefail`: a scratch directory $work, headless Chromium with a fresh profile that
# reaches no network, and the counting of the checks.
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || { echo "FAIL: $CHROMIUM not installed (deploy/local/install-deps.sh)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq not installed (deploy/local/install-deps.sh)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ksched-browser.XXXXXX")
trap 'rm -rf "$work"' EXIT

browser() {
  rm -rf "$work/profile"
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" "$@" 2>"$work/chromium.log"
}

# load_page PAGE.html: its DOM after the scripts ran in $work/dom.html, a 1280x2000 screenshot in
# $work/report.png.
load_page() {
  browser --dump-dom "file://$1" >"$work/dom.html" ||
    { echo "FAIL: chromium --dump-dom"; tail -20 "$work/chromium.log"; exit 1; }
  browser --screenshot="$work/report.png" --window-size=1280,2000 "file://$1" >/dev/null ||
    { echo "FAIL: chromium --screenshot"; tail -20 "$work/chromium.log"; exit 1; }
}

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# count PATTERN: occurrences of a fixed string in the DOM.
count() { grep -oF -- "$1" "$work/dom.html" | wc -l; }
expect() {  # expect WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then fail "$1: expected $2, found $3"; else echo "ok: $1 = $3"; fi
}

# The marker the page's script sets once it ran.
check_rendered() {
  local rendered
  rendered=$(grep -o '<body[^>]*data-rendered="[^"]*"' "$work/dom.html" | sed 's/.*data-rendered="//; s/"$//' || true)
  expect "body data-rendered (set by the page's script)" ok "$rendered"
}

# check_screenshot MIN_BYTES: a PNG larger than MIN_BYTES (a blank page is about 10 KB); kept
# as $KSCHED_BROWSER_SCREENSHOT when set.
check_screenshot() {
  local png
  png=$(stat -c %s "$work/report.png")
  if [ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
    fail "the screenshot is not a PNG"
  elif [ "$png" -lt "$1" ]; then
    fail "the screenshot is $png bytes: an empty page?"
  else
    echo "ok: screenshot of $png bytes"
  fi
  if [ -n "${KSCHED_BROWSER_SCREENSHOT:-}" ]; then cp "$work/report.png" "$KSCHED_BROWSER_SCREENSHOT"; fi
}

# The verdict: exit 1 with the start of the DOM when a check failed.
finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures checks failed; the DOM:"; head -c 3000 "$work/dom.html"; echo
    exit 1
  fi
  echo "all checks passed"
}
