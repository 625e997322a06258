// ksched simulate over files, as an operator runs it on a `kubectl get -o yaml` dump: capacity
// questions, and input that is partly broken (objects skipped and listed, the rest used) or
// unusable (exit 1 with the reason). No apiserver is involved.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "simulate_dir.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

class SimulateFiles : public SimulateDir {};

std::string node(const std::string& name, const std::string& cpu) {
  return "apiVersion: v1\nkind: Node\nmetadata:\n  name: " + name +
         "\n  labels:\n    kubernetes.io/hostname: " + name +
         "\nstatus:\n  allocatable:\n    cpu: \"" + cpu +
         "\"\n    memory: 16Gi\n    pods: \"110\"\n";
}

std::string pod(const std::string& name, const std::string& cpu, const std::string& nodeName = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name + "\n  namespace: shop\nspec:\n" +
         (nodeName.empty() ? "" : "  nodeName: " + nodeName + "\n") +
         "  containers:\n  - name: c\n    image: app\n    resources:\n      requests:\n        "
         "cpu: \"" +
         cpu + "\"\n        memory: 64Mi\n";
}

// 3 nodes with 4 cpus free each (one of them 6 cpus with 2 taken): 12 one-cpu pods fit, the
// 13th is short of cpu.
TEST_F(SimulateFiles, CapacityCountsTheCopiesThatFitAndSaysWhyTheNextDoesNot) {
  const std::string cluster =
      file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "4") + "---\n" + node("n3", "6") +
                               "---\n" + pod("busy", "2", "n3"));
  const std::string one = file("pod.yaml", pod("web", "1"));
  const auto r = simulate({"-f", cluster, "--capacity", one, "-o", "json", "-q"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("fits"), 12) << r.out;
  const std::string reason = j.at("next").at("reason");
  EXPECT_THAT(reason, HasSubstr("0/3 nodes are available: 3 Insufficient cpu")) << r.out;

  const auto table = simulate({"-f", cluster, "--capacity", one, "-q"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("12 more copies of shop/web fit."));
  EXPECT_THAT(table.out, HasSubstr("Insufficient cpu"));
}

// A dump with a pod on an unknown node, a quantity that does not parse, an object without a
// kind, one of a kind ksched does not use, and a truncated last document: the good objects are
// used, each bad one is listed on stderr and in "skipped" with its object and field.
TEST_F(SimulateFiles, BadObjectsAreSkippedAndListedAndTheRestIsScheduled) {
  const std::string cluster = file(
      "cluster.yaml",
      node("good", "4") + "---\n" + node("badq", "4x") + "---\n" + pod("ghost", "1", "nowhere") +
          "---\n" + pod("web-1", "1") + "---\n" + "apiVersion: v1\nmetadata:\n  name: nokind\n" +
          "---\n" +
          "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: shop\n" +
          "---\n" + pod("web-2", "500m") + "---\n" +
          "apiVersion: v1\nkind: Pod\nmetadata:\n  name: cut\n  namespace: shop\nspec:\n"
          "  containers:\n  - name: c\n    resources: {requests: {cpu: \"1\"\n");
  const auto r = simulate({"-f", cluster, "-o", "json"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json doc = json::parse(r.out);
  std::map<std::string, json> placed;
  for (const auto& p : doc.at("pods")) placed[p.at("name")] = p.at("node");
  EXPECT_EQ(placed, (std::map<std::string, json>{{"web-1", "good"}, {"web-2", "good"}}))
      << doc.at("pods").dump(2);

  // object -> field of each skipped entry.
  std::map<std::string, std::string> skipped;
  for (const auto& s : doc.at("skipped")) {
    skipped[s.at("object").get<std::string>() + "@" + s.at("source").get<std::string>()] =
        s.at("field");
  }
  const std::string src = cluster + ": document ";
  EXPECT_EQ(skipped, (std::map<std::string, std::string>{
                         {"Node badq@" + src + "2", "status.allocatable.cpu"},
                         {"Pod shop/ghost@", "spec.nodeName"},
                         {"@" + src + "5", "kind"},
                         {"@" + src + "8", ""},
                         // A kind no plugin reads is listed, not used.
                         {"example.com/v1/Widget (1 object)@", ""}}))
      << doc.at("skipped").dump(2);
  EXPECT_THAT(r.err, HasSubstr("skipped: " + src + "2: Node badq status.allocatable.cpu: "));
  EXPECT_THAT(r.err, HasSubstr("skipped: Pod shop/ghost spec.nodeName: node \"nowhere\" is not in "
                               "the cluster"));
  EXPECT_THAT(r.err, HasSubstr("skipped: " + src + "5 kind: missing"));
  EXPECT_THAT(r.err, HasSubstr("skipped: " + src + "8: invalid YAML at line "));
}

TEST_F(SimulateFiles, MissingFileOrInvalidConfigExitsOneSayingWhy) {
  const auto missing = simulate({"-f", dir_ + "/nothing.yaml", "-q"});
  EXPECT_EQ(missing.exitCode, 1);
  EXPECT_THAT(missing.err, HasSubstr(dir_ + "/nothing.yaml: No such file or directory"));
  EXPECT_TRUE(missing.out.empty()) << missing.out;

  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + pod("web", "1"));
  const std::string config = file("config.yaml",
                                  "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                  "kind: KubeSchedulerConfiguration\n"
                                  "profiles:\n"
                                  "- schedulerName: default-scheduler\n"
                                  "  pluginConfig:\n"
                                  "  - name: NodeResourcesFit\n"
                                  "    args:\n"
                                  "      scoringStrategy:\n"
                                  "        type: Cheapest\n");
  const auto bad = simulate({"-f", cluster, "--config", config, "-q"});
  EXPECT_EQ(bad.exitCode, 1);
  EXPECT_THAT(bad.err, HasSubstr("invalid configuration in " + config));
  EXPECT_THAT(bad.err, HasSubstr("profiles[0].pluginConfig[0].args.scoringStrategy.type"));
  EXPECT_TRUE(bad.out.empty()) << bad.out;
}

// --compare-feature-gates runs the same files again in the same process with another gate set:
// pods that ask for 3 cpus at the pod level (their container asks for nothing) fit one per
// 4-cpu node; with PodLevelResources off only the containers' requests count, and all fit.
TEST_F(SimulateFiles, CompareFeatureGatesRunsAgainWithTheOtherGatesAndShowsWhatDiffers) {
  const std::string cluster = file("cluster.yaml", node("n1", "4") + "---\n" + node("n2", "4"));
  std::string pods;
  for (const char* name : {"a", "b", "c"}) {
    pods += std::string(pods.empty() ? "" : "---\n") +
            "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + name +
            "\n  namespace: shop\nspec:\n  resources:\n    requests:\n      cpu: \"3\"\n"
            "  containers:\n  - name: c\n    image: app\n";
  }
  const std::string work = file("pods.yaml", pods);
  const auto r = simulate({"-f", cluster, "--pods", work, "-o", "json", "-q",
                           "--compare-feature-gates", "PodLevelResources=false"});
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("stats").at("scheduled"), 2) << r.out;
  EXPECT_EQ(j.at("comparison").at("config"), "--feature-gates PodLevelResources=false");
  EXPECT_EQ(j.at("comparison").at("result").at("stats").at("scheduled"), 3) << r.out;
  bool cMoved = false;  // unschedulable here, placed there
  for (const auto& m : j.at("comparison").at("moved")) {
    cMoved =
        cMoved || (m.at("name") == "c" && m.at("node").is_null() && m.at("otherNode").is_string());
  }
  EXPECT_TRUE(cMoved) << r.out;

  const auto table = simulate(
      {"-f", cluster, "--pods", work, "-q", "--compare-feature-gates", "PodLevelResources=false"});
  ASSERT_EQ(table.exitCode, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("With --feature-gates PodLevelResources=false:\n"
                                   "  scheduled 3 of 3 pods"));

  const auto bogus = simulate({"-f", cluster, "--compare-feature-gates", "Bogus=true"});
  EXPECT_EQ(bogus.exitCode, 1);
  EXPECT_THAT(bogus.err, HasSubstr("invalid argument \"Bogus=true\" for "
                                   "\"--compare-feature-gates\" flag: unrecognized feature gate: "
                                   "Bogus"));
  const auto both = simulate({"-f", cluster, "--compare-config", cluster, "--compare-feature-gates",
                              "PodLevelResources=false"});
  EXPECT_EQ(both.exitCode, 1);
  EXPECT_THAT(both.err, HasSubstr("--compare-feature-gates: one comparison at a time"));
}

}  // namespace
}  // namespace ksched::testing
