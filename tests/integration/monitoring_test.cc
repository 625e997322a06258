// deploy/monitoring with the real thing: Debian's Prometheus scrapes ksched (run with
// deploy/manifests' config and RBAC) over HTTPS with a ServiceAccount token that
// ksched-metrics-reader grants, and is refused without one; after a short workload every query of
// the Grafana dashboard returns data and every rule of ksched-rules.yaml evaluates. The Prometheus
// Operator component carries the same rules and passes the apiserver's validation of upstream's
// CRDs.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "config/yaml_json.h"
#include "daemon.h"
#include "deploy.h"
#include "prometheus.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kMonitoring = std::string(KSCHED_SOURCE_DIR) + "/deploy/monitoring";
const std::string kNs = "monitoring-test";

// The dashboard's PromQL with its variables as Grafana fills them for job "ksched", all
// instances and a rate interval of 1m (four scrapes of 15 s; the test scrapes every second).
std::string filled(std::string expr) {
  for (const auto& [var, value] : std::vector<std::pair<std::string, std::string>>{
           {"$__rate_interval", "1m"}, {"$job", "ksched"}, {"$instance", ".*"}}) {
    for (size_t at = expr.find(var); at != std::string::npos; at = expr.find(var, at)) {
      expr.replace(at, var.size(), value);
    }
  }
  return expr;
}

struct Query {
  std::string panel;
  std::string expr;
};

std::vector<Query> dashboardQueries(const json& dashboard) {
  std::vector<Query> out;
  for (const auto& p : dashboard["panels"]) {
    for (const auto& t : p.value("targets", json::array())) {
      out.push_back({p["title"].get<std::string>(), filled(t["expr"].get<std::string>())});
    }
  }
  return out;
}

// Whether `result` (an instant vector) has a sample whose value is a number.
bool hasNumber(const json& result) {
  for (const auto& s : result) {
    const std::string v = s["value"][1].get<std::string>();
    if (v != "NaN" && v != "+Inf" && v != "-Inf") return true;
  }
  return false;
}

std::string writeToken(const std::string& sa) {
  const std::string path = TestCluster::get().dir() + "/monitoring-" + sa + ".token";
  std::ofstream(path) << serviceAccountToken(kNs, sa);
  return path;
}

// Nodes, pods that bind (identical ones, so batching has work), one that fits nowhere, and a
// high-priority pod that must evict low-priority ones (3 of 4 CPUs are taken; at most 1 is free on
// either node). A first pod creates the series that appear with the first observation, so that
// Prometheus sees the later ones as increases.
void runWorkload(RestClient& admin) {
  deleteAllNodes(admin);
  ensurePriorityClass(admin, "monitoring-low", 10);
  ensurePriorityClass(admin, "monitoring-high", 1000);
  for (int i = 0; i < 2; ++i) {
    admin.post("/api/v1/nodes", sizedNode("mon-" + std::to_string(i), "2", "8Gi"));
  }
  auto pod = [&](const std::string& name, const std::string& cpu, const std::string& pc) {
    auto p = sizedPod(kNs, name, cpu);
    p["spec"]["schedulerName"] = "ksched";
    p["spec"]["priorityClassName"] = pc;
    p["spec"]["terminationGracePeriodSeconds"] = 0;
    admin.post("/api/v1/namespaces/" + kNs + "/pods", p);
  };
  pod("first", "150m", "monitoring-low");
  ASSERT_EQ(waitAllBound(admin, kNs, 1, 60s), 1u);
  std::this_thread::sleep_for(3s);  // three scrapes
  for (int i = 1; i < 20; ++i) pod("low-" + std::to_string(i), "150m", "monitoring-low");
  ASSERT_EQ(waitAllBound(admin, kNs, 20, 60s), 20u);
  pod("too-big", "3", "monitoring-low");
  pod("urgent", "1500m", "monitoring-high");
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& p : listPods(admin, kNs)) {
          if (p.metadata.name == "urgent") return !p.spec.nodeName.empty();
        }
        return false;
      },
      60s));
}

TEST(MonitoringIntegration, PrometheusScrapesWithTheManifestsRbacAndEveryDashboardQueryHasData) {
  auto& admin = TestCluster::get().admin();
  kubectl("apply -f " + kManifests + "/namespace.yaml -f " + kManifests + "/rbac.yaml");
  ensureNamespace(admin, kNs);
  // As docs/operations.md says: the scraper's ServiceAccount bound to ksched-metrics-reader.
  kubectl(
      "create clusterrolebinding monitoring-test-prometheus --clusterrole=ksched-metrics-reader "
      "--serviceaccount=" +
      kNs + ":prometheus");
  const std::string granted = writeToken("prometheus");
  const std::string unbound = writeToken("someone-else");

  const std::string config = configAsServiceAccount("ksched-config.yaml", "monitoring-config.yaml");
  ASSERT_FALSE(config.empty());
  const int port = freeLoopbackPort();
  Daemon ksched(logPath("monitoring-ksched"), {"--config", config, "--bind-address=127.0.0.1",
                                               "--secure-port=" + std::to_string(port)});
  ASSERT_TRUE(ksched.waitForLog("synced:", 60s)) << ksched.log();

  const std::string target = "127.0.0.1:" + std::to_string(port);
  auto job = [&](const std::string& name, const std::string& tokenFile) {
    std::string j = "  - job_name: " + name +
                    "\n    scheme: https\n    tls_config: {insecure_skip_verify: true}\n";
    if (!tokenFile.empty()) j += "    authorization: {credentials_file: " + tokenFile + "}\n";
    return j + "    static_configs: [{targets: [\"" + target + "\"]}]\n";
  };
  PrometheusServer prom("monitoring-prometheus",
                        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
                        "rule_files: [" +
                            kMonitoring +
                            "/ksched-rules.yaml]\n"
                            "scrape_configs:\n" +
                            job("ksched", granted) + job("ksched-anonymous", "") +
                            job("ksched-unbound", unbound));
  ASSERT_TRUE(prom.ready()) << prom.log();

  // The granted scraper reads /metrics; without a token, or with one ksched-metrics-reader does
  // not grant, ksched answers 403 and the target is down.
  ASSERT_TRUE(eventually(
      [&] {
        auto t = prom.targets("ksched");
        return t.size() == 1 && t[0]["health"] == "up";
      },
      30s))
      << prom.targets("ksched").dump(2);
  for (const char* refused : {"ksched-anonymous", "ksched-unbound"}) {
    ASSERT_TRUE(eventually(
        [&] {
          auto t = prom.targets(refused);
          return t.size() == 1 && t[0]["health"] == "down";
        },
        30s))
        << refused;
    EXPECT_EQ(prom.targets(refused)[0]["lastError"], "server returned HTTP status 403 Forbidden")
        << refused;
  }

  runWorkload(admin);

  // Every panel's query returns a number (histogram quantiles need observations inside the rate
  // interval: the workload provides them).
  const json dashboard = json::parse(readFile(kMonitoring + "/ksched-dashboard.json"));
  const auto queries = dashboardQueries(dashboard);
  ASSERT_GE(queries.size(), 25u);
  // Pods keep arriving while the panels are read (two a second, 1m CPU each): the sampled
  // plugin durations (10 % of cycles, as upstream) see new observations within the rate interval.
  std::atomic<bool> streaming{true};
  std::thread stream([&] {
    client::RestClient c(TestCluster::get().config("admin"));
    for (int i = 0; streaming.load(); ++i) {
      auto p = sizedPod(kNs, "stream-" + std::to_string(i), "1m");
      p["spec"]["schedulerName"] = "ksched";
      p["spec"]["priorityClassName"] = "monitoring-low";
      try {
        c.post("/api/v1/namespaces/" + kNs + "/pods", p);
      } catch (const std::exception&) {
        // the panels' check reports what is missing
      }
      std::this_thread::sleep_for(500ms);
    }
  });
  std::vector<std::string> empty;
  eventually(
      [&] {
        empty.clear();
        for (const auto& q : queries) {
          if (!hasNumber(prom.query(q.expr))) empty.push_back(q.panel + ": " + q.expr);
        }
        return empty.empty();
      },
      60s);
  streaming = false;
  stream.join();
  for (const auto& e : empty) ADD_FAILURE() << "no data for " << e;

  // The variables: job and instance values come from label_values over the attempts counter.
  auto jobs =
      prom.get("/api/v1/label/job/values", {{"match[]", "scheduler_schedule_attempts_total"}});
  EXPECT_EQ(jobs["data"], json::array({"ksched"})) << jobs.dump();
  auto instances = prom.get("/api/v1/label/instance/values",
                            {{"match[]", "scheduler_schedule_attempts_total{job=\"ksched\"}"}});
  EXPECT_EQ(instances["data"], json::array({target})) << instances.dump();

  // What the panels show is what happened: 21 pods bound, one preemption, the leader.
  auto scheduled =
      prom.query("sum(scheduler_schedule_attempts_total{job=\"ksched\",result=\"scheduled\"})");
  ASSERT_EQ(scheduled.size(), 1u);
  EXPECT_GE(std::stod(scheduled[0]["value"][1].get<std::string>()), 21);
  auto victims = prom.query("sum(scheduler_preemption_victims_count{job=\"ksched\"})");
  ASSERT_EQ(victims.size(), 1u);
  EXPECT_EQ(victims[0]["value"][1], "1") << "one preemption with victims";
  auto unschedulable =
      prom.query("sum by (plugin) (scheduler_unschedulable_pods{job=\"ksched\"}) > 0");
  ASSERT_EQ(unschedulable.size(), 1u) << unschedulable.dump();
  EXPECT_EQ(unschedulable[0]["metric"]["plugin"], "NodeResourcesFit");
  auto leader = prom.query("leader_election_master_status{job=\"ksched\"}");
  ASSERT_EQ(leader.size(), 1u);
  EXPECT_EQ(leader[0]["metric"]["name"], "ksched");
  EXPECT_EQ(leader[0]["value"][1], "1");

  // Every recording and alerting rule evaluates without error against ksched's real series.
  auto rules = prom.get("/api/v1/rules");
  ASSERT_TRUE(rules.is_object()) << prom.log();
  size_t evaluated = 0;
  for (const auto& g : rules["data"]["groups"]) {
    for (const auto& r : g["rules"]) {
      EXPECT_EQ(r["health"], "ok") << r.dump(2);
      ++evaluated;
    }
  }
  EXPECT_EQ(evaluated, 17u);
  // Nothing fires on a healthy instance (KschedUnschedulablePods waits an hour).
  auto firing = prom.query("ALERTS{alertstate=\"firing\"}");
  EXPECT_TRUE(firing.empty()) << firing.dump(2);

  kubectl("delete clusterrolebinding monitoring-test-prometheus");
  deleteAllPods(admin, kNs);
  EXPECT_EQ(ksched.signalAndWait(SIGTERM), 0) << ksched.log();
}

// The kustomize component for the Prometheus Operator: its PrometheusRule holds exactly the groups
// of ksched-rules.yaml, and the apiserver accepts its objects under upstream's CRDs.
TEST(MonitoringIntegration, PrometheusOperatorComponentCarriesTheRulesAndValidates) {
  const std::string crds = std::string(KSCHED_SOURCE_DIR) + "/tests/integration/crds/";
  const std::string applied =
      kubectl("apply -f " + crds + "monitoring.coreos.com_servicemonitors.yaml -f " + crds +
              "monitoring.coreos.com_prometheusrules.yaml");
  ASSERT_NE(applied.find("servicemonitors.monitoring.coreos.com"), std::string::npos) << applied;
  kubectl(
      "wait --for condition=established --timeout=60s "
      "crd/servicemonitors.monitoring.coreos.com crd/prometheusrules.monitoring.coreos.com");
  kubectl("apply -f " + kManifests + "/namespace.yaml");

  // An operator's kustomization: the manifests with the component on. The manifests are copied
  // beside it, so that kustomize's root holds both whatever the test directory's path is.
  const std::string overlay = TestCluster::get().dir() + "/monitoring-overlay";
  fs::remove_all(overlay);
  fs::create_directories(overlay);
  fs::copy(kManifests, overlay + "/manifests", fs::copy_options::recursive);
  std::ofstream(overlay + "/kustomization.yaml")
      << "resources:\n  - manifests\ncomponents:\n  - manifests/components/prometheus-operator\n";
  const std::string built = runCommand("kubectl kustomize " + overlay + " 2>" + overlay + "/err");
  json rule;
  int kinds = 0;
  std::vector<json> docs;
  try {
    docs = config::yamlDocumentsToJson(built);
  } catch (const std::exception& e) {
    FAIL() << "kubectl kustomize printed no YAML (" << e.what() << "):\n"
           << built << readFile(overlay + "/err");
  }
  for (const auto& doc : docs) {
    ASSERT_TRUE(doc.is_object()) << built << readFile(overlay + "/err");
    const std::string kind = doc.value("kind", "");
    if (kind == "PrometheusRule") rule = doc;
    if (kind == "PrometheusRule" || kind == "ServiceMonitor") ++kinds;
  }
  ASSERT_EQ(kinds, 2) << built;
  const json rules = config::yamlToJson(readFile(kMonitoring + "/ksched-rules.yaml"));
  EXPECT_EQ(rule["spec"]["groups"], rules["groups"])
      << "components/prometheus-operator/prometheusrule.yaml differs from ksched-rules.yaml";

  const std::string out = kubectl("apply --dry-run=server -k " + overlay);
  for (const char* want :
       {"servicemonitor.monitoring.coreos.com/ksched created (server dry run)",
        "prometheusrule.monitoring.coreos.com/ksched created (server dry run)",
        "clusterrolebinding.rbac.authorization.k8s.io/ksched-metrics-reader-prometheus created "
        "(server dry run)",
        "deployment.apps/ksched created (server dry run)"}) {
    EXPECT_NE(out.find(want), std::string::npos) << want << " not in:\n" << out;
  }
  // Without the component the manifests carry none of it (off by default).
  EXPECT_EQ(kubectl("kustomize " + kManifests).find("kind: ServiceMonitor"), std::string::npos);
}

}  // namespace
}  // namespace ksched::testing
