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
. "$(dirname "$0")/lib.sh"
"$RENDER" "$RESULT" "$work/report.html"
load_page "$work/report.html"

check_rendered

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

check_screenshot 40000
finish
