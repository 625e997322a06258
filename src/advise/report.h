// advise --report FILE.html: one self-contained page (no network, no external files) showing a
// plan: the headline numbers, the requested shares before and after, the skews (--spread), the
// moves (with a filter), and every list the plan has (nodes freed, not freed, pods that keep
// their node, nodes already free, the room made by --defragment). Its input is the document
// `ksched advise -o json` prints (planDocument, advise/render.h), so a saved plan renders too.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace ksched::advise {

// Every member is optional and read only when of the expected type: a document of any goal,
// or a malformed one ({}, null, wrong types), renders what it has and never throws.
//
// What a test can read off the page: the cards' `data-stat`, one row per move in
// `<table id="table-moves">`, and the charts' bars (sim/report_svg.h) with `data-resource` and
// `data-scope` ("all", "used") in plot-requested, `data-resource` and `data-measure` ("min",
// "mean", "max", "stddev") in plot-per-node, `data-pods` and `data-topology-key` in plot-skews.
[[nodiscard]] std::string renderReport(const nlohmann::json& plan);

}  // namespace ksched::advise
