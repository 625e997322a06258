#!/usr/bin/env bash
# check_report.sh RENDER_REPORT RESULT.json: renders RESULT.json with RENDER_REPORT
# (ksched_render_report), opens the page in headless Chromium and checks
#  - the DOM after the page's scripts ran: the script's marker (body data-rendered="ok"), the
#    table filter's row count, and each plot's elements with the data-* attributes the result
#    calls for (expected counts read from RESULT.json with jq, not from the page);
#  - a 1280x2000 screenshot: a PNG of more than 40 KB (a blank page is about 10 KB).
# KSCHED_BROWSER_SCREENSHOT=FILE keeps the screenshot (docs/img/simulate-report.png is one).
#
# fixture_result.json is a synthetic but consistent result: 60 nodes in 3 zones, 236 pods of
# which 21 are unschedulable for 3 reasons, 4 victims, 2 skipped objects, and a comparison with
# a most-allocated configuration.
set -euo pipefail

RENDER=$1
RESULT=$2
CHROMIUM=${CHROMIUM:-chromium}
command -v "$CHROMIUM" >/dev/null || { echo "FAIL: $CHROMIUM not installed (deploy/local/install-deps.sh)"; exit 1; }
command -v jq >/dev/null || { echo "FAIL: jq not installed (deploy/local/install-deps.sh)"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/ksched-browser.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$RENDER" "$RESULT" "$work/report.html"

# A fresh profile per run; nothing reaches the network (the page needs none).
browser() {
  rm -rf "$work/profile"
  timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$work/profile" "$@" 2>"$work/chromium.log"
}
browser --dump-dom "file://$work/report.html" >"$work/dom.html" ||
  { echo "FAIL: chromium --dump-dom"; tail -20 "$work/chromium.log"; exit 1; }
browser --screenshot="$work/report.png" --window-size=1280,2000 "file://$work/report.html" >/dev/null ||
  { echo "FAIL: chromium --screenshot"; tail -20 "$work/chromium.log"; exit 1; }

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# count PATTERN: occurrences of a fixed string in the DOM.
count() { grep -oF -- "$1" "$work/dom.html" | wc -l; }
expect() {  # expect WHAT EXPECTED ACTUAL
  if [ "$2" != "$3" ]; then fail "$1: expected $2, found $3"; else echo "ok: $1 = $3"; fi
}

rendered=$(grep -o '<body[^>]*data-rendered="[^"]*"' "$work/dom.html" | sed 's/.*data-rendered="//; s/"$//' || true)
expect "body data-rendered (set by the page's script)" ok "$rendered"

nodes=$(jq '[.nodes[] | select(.allocatable.cpu > 0)] | length' "$RESULT")
if [ "$nodes" -le 200 ]; then
  expect "per-node cpu plot" 1 "$(count "<g id=\"plot-nodes-cpu\" data-mode=\"bars\" data-resource=\"cpu\" data-nodes=\"$nodes\">")"
else
  expect "per-node cpu plot" 1 "$(count "<g id=\"plot-nodes-cpu\" data-mode=\"histogram\" data-resource=\"cpu\" data-nodes=\"$nodes\">")"
fi
memNodes=$(jq '[.nodes[] | select(.allocatable.memory > 0)] | length' "$RESULT")
if [ "$nodes" -le 200 ] && [ "$memNodes" -le 200 ]; then
  expect "bars with data-node (cpu and memory, before and after)" $(( 2 * nodes + 2 * memNodes )) "$(count 'data-node="')"
fi

resources=$(jq '.utilization | length' "$RESULT")
expect "utilization bars" $(( 2 * resources )) "$(grep -o '<rect class="bar"[^>]*data-resource="' "$work/dom.html" | wc -l)"

reasons=$(jq '.unschedulableByReason | length' "$RESULT")
expect "reason bars" "$reasons" "$(count 'data-reason="')"
while IFS=$'\t' read -r reason pods; do
  expect "bar of reason '$reason'" 1 "$(count "data-reason=\"$reason\" data-count=\"$pods\"")"
done < <(jq -r '.unschedulableByReason[] | [.reason, (.pods | tostring)] | @tsv' "$RESULT")

zones=$(jq '.zones | length' "$RESULT")
expect "zone bars" $(( 2 * zones )) "$(count 'data-zone="')"
while IFS=$'\t' read -r zone after; do
  expect "zone $zone after" 1 "$(count "data-series=\"after\" data-value=\"$after\" data-zone=\"$zone\"")"
done < <(jq -r '.zones[] | [.zone, (.podsAfter | tostring)] | @tsv' "$RESULT")

unschedulable=$(jq '[.pods[] | select(.node == null)] | length' "$RESULT")
expect "unschedulable table rows" 1 "$(count "<table id=\"table-unschedulable\" data-rows=\"$unschedulable\"")"
expect "rows the filter script counted" 1 "$(count "data-shown=\"$unschedulable\"")"

if jq -e '.comparison' "$RESULT" >/dev/null; then
  expect "comparison bars of this run" 1 "$(count 'data-metric="scheduled" data-config="this"')"
  expect "comparison bars of the other run" 1 "$(count 'data-metric="scheduled" data-config="other"')"
  moved=$(jq '.comparison.moved | length' "$RESULT")
  expect "moved pods total" 1 "$(count "data-total=\"$moved\"")"
fi

png=$(stat -c %s "$work/report.png")
if [ "$(head -c 8 "$work/report.png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
  fail "the screenshot is not a PNG"
elif [ "$png" -lt 40000 ]; then
  fail "the screenshot is $png bytes: an empty page?"
else
  echo "ok: screenshot of $png bytes"
fi
if [ -n "${KSCHED_BROWSER_SCREENSHOT:-}" ]; then cp "$work/report.png" "$KSCHED_BROWSER_SCREENSHOT"; fi

if [ "$failures" -gt 0 ]; then
  echo "$failures checks failed; the DOM:"; head -c 3000 "$work/dom.html"; echo
  exit 1
fi
echo "all checks passed"
