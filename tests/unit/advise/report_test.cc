// advise --report (advise/report.h): the page of real plans over the examples of
// docs/examples/advise, read off its cards, tables and bars; and documents it was not made for.
#include "advise/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "advise/balance.h"
#include "advise/defragment.h"
#include "advise/plan.h"
#include "advise/render.h"
#include "advise/spread.h"
#include "sim/load.h"
#include "sim/report_svg.h"
#include "tests/support/sim_test_util.h"
#include "tests/support/source_dir.h"

namespace ksched::advise {
namespace {

using nlohmann::json;
using sim::report::formatNumber;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

std::size_t occurrences(std::string_view haystack, std::string_view needle) {
  std::size_t n = 0;
  for (auto pos = haystack.find(needle); pos != std::string_view::npos;
       pos = haystack.find(needle, pos + needle.size())) {
    ++n;
  }
  return n;
}

std::string example(const std::string& name) {
  return (ksched::testing::repoRoot() / "docs/examples/advise" / name).string();
}

sim::Cluster cluster(const std::string& name) {
  sim::Cluster c;
  sim::loadFile(example(name), sim::LoadAs::kCluster, c);
  sim::checkCluster(c);
  EXPECT_THAT(c.skipped, IsEmpty());
  return c;
}

std::string page(const Plan& p) { return renderReport(planDocument(p)); }

// The value a card shows.
std::string stat(const std::string& page, const std::string& key) {
  const std::string open = "data-stat=\"" + key + "\"><div class=\"v\">";
  const auto at = page.find(open);
  if (at == std::string::npos) return "(no card " + key + ")";
  const auto from = at + open.size();
  return page.substr(from, page.find("</div>", from) - from);
}

// The HTML of <table id="id">...</table>.
std::string tableOf(const std::string& page, const std::string& id) {
  const auto at = page.find("<table id=\"" + id + "\"");
  if (at == std::string::npos) return "";
  return page.substr(at, page.find("</table>", at) - at);
}

// A bar of plot-requested or plot-per-node: its series, value and data-* attributes.
std::string bar(const std::string& series, double value, const std::string& attrs) {
  return "data-series=\"" + series + "\" data-value=\"" + formatNumber(value, 4) + "\" " + attrs +
         ">";
}

double measure(const Figures::Spread& s, const std::string& m) {
  if (m == "min") return s.min;
  if (m == "mean") return s.mean;
  if (m == "max") return s.max;
  return s.stddev;
}

void expectMovesTable(const std::string& html, const Plan& p) {
  const std::string t = tableOf(html, "table-moves");
  EXPECT_THAT(t, HasSubstr("data-rows=\"" + std::to_string(p.moves.size()) + "\""));
  EXPECT_EQ(occurrences(t, "<tr>"), p.moves.size() + 1);  // and the header
  for (size_t i = 0; i < p.moves.size(); ++i) {
    const Move& m = p.moves[i];
    EXPECT_EQ(occurrences(t, "<tr><td class=\"num\">" + std::to_string(i + 1) + "</td><td>" +
                                 m.namespace_ + "/" + m.name + "</td><td>" + m.from + "</td><td>" +
                                 m.to + "</td>"),
              1U)
        << m.name;
  }
}

TEST(AdviseReport, ScaleDownShowsTheCardsTheMovesAndTheRequestedShares) {
  const Plan p = planFreeNodes(cluster("cluster.yaml"), {}, {});
  ASSERT_EQ(p.cordon.size(), 3U);
  const std::string html = page(p);
  EXPECT_THAT(html, HasSubstr("<h1>ksched advise</h1>"));
  EXPECT_THAT(html, HasSubstr("goal <b>--scale-down</b>: Free 3 nodes (node-1, node-4, node-5)"));
  EXPECT_EQ(stat(html, "moves"), std::to_string(p.moves.size()));
  EXPECT_EQ(stat(html, "nodesFreed"), "3");
  EXPECT_EQ(stat(html, "nodesUsed"), "6 \u2192 3");
  EXPECT_EQ(stat(html, "lowerBoundNodes"), "3");
  EXPECT_EQ(stat(html, "schedulerRuns"), std::to_string(p.schedulerRuns));
  expectMovesTable(html, p);
  // One row per freed node, with the moves off it.
  const std::string freed = tableOf(html, "table-freed");
  for (const auto& n : p.cordon) EXPECT_THAT(freed, HasSubstr("<td>" + n + "</td>"));
  EXPECT_THAT(tableOf(html, "table-kept"), HasSubstr("<td>shop/cache-0</td>"));
  // The cluster's share before and after, over all nodes and over the nodes used.
  for (const char* r : {"cpu", "memory"}) {
    const std::string res = std::string("data-resource=\"") + r + "\"";
    EXPECT_EQ(
        occurrences(html, bar("before", p.before.requested.at(r), res + " data-scope=\"all\"")),
        1U);
    EXPECT_EQ(
        occurrences(html, bar("after", p.after.requestedUsed.at(r), res + " data-scope=\"used\"")),
        1U);
    EXPECT_EQ(
        occurrences(html, bar("after", p.after.perNode.at(r).max, res + " data-measure=\"max\"")),
        1U);
  }
  // Two scopes and four measures, before and after, per resource.
  EXPECT_EQ(occurrences(html, "<rect class=\"bar\""), 2U * 2 * (2 + 4));
  EXPECT_THAT(html, Not(HasSubstr("plot-skews")));
  EXPECT_THAT(html, HasSubstr("<body data-rendered=\"no\">"));
}

TEST(AdviseReport, BalanceShowsTheNodesOverTheBandAndTheSpreadPerNode) {
  const Plan p = planBalance(cluster("cluster.yaml"), {}, {});
  ASSERT_TRUE(p.balance);
  const std::string html = page(p);
  EXPECT_EQ(stat(html, "nodesOver"), std::to_string(p.balance->overBefore) + " \u2192 " +
                                         std::to_string(p.balance->overAfter));
  EXPECT_THAT(html, Not(HasSubstr("data-stat=\"nodesFreed\"")));
  expectMovesTable(html, p);
  for (const std::string m : {"min", "mean", "max", "stddev"}) {
    const std::string attrs = "data-resource=\"cpu\" data-measure=\"" + m + "\"";
    EXPECT_EQ(occurrences(html, bar("before", measure(p.before.perNode.at("cpu"), m), attrs)), 1U)
        << m;
    EXPECT_EQ(occurrences(html, bar("after", measure(p.after.perNode.at("cpu"), m), attrs)), 1U)
        << m;
  }
  ASSERT_EQ(p.notFreed.size(), 1U);
  EXPECT_THAT(html, HasSubstr("<h2>Nodes left above the band</h2>"));
  EXPECT_THAT(tableOf(html, "table-not-freed"), HasSubstr("<td>node-3</td>"));
}

TEST(AdviseReport, SpreadDrawsEachConstraintsSkewAgainstItsMaxSkew) {
  const Plan p = planSpread(cluster("skewed.yaml"), {}, {});
  ASSERT_EQ(p.skews.size(), 1U);
  const Skew& k = p.skews[0];
  const std::string html = page(p);
  EXPECT_EQ(stat(html, "skewsWithin"), "1 of 1");
  const std::string attrs =
      "data-pods=\"" + k.group + "\" data-topology-key=\"" + k.topologyKey + "\">";
  EXPECT_EQ(occurrences(html, "data-series=\"before\" data-value=\"" + std::to_string(k.before) +
                                  "\" " + attrs),
            1U);
  EXPECT_EQ(occurrences(html, "data-series=\"after\" data-value=\"" + std::to_string(k.after) +
                                  "\" " + attrs),
            1U);
  EXPECT_EQ(occurrences(html, "data-series=\"maxSkew\" data-value=\"" + std::to_string(k.maxSkew) +
                                  "\" " + attrs),
            1U);
  EXPECT_THAT(tableOf(html, "table-skews"), HasSubstr("<td>" + k.topologyKey + "</td>"));
  expectMovesTable(html, p);
}

api::Pod podFrom(const std::string& file) {
  sim::Cluster work;
  sim::loadFile(example(file), sim::LoadAs::kWork, work);
  return *work.pods.at(0);
}

TEST(AdviseReport, DefragmentNamesThePodTheNodeItLandsOnAndTheNodesTried) {
  const Plan p = planDefragment(cluster("gpus.yaml"), {}, podFrom("gpu-job.yaml"), {});
  ASSERT_EQ(p.forPodNode, "gpu-2");
  const std::string html = page(p);
  EXPECT_EQ(stat(html, "forPod"), "ml/train-8gpu");
  EXPECT_EQ(stat(html, "forPodNode"), "gpu-2");
  EXPECT_EQ(stat(html, "cordoned"), "1");
  EXPECT_THAT(html, HasSubstr("<h2>Room for ml/train-8gpu</h2>"));
  EXPECT_THAT(html, HasSubstr("Cordoned while the moves run (uncordoned after the last): gpu-2."));
  EXPECT_THAT(html, HasSubstr("<h2>Nodes tried</h2>"));
  EXPECT_THAT(tableOf(html, "table-not-freed"), HasSubstr("<td>gpu-1</td>"));
  expectMovesTable(html, p);

  // No room: the card says so, in red.
  sim::Cluster huge;
  sim::loadText(R"(apiVersion: v1
kind: Pod
metadata: {name: train-9gpu, namespace: ml}
spec:
  containers:
  - name: c
    resources: {requests: {nvidia.com/gpu: "9"}, limits: {nvidia.com/gpu: "9"}}
)",
                "huge.yaml", sim::LoadAs::kWork, huge);
  const std::string none = page(planDefragment(cluster("gpus.yaml"), {}, *huge.pods.at(0), {}));
  EXPECT_THAT(none, HasSubstr("<div class=\"card bad\" data-stat=\"forPodNode\"><div "
                              "class=\"v\">no room</div>"));
  EXPECT_THAT(none, HasSubstr("No room found for ml/train-9gpu."));
}

TEST(AdviseReport, AGangListsItsMembersAndTheirNodes) {
  sim::Cluster c = cluster("gpus.yaml");
  sim::Cluster work;
  sim::loadFile(example("gpu-gang.yaml"), sim::LoadAs::kWork, work);
  for (const auto& [kind, objects] : work.others) c.others[kind] = objects;
  sim::Options o;
  ASSERT_EQ(o.features.set("GenericWorkload=true"), std::nullopt);
  const Plan p = planDefragmentGroup(c, o, "ml/finetune", work.pods, {});
  ASSERT_EQ(p.forPodMembers.size(), 2U) << p.forPodReason;
  const std::string html = page(p);
  EXPECT_EQ(stat(html, "forPodNode"), p.forPodNode);
  const std::string members = tableOf(html, "table-members");
  for (const auto& [pod, node] : p.forPodMembers) {
    EXPECT_THAT(members, HasSubstr("<td>" + pod + "</td><td>" + node + "</td>"));
  }
  expectMovesTable(html, p);
}

TEST(AdviseReport, NamesAreEscaped) {
  sim::Cluster c;
  c.nodes = {sim::testutil::node("n1", 4), sim::testutil::node("n2", 4)};
  c.pods.push_back(sim::testutil::boundPod("bare", 1000, "n2"));  // keeps n2: no controller
  c.pods.push_back(sim::testutil::podOf("web<b>&\"1", 1000)
                       .ownerReference("ReplicaSet", "web", "web-uid")
                       .nodeName("n1")
                       .ptr());
  const Plan p = planFreeNodes(c, {}, {1, {}});
  ASSERT_EQ(p.moves.size(), 1U);
  const std::string html = page(p);
  EXPECT_THAT(tableOf(html, "table-moves"), HasSubstr("<td>default/web&lt;b&gt;&amp;&quot;1</td>"));
  EXPECT_THAT(html, Not(HasSubstr("web<b>")));

  json doc = planDocument(p);
  doc["goal"] = "</title><script>alert(1)</script>";
  const std::string forged = renderReport(doc);
  EXPECT_THAT(forged, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(forged, HasSubstr("&lt;/title&gt;&lt;script&gt;alert(1)"));
}

TEST(AdviseReport, ASavedPlanRendersAsTheOneJustMade) {
  const Plan p = planFreeNodes(cluster("cluster.yaml"), {}, {});
  const nlohmann::ordered_json doc = planDocument(p);
  EXPECT_EQ(renderReport(json::parse(doc.dump(2))), renderReport(doc));
}

TEST(AdviseReport, ManyMovesShowTheFirstFiveHundred) {
  json doc = {{"goal", "--scale-down"}, {"moves", json::array()}};
  for (int i = 0; i < 620; ++i) {
    doc["moves"].push_back({{"pod", "ns/p" + std::to_string(i)}, {"from", "a"}, {"to", "b"}});
  }
  const std::string html = renderReport(doc);
  EXPECT_THAT(html, HasSubstr("<table id=\"table-moves\" data-rows=\"500\" data-total=\"620\">"));
  EXPECT_THAT(html, HasSubstr("120 more are in the JSON plan (-o json)."));
  EXPECT_EQ(stat(html, "moves"), "620");
}

TEST(AdviseReport, MalformedDocumentsRenderWhatTheyHave) {
  const std::vector<json> docs = {
      json::object(),
      json(nullptr),
      json::array({1, 2}),
      json("plan"),
      json(42),
      json::parse(R"({"goal": 7, "moves": "many", "cordon": 3, "before": [], "after": null,
                      "kept": [null, 1, {"pod": 2}], "notFreed": {"node": "n1"},
                      "alreadyFree": [1, "n9"], "seconds": "fast", "schedulerRuns": -2,
                      "lowerBoundNodes": 1e300, "pendingLeftOut": 2.5})"),
      json::parse(R"({"moves": [{"pod": 5, "from": null, "tiedWith": "n2"}, 3, null],
                      "before": {"nodes": "six", "nodesUsed": 6,
                                 "requestedPercent": {"cpu": "high", "memory": 30},
                                 "requestedPercentOfNodesUsed": [],
                                 "requestedPercentPerNode": {"cpu": 5, "memory": {"max": "x"}}},
                      "after": {"requestedPercent": {"gpu": 12.5},
                                "requestedPercentPerNode": {"cpu": {"min": 1, "max": null}}}})"),
      json::parse(R"({"goal": "--spread", "skews": [1, null, {"before": "x", "maxSkew": 1},
                      {"pods": ["a"], "after": 2, "default": "yes"}]})"),
      json::parse(R"({"goal": "--balance", "balance": {"deviation": "ten",
                      "nodesOverBefore": null}})"),
      json::parse(R"({"goal": "--defragment", "forPod": "ml/x", "forPodNode": 3,
                      "makeRoomOn": "gpu-1", "forPodGroupMembers": [{"pod": 1}, "x", {}]})"),
  };
  for (const json& doc : docs) {
    std::string html;
    EXPECT_NO_THROW(html = renderReport(doc)) << doc.dump();
    EXPECT_THAT(html, HasSubstr("<h1>ksched advise</h1>")) << doc.dump();
    EXPECT_THAT(html, HasSubstr("data-stat=\"moves\"")) << doc.dump();
    EXPECT_TRUE(html.ends_with("</body></html>\n")) << doc.dump();
  }
  const std::string empty = renderReport(json::object());
  EXPECT_EQ(stat(empty, "moves"), "\u2013");
  EXPECT_EQ(stat(empty, "nodesUsed"), "\u2013 \u2192 \u2013");
  EXPECT_THAT(empty, HasSubstr("The plan has no requested shares."));
  EXPECT_THAT(empty, HasSubstr("The plan has no moves."));
  // What is there is shown: the one well-formed move, the one node name.
  const std::string partial = renderReport(docs[6]);
  EXPECT_EQ(stat(partial, "moves"), "1");
  EXPECT_EQ(stat(partial, "nodesUsed"), "6 \u2192 \u2013");
  EXPECT_EQ(occurrences(partial, "data-scope=\"all\""), 4U);  // memory and gpu, before and after
  EXPECT_THAT(renderReport(docs[5]), HasSubstr("id=\"already-free\" data-count=\"1\">n9</p>"));
}

}  // namespace
}  // namespace ksched::advise
