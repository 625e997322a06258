#!/usr/bin/env bash
# check_advise_report.sh RENDER_REPORT PLAN.json: renders PLAN.json (`ksched advise -o json`) with
# RENDER_REPORT --advise (ksched_render_report, the page `ksched advise --report` writes), opens
# it in headless Chromium and checks
#  - the DOM after the page's script ran: its marker (body data-rendered="ok"), the moves table
#    (a row naming each move's pod, nodes from and to) and the rows its filter counted, the
#    cards, the bars of the requested shares and of the spread per node (and of the skews, for
#    --spread) with their values, the tables of freed nodes and of pods that keep theirs; every
#    expected count and value read from PLAN.json with jq, not from the page;
#  - a 1280x2000 screenshot: a PNG of more than 40 KB.
# KSCHED_BROWSER_SCREENSHOT=FILE keeps the screenshot (docs/img/advise-report.png is one).
#
# fixture_advise.json is the plan of
#   ksched advise -f docs/examples/advise/cluster.yaml --scale-down -o json
# (3 nodes freed with 7 moves, 2 pods that keep their node).
set -euo pipefail

RENDER=$1
PLAN=$2
. "$(dirname "$0")/lib.sh"
"$RENDER" --advise "$PLAN" "$work/report.html"
load_page "$work/report.html"

check_rendered

# formatNumber(v, 4) of sim/report_svg.h: at most four decimals (printf's rounding, as the
# page's), no trailing zeros.
fmt() { LC_ALL=C printf '%.4f' "$1" | sed -E '/\./ { s/0+$//; s/\.$// }'; }

moves=$(jq '.moves | length' "$PLAN")
expect "card of the moves" 1 "$(count "data-stat=\"moves\"><div class=\"v\">$moves</div>")"
expect "card of the nodes used" 1 "$(count "data-stat=\"nodesUsed\"><div class=\"v\">$(jq -r '"\(.before.nodesUsed) → \(.after.nodesUsed)"' "$PLAN")</div>")"
expect "moves table rows" 1 "$(count "<table id=\"table-moves\" data-rows=\"$moves\" data-total=\"$moves\">")"
if [ "$moves" -gt 1 ]; then
  expect "rows the moves table's filter counted" 1 "$(count "data-filter=\"table-moves\"><span class=\"shown\" data-shown=\"$moves\">")"
fi
while IFS=$'\t' read -r step pod from to; do
  expect "row of move $step ($pod)" 1 "$(count "<tr><td class=\"num\">$step</td><td>$pod</td><td>$from</td><td>$to</td>")"
done < <(jq -r '.moves | to_entries[] | [(.key + 1 | tostring), .value.pod, .value.from, .value.to] | @tsv' "$PLAN")

# The requested shares: a bar before and after for each resource over all nodes and the nodes
# used, and for each measure of the spread per node.
scopes=$(jq '[.before.requestedPercent, .before.requestedPercentOfNodesUsed | keys[]] | length' "$PLAN")
expect "bars of the requested shares" $(( 2 * scopes )) "$(count 'data-scope="')"
while IFS=$'\t' read -r resource before after; do
  before=$(fmt "$before") after=$(fmt "$after")
  expect "$resource before, all nodes" 1 "$(count "data-series=\"before\" data-value=\"$before\" data-resource=\"$resource\" data-scope=\"all\"")"
  expect "$resource after, all nodes" 1 "$(count "data-series=\"after\" data-value=\"$after\" data-resource=\"$resource\" data-scope=\"all\"")"
done < <(jq -r ". as \$d | .before.requestedPercent | keys[] as \$r | [\$r, \$d.before.requestedPercent[\$r], \$d.after.requestedPercent[\$r]] | @tsv" "$PLAN")
measures=$(jq '[.before.requestedPercentPerNode[] | keys[]] | length' "$PLAN")
expect "bars of the spread per node" $(( 2 * measures )) "$(count 'data-measure="')"
while IFS=$'\t' read -r resource measure after; do
  after=$(fmt "$after")
  expect "$resource $measure after" 1 "$(count "data-series=\"after\" data-value=\"$after\" data-resource=\"$resource\" data-measure=\"$measure\"")"
done < <(jq -r ".after.requestedPercentPerNode | to_entries[] | .key as \$r | .value | to_entries[] | [\$r, .key, .value] | @tsv" "$PLAN")

if jq -e '.skews' "$PLAN" >/dev/null; then
  skews=$(jq '.skews | length' "$PLAN")
  expect "bars of the skews (before, after, maxSkew)" $(( 3 * skews )) "$(count 'data-topology-key="')"
fi
cordon=$(jq '.cordon | length' "$PLAN")
if [ "$cordon" -gt 0 ]; then
  expect "card of the nodes freed" 1 "$(count "data-stat=\"nodesFreed\"><div class=\"v\">$cordon</div>")"
  expect "rows of the freed nodes" 1 "$(count "<table id=\"table-freed\" data-rows=\"$cordon\"")"
fi
kept=$(jq '.kept | length' "$PLAN")
if [ "$kept" -gt 0 ]; then
  expect "rows of the pods that keep their node" 1 "$(count "<table id=\"table-kept\" data-rows=\"$kept\"")"
fi

check_screenshot 40000
finish
