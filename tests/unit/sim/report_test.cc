#include "sim/report.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>

#include "sim/report_svg.h"

namespace ksched::sim {
namespace {

using nlohmann::json;

std::size_t occurrences(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

json node(const std::string& name, const std::string& zone, double cpuBefore, double cpuAfter) {
  return {{"name", name},
          {"zone", zone},
          {"placed", 1},
          {"allocatable", {{"cpu", 4000}, {"memory", 8589934592}, {"pods", 110}}},
          {"requestedBefore", {{"cpu", cpuBefore * 4000}, {"memory", 1073741824}, {"pods", 1}}},
          {"requestedAfter", {{"cpu", cpuAfter * 4000}, {"memory", 2147483648}, {"pods", 2}}}};
}

json unschedulablePod(const std::string& name, const std::string& reason) {
  return {{"namespace", "default"},
          {"name", name},
          {"node", nullptr},
          {"reason", "0/3 nodes are available: 3 " + reason + "."},
          {"attempts", 2},
          {"origin", "pending"},
          {"diagnosis",
           {{"nodes", 3},
            {"reasons", {{{"plugin", "NodeResourcesFit"}, {"reason", reason}, {"count", 3}}}},
            {"closest", {{{"node", "n1"}, {"shortfall", "cpu: requests 2, free 1"}}}}}}};
}

json smallResult() {
  json r = {
      {"kind", "SimulationResult"},
      {"profile", "default-scheduler"},
      {"seed", 1},
      {"pods",
       {{{"namespace", "default"}, {"name", "web-1"}, {"node", "n1"}, {"origin", "pending"}},
        unschedulablePod("big-1", "Insufficient cpu"),
        unschedulablePod("big-2", "Insufficient cpu"),
        unschedulablePod("fat-1", "Insufficient memory")}},
      {"victims",
       {{{"namespace", "default"},
         {"name", "low-1"},
         {"node", "n1"},
         {"preemptor", "default/web-1"}}}},
      {"stats",
       {{"scheduled", 1},
        {"unschedulable", 3},
        {"preempted", 1},
        {"attempts", 7},
        {"seconds", 0.0123},
        {"podsPerSecond", 813.0}}},
      {"unschedulableByReason",
       {{{"plugin", "NodeResourcesFit"}, {"reason", "Insufficient cpu"}, {"pods", 2}},
        {{"plugin", "NodeResourcesFit"}, {"reason", "Insufficient memory"}, {"pods", 1}}}},
      {"resources", {"cpu", "memory", "pods"}},
      {"nodes",
       {node("n1", "zone-a", 0.25, 0.5), node("n2", "zone-a", 0, 0.75), node("n3", "", 0.1, 0.1)}},
      {"utilization",
       {{"cpu", {{"before", 0.25}, {"after", 0.5}}},
        {"memory", {{"before", 0.125}, {"after", 0.25}}},
        {"pods", {{"before", 0.01}, {"after", 0.02}}}}},
      {"zones",
       {{{"zone", "zone-a"}, {"podsBefore", 2}, {"podsAfter", 4}, {"placed", 2}},
        {{"zone", ""}, {"podsBefore", 1}, {"podsAfter", 2}, {"placed", 1}}}},
      {"nodesUsed", {{"before", 2}, {"after", 3}}},
      {"skipped",
       {{{"source", "dump.yaml: items[3]"},
         {"object", "Pod default/x"},
         {"field", "spec.nodeName"},
         {"message", "node \"n9\" is not in the cluster"}}}}};
  json other = r;
  other["profile"] = "most-allocated";
  other["stats"]["scheduled"] = 3;
  other["stats"]["unschedulable"] = 1;
  r["comparison"] = {
      {"config", "most-allocated.yaml"},
      {"result", other},
      {"moved",
       {{{"namespace", "default"}, {"name", "big-1"}, {"node", nullptr}, {"otherNode", "n2"}}}}};
  return r;
}

TEST(Report, DrawsEachPlotWithTheResultsCounts) {
  const std::string page = renderReport(smallResult());

  EXPECT_EQ(occurrences(page, "<g id=\"plot-reasons\""), 1u);
  EXPECT_EQ(occurrences(page, "data-reason=\""), 2u);
  EXPECT_EQ(occurrences(page, "data-reason=\"Insufficient cpu\" data-count=\"2\""), 1u);
  EXPECT_EQ(occurrences(page, "data-reason=\"Insufficient memory\" data-count=\"1\""), 1u);

  EXPECT_EQ(occurrences(page, "<g id=\"plot-utilization\""), 1u);
  EXPECT_EQ(occurrences(page, "data-series=\"after\" data-value=\"0.5\" data-resource=\"cpu\""),
            1u);
  EXPECT_EQ(
      occurrences(page, "data-series=\"before\" data-value=\"0.125\" data-resource=\"memory\""),
      1u);

  // Three nodes: a bar before and after each, for cpu and for memory, highest after first.
  EXPECT_EQ(
      occurrences(
          page,
          "<g id=\"plot-nodes-cpu\" data-mode=\"bars\" data-resource=\"cpu\" data-nodes=\"3\">"),
      1u);
  EXPECT_EQ(occurrences(page, "<g id=\"plot-nodes-memory\" data-mode=\"bars\""), 1u);
  EXPECT_EQ(occurrences(page, "data-node=\""), 12u);
  auto cpuPlot = page.substr(page.find("id=\"plot-nodes-cpu\""));
  EXPECT_LT(cpuPlot.find("data-node=\"n2\""), cpuPlot.find("data-node=\"n1\""));
  EXPECT_LT(cpuPlot.find("data-node=\"n1\""), cpuPlot.find("data-node=\"n3\""));

  EXPECT_EQ(occurrences(page, "<g id=\"plot-zones\" data-zones=\"2\">"), 1u);
  EXPECT_EQ(occurrences(page, "data-zone=\""), 4u);
  EXPECT_EQ(occurrences(page, "data-series=\"after\" data-value=\"4\" data-zone=\"zone-a\""), 1u);
  EXPECT_EQ(occurrences(page, "data-zone=\"\" data-count="), 2u);
  EXPECT_EQ(occurrences(page, ">(no zone)</text>"), 1u);

  EXPECT_EQ(
      occurrences(page, "<table id=\"table-unschedulable\" data-rows=\"3\" data-total=\"3\">"), 1u);
  EXPECT_EQ(occurrences(page, "<table id=\"table-victims\" data-rows=\"1\""), 1u);
  EXPECT_EQ(occurrences(page, "<table id=\"table-skipped\" data-rows=\"1\""), 1u);
  EXPECT_EQ(occurrences(page, "n1 (cpu: requests 2, free 1)"), 3u);

  EXPECT_EQ(occurrences(page, "<g id=\"plot-compare\""), 1u);
  EXPECT_EQ(occurrences(page,
                        "data-series=\"most-allocated.yaml\" data-value=\"3\" "
                        "data-metric=\"scheduled\" data-config=\"other\""),
            1u);
  EXPECT_EQ(occurrences(page, "<table id=\"table-moved\" data-rows=\"1\""), 1u);

  EXPECT_EQ(occurrences(page, "data-stat=\"unschedulable\"><div class=\"v\">3</div>"), 1u);
  EXPECT_EQ(occurrences(page, "2 \xE2\x86\x92 3"), 1u);  // nodes used before -> after
}

TEST(Report, IsSelfContainedAndMarkedRenderedOnlyByItsScript) {
  const std::string page = renderReport(smallResult());
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(occurrences(page, "<script"), 1u);
  EXPECT_EQ(occurrences(page, " src="), 0u);
  EXPECT_EQ(occurrences(page, "<link"), 0u);
  EXPECT_EQ(occurrences(page, "url("), 0u);
  EXPECT_EQ(occurrences(page, "@import"), 0u);
  EXPECT_EQ(occurrences(page, "data-rendered=\"no\""), 1u);
  EXPECT_EQ(occurrences(page, "data-rendered=\"ok\""), 0u);
}

TEST(Report, EscapesEveryName) {
  json r = smallResult();
  const std::string evil = "<script>alert('x')</script>&\"";
  r["profile"] = evil;
  r["pods"].push_back(unschedulablePod(evil, evil));
  r["unschedulableByReason"].push_back({{"plugin", evil}, {"reason", evil}, {"pods", 1}});
  r["victims"].push_back(
      {{"namespace", evil}, {"name", evil}, {"node", evil}, {"preemptor", evil}});
  r["nodes"].push_back(node(evil, evil, 0, 1));
  r["zones"].push_back({{"zone", evil}, {"podsBefore", 0}, {"podsAfter", 1}});
  r["skipped"].push_back({{"source", evil}, {"object", evil}, {"field", evil}, {"message", evil}});
  r["comparison"]["config"] = evil;
  const std::string page = renderReport(r);

  EXPECT_EQ(occurrences(page, "<script"), 1u);  // the page's own
  EXPECT_EQ(occurrences(page, "alert('x')"), 0u);
  EXPECT_GT(occurrences(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;"), 10u);
  EXPECT_EQ(occurrences(page, "data-reason=\"&lt;script&gt;"), 1u);
}

TEST(Report, EscapeHtmlDropsControlCharacters) {
  EXPECT_EQ(report::escapeHtml("a<b>&\"'\x01\tc\n"), "a&lt;b&gt;&amp;&quot;&#39;\tc\n");
  EXPECT_EQ(report::formatNumber(0.5), "0.5");
  EXPECT_EQ(report::formatNumber(2.0), "2");
  EXPECT_EQ(report::formatNumber(-0.0001), "0");
  EXPECT_EQ(report::formatPercent(0.2534), "25.3%");
}

TEST(Report, RendersDocumentsOfAnyShape) {
  const std::vector<json> documents = {
      json(),
      json::object(),
      json::array({1, 2}),
      json("SimulationResult"),
      json(42),
      {{"pods", "many"},
       {"nodes", 3},
       {"stats", json::array()},
       {"utilization", {{"cpu", "high"}, {"memory", {{"before", "x"}, {"after", nullptr}}}}},
       {"zones", {1, "a", nullptr, {{"zone", 3}, {"podsAfter", -1}}}},
       {"victims", {{{"name", 5}}, "v"}},
       {"skipped", {nullptr, 1}},
       {"unschedulableByReason", {{{"reason", json::array()}, {"pods", "2"}}}},
       {"comparison", 7},
       {"resources", {1, nullptr, "cpu"}},
       {"seed", -4},
       {"profile", json::object()}},
      {{"pods",
        {nullptr,
         1,
         {{"node", nullptr}},
         {{"name", "p"}, {"node", nullptr}, {"diagnosis", "bad"}},
         {{"name", "q"},
          {"node", nullptr},
          {"diagnosis", {{"reasons", {1, {{"reason", 2}}}}, {"closest", "x"}}}}}},
       {"nodes",
        {nullptr,
         {{"name", 7}},
         {{"name", "no-allocatable"}},
         {{"name", "strings"}, {"allocatable", "4"}, {"requestedBefore", {{"cpu", "1"}}}},
         {{"name", "zero"},
          {"allocatable", {{"cpu", 0}}},
          {"requestedBefore", {{"cpu", 0}}},
          {"requestedAfter", {{"cpu", 1}}}},
         {{"name", "infinite"},
          {"allocatable", {{"cpu", 1e-300}}},
          {"requestedBefore", {{"cpu", 1e300}}},
          {"requestedAfter", {{"cpu", 1.7e308}}}},
         {{"name", "huge"},
          {"allocatable", {{"cpu", 1}}},
          {"requestedBefore", {{"cpu", 0}}},
          {"requestedAfter", {{"cpu", 1e300}}}}}},
       {"comparison",
        {{"result", "x"}, {"moved", {{{"name", "m"}, {"node", 1}, {"otherNode", nullptr}}}}}},
       {"stats", {{"scheduled", 1.5e300}, {"seconds", "fast"}, {"podsPerSecond", -1}}}},
  };
  for (const json& doc : documents) {
    std::string page;
    ASSERT_NO_THROW(page = renderReport(doc)) << doc.dump();
    EXPECT_NE(page.find("</html>"), std::string::npos) << doc.dump();
  }
  // The one usable node of the last document is drawn; the others are skipped.
  const std::string page = renderReport(documents.back());
  EXPECT_EQ(occurrences(page, "data-node=\""), 2u);
  EXPECT_EQ(occurrences(page, "data-node=\"huge\""), 2u);
  EXPECT_EQ(occurrences(page, "<table id=\"table-unschedulable\" data-rows=\"2\""), 1u);
  EXPECT_EQ(occurrences(page, "<table id=\"table-moved\" data-rows=\"1\""), 1u);
}

TEST(Report, UtilizationFallsBackToTheNodesSums) {
  json r = smallResult();
  r.erase("utilization");
  const std::string page = renderReport(r);
  // cpu after: (0.5 + 0.75 + 0.1) * 4000 / 12000 = 0.45.
  EXPECT_EQ(occurrences(page, "data-series=\"after\" data-value=\"0.45\" data-resource=\"cpu\""),
            1u);
}

TEST(Report, EmptyResultSaysWhatIsMissing) {
  const std::string page = renderReport(json::object());
  EXPECT_EQ(occurrences(page, "No pod is unschedulable."), 1u);
  EXPECT_EQ(occurrences(page, "The result lists no nodes."), 1u);
  EXPECT_EQ(occurrences(page, "id=\"plot-"), 0u);
  EXPECT_EQ(occurrences(page, "section-comparison"), 0u);
}

TEST(Report, ManyNodesAreAHistogramByBand) {
  json r = smallResult();
  r["nodes"] = json::array();
  for (int i = 0; i < 201; ++i) r["nodes"].push_back(node("n" + std::to_string(i), "z", 0, 0.95));
  const std::string page = renderReport(r);
  EXPECT_EQ(occurrences(page,
                        "<g id=\"plot-nodes-cpu\" data-mode=\"histogram\" data-resource=\"cpu\" "
                        "data-nodes=\"201\">"),
            1u);
  EXPECT_EQ(occurrences(page,
                        "data-series=\"before\" data-value=\"201\" data-band=\"0\xE2\x80\x93"
                        "10%\" data-count=\"201\""),
            1u);
  EXPECT_EQ(occurrences(page,
                        "data-series=\"after\" data-value=\"201\" data-band=\"90\xE2\x80\x93"
                        "100%\" data-count=\"201\""),
            1u);
  EXPECT_EQ(occurrences(page, "over 100%"), 0u);
  EXPECT_EQ(occurrences(page, "data-node=\""), 0u);
}

TEST(Report, TwentyThousandNodesStaySmallAndFast) {
  json r = smallResult();
  r["nodes"] = json::array();
  r["zones"] = json::array();
  const json base = node("", "", 0.02, 0);
  for (int i = 0; i < 20000; ++i) {
    // cpu after: 2000 nodes in each band, less the first 100 nodes moved over 100 %.
    double after = (i % 10) * 0.1 + 0.05 + (i < 100 ? 1.0 : 0.0);
    json n = base;
    n["name"] = "node-" + std::to_string(i);
    n["zone"] = "zone-" + std::to_string(i % 100);
    n["requestedAfter"]["cpu"] = after * 4000;
    r["nodes"].push_back(std::move(n));
  }
  for (int z = 0; z < 100; ++z) {
    r["zones"].push_back(
        {{"zone", "zone-" + std::to_string(z)}, {"podsBefore", z}, {"podsAfter", 200 + z}});
  }
  const json pod = unschedulablePod("", "Insufficient cpu");
  for (int i = 0; i < 5000; ++i) {
    json p = pod;
    p["name"] = "p" + std::to_string(i);
    r["pods"].push_back(std::move(p));
  }

  auto start = std::chrono::steady_clock::now();
  const std::string page = renderReport(r);
  auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_LT(page.size(), 2u * 1024 * 1024);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
  EXPECT_EQ(occurrences(page, "data-mode=\"histogram\" data-resource=\"cpu\" data-nodes=\"20000\""),
            1u);
  // cpu after: 1990 nodes in each band, the 100 others over 100 %.
  EXPECT_EQ(occurrences(page,
                        "data-band=\"50\xE2\x80\x93"
                        "60%\" data-count=\"1990\""),
            1u);
  EXPECT_EQ(occurrences(page, "data-band=\"over 100%\" data-count=\"100\""), 1u);
  EXPECT_EQ(occurrences(page,
                        "data-band=\"90\xE2\x80\x93"
                        "100%\" data-count=\"1990\""),
            1u);
  EXPECT_EQ(
      occurrences(page, "<table id=\"table-unschedulable\" data-rows=\"500\" data-total=\"5003\">"),
      1u);
  EXPECT_EQ(occurrences(page, "4503 more are in the JSON result"), 1u);
  EXPECT_EQ(occurrences(page, "<g id=\"plot-zones\" data-zones=\"60\">"), 1u);
  EXPECT_EQ(occurrences(page, "40 zones with fewer pods are not drawn"), 1u);
}

}  // namespace
}  // namespace ksched::sim
