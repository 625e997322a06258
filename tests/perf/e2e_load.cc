// End-to-end load for a scheduler running against a real apiserver, in the style of upstream's
// scheduler_perf SchedulingBasic: create nodes, then "init" pods, then the measured pods from
// `--clients` parallel clients, and time how long until every measured pod is bound.
//
//   ksched_e2e_load --kubeconfig admin.kubeconfig --nodes 500 --init-pods 500 --pods 2000
//                   [--workload
//                   basic|anti-affinity|topology-spread|preemption|churn|unschedulable|gang|dra]
//                   [--gang-size 16 --crd deploy/manifests/podgroup-crd.yaml]   (gang)
//                   [--crd tests/integration/crds/resource.k8s.io.yaml]   (dra)
//                   [--metrics-url URL --scheduler-pid PID]   (churn)
//                   [--rate R]   (basic, topology-spread: measured pods at R per second)
//                   [--metrics-url URL [--metrics-token-file F] [--metrics-insecure]]
//                   [--mode stream|create|wait]
//
// Modes: stream (the default) creates everything while the scheduler runs; `--mode setup` only
// makes what the workload needs before any node (the dra workload's CRDs, class and slices, which
// the scheduler must find served when it starts). A backlog run is two
// calls around the scheduler's start: `--mode create` creates the nodes and every pod (init and
// measured) with no scheduler running and returns; `--mode wait`, started with the scheduler,
// times from its own start until every pod that can bind is bound (basic, topology-spread: init
// and measured pods; unschedulable: the measured pods, the 9999-CPU init pods stay pending).
//
// Latency at a fixed arrival rate (`--rate R`, streamed basic or topology-spread): the measured
// pods are created at R per second, paced from the `--clients` creating clients (pod i is due
// i/R seconds after the first); for each pod the time its create POST was sent and the time
// the first watch event showing it bound arrived (a watch on the namespace, stamped as the
// event is read) give its creation-to-bound latency. Prints p50_ms, p90_ms, p99_ms and max_ms
// of the measured pods and arrival_per_s, the rate the clients achieved.
//
// Scheduling attempts (`--metrics-url`, any streamed workload but churn): the scheduler's
// /metrics is read just before the measured phase and again once every measured pod is bound;
// from the difference of the histogram scheduler_scheduling_attempt_duration_seconds
// (result="scheduled", summed over profiles) it prints attempt_p50_ms, attempt_p90_ms and
// attempt_p99_ms, interpolated linearly inside the buckets as PromQL's histogram_quantile does.
// kube-scheduler v1.20.2 has no such histogram; its counterpart there (the same span, from the
// start of the attempt to the end of the binding) is scheduler_e2e_scheduling_duration_seconds,
// which is used when the first is missing. attempt_metric= names the one used.
// `--metrics-token-file` sends the file's bearer token; `--metrics-insecure` skips the
// verification of an HTTPS endpoint's certificate (ksched's secure port serves a self-signed one).
//
// Workloads (upstream scheduler_perf templates):
//   basic            init and measured pods request 100m / 500Mi
//   anti-affinity    both phases use pod-with-pod-anti-affinity (color=green, required
//                    anti-affinity on kubernetes.io/hostname)
//   topology-spread  basic init pods; measured pods carry a zone spread constraint (maxSkew 5,
//                    DoNotSchedule, color=blue)
//   preemption       init pods are low priority 900m; measured pods 3000m of PriorityClass
//                    value 10 (created here), each evicting three init pods
//   churn            init pods 2000m fill the nodes (2 per node); the measured pods (2000m)
//                    stay pending. Then 60 s of kubelet-style status updates of the init pods
//                    at 50/s: the scheduler's attempts (from its /metrics) and CPU seconds
//                    (from /proc/PID/stat) in that window; then 200 init pods are deleted and
//                    the time until 200 pending pods are bound is measured.
//   unschedulable    init pods request 9999 CPUs and stay pending (upstream's Unschedulable:
//                    the scheduler keeps them queued while it places the measured basic pods)
//   gang             basic pods in groups of --gang-size (the PodGroup CRD is installed from
//                    --crd; one PodGroup per group, minMember = the group's size, created
//                    before its pods); also prints, per group, the time from its last pod
//                    created to its last pod bound (p50/p99).
//   dra              DRA-backed extended resources (KEP 5004): the resource.k8s.io CRDs
//                    installed from --crd, a DeviceClass serving example.com/gpu, one
//                    ResourceSlice of 8 devices per node; every pod (init and measured) asks for
//                    one example.com/gpu, so the scheduler allocates a device and creates,
//                    allocates and reserves a claim per pod before binding it.
//
// Prints one line of key=value figures. The scheduler under test is started by the caller
// (tests/perf/e2e.sh), which also measures its CPU and memory.
#include <httplib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/config.h"
#include "client/rest_client.h"
#include "config/yaml_json.h"
#include "tests/perf/flags.h"

namespace {

using namespace ksched;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string kubeconfig;
  int nodes = 500;
  int initPods = 500;
  int pods = 2000;
  int clients = 16;
  std::string ns = "perf";
  std::string schedulerName = "default-scheduler";
  std::string workload = "basic";
  int timeoutSeconds = 600;
  std::string metricsUrl;  // churn, attempts: the scheduler's /metrics
  std::string metricsTokenFile;
  bool metricsInsecure = false;
  int schedulerPid = 0;  // churn: for its CPU time
  double rate = 0;       // measured pods per second; 0 = as fast as the clients go
  int gangSize = 16;     // gang
  std::string crd;       // gang: the PodGroup CRD manifest
  std::string mode = "stream";
};

nlohmann::json node(int i) {
  std::string name = "perf-node-" + std::to_string(i);
  nlohmann::json res = {{"cpu", "4"}, {"memory", "32Gi"}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"topology.kubernetes.io/zone", "zone-" + std::to_string(i % 3)}}}}},
          {"status", {{"capacity", res}, {"allocatable", res}}}};
}

nlohmann::json basicPod(const Args& a, const std::string& name) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", a.ns}}},
          {"spec",
           {{"schedulerName", a.schedulerName},
            {"terminationGracePeriodSeconds", 0},
            {"containers",
             {{{"name", "pause"},
               {"image", "registry.k8s.io/pause:3.9"},
               {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "500Mi"}}}}}}}}}}};
}

// A pod of the workload; `measured` selects the second phase's template.
nlohmann::json pod(const Args& a, const std::string& name, bool measured) {
  nlohmann::json p = basicPod(a, name);
  auto& requests = p["spec"]["containers"][0]["resources"]["requests"];
  if (a.workload == "anti-affinity") {
    p["metadata"]["labels"] = {{"color", "green"}, {"name", "test"}};
    p["spec"]["affinity"] = {{"podAntiAffinity",
                              {{"requiredDuringSchedulingIgnoredDuringExecution",
                                {{{"labelSelector", {{"matchLabels", {{"color", "green"}}}}},
                                  {"topologyKey", "kubernetes.io/hostname"}}}}}}};
  } else if (a.workload == "topology-spread" && measured) {
    p["metadata"]["labels"] = {{"color", "blue"}};
    p["spec"]["topologySpreadConstraints"] = {
        {{"maxSkew", 5},
         {"topologyKey", "topology.kubernetes.io/zone"},
         {"whenUnsatisfiable", "DoNotSchedule"},
         {"labelSelector", {{"matchLabels", {{"color", "blue"}}}}}}};
  } else if (a.workload == "preemption") {
    requests = {{"cpu", measured ? "3000m" : "900m"}, {"memory", "500Mi"}};
    if (measured) p["spec"]["priorityClassName"] = "perf-high";
  } else if (a.workload == "churn") {
    requests = {{"cpu", "2000m"}, {"memory", "500Mi"}};
  } else if (a.workload == "unschedulable" && !measured) {
    requests = {{"cpu", "9999"}, {"memory", "500Mi"}};  // fits no node
  } else if (a.workload == "dra") {
    auto& resources = p["spec"]["containers"][0]["resources"];
    resources["requests"]["example.com/gpu"] = "1";
    resources["limits"] = {{"example.com/gpu", "1"}};
  } else if (a.workload == "gang" && measured) {
    const int i = std::stoi(name.substr(name.rfind('-') + 1));
    p["metadata"]["labels"] = {
        {"scheduling.x-k8s.io/pod-group", "g-" + std::to_string(i / a.gangSize)}};
  }
  return p;
}

void parallel(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::jthread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  }
}

int countBound(client::RestClient& c, const std::string& ns) {
  int bound = 0;
  for (const auto& p : c.list("/api/v1/namespaces/" + ns + "/pods", {.limit = 1000}).items) {
    if (!p["spec"].value("nodeName", "").empty()) ++bound;
  }
  return bound;
}

// The body of a GET of the scheduler's /metrics; nullopt if it could not be read.
std::optional<std::string> scrape(const Args& a) {
  const std::string& url = a.metricsUrl;
  const auto schemeEnd = url.find("://");
  if (schemeEnd == std::string::npos) return std::nullopt;
  auto pathStart = url.find('/', schemeEnd + 3);
  if (pathStart == std::string::npos) pathStart = url.size();
  httplib::Client cli(url.substr(0, pathStart));
  cli.enable_server_certificate_verification(!a.metricsInsecure);
  httplib::Headers headers;
  if (!a.metricsTokenFile.empty()) {
    std::ifstream f(a.metricsTokenFile);
    std::string token;
    std::getline(f, token);
    headers.emplace("Authorization", "Bearer " + token);
  }
  auto res = cli.Get(pathStart < url.size() ? url.substr(pathStart) : "/", headers);
  if (!res || res->status != 200) return std::nullopt;
  return res->body;
}

// Sum of every scheduler_schedule_attempts_total sample of a scrape (-1 if unreachable).
double scheduleAttempts(const Args& a) {
  auto body = scrape(a);
  if (!body) return -1;
  std::istringstream in(*body);
  double sum = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("scheduler_schedule_attempts_total{", 0) != 0) continue;
    sum += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return sum;
}

double cpuSeconds(int pid) {
  std::ifstream f("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::istringstream in(stat.substr(stat.rfind(')') + 2));
  std::vector<std::string> fields{std::istream_iterator<std::string>(in), {}};
  // utime and stime are fields 14 and 15; fields[0] is field 3.
  return (std::stod(fields.at(11)) + std::stod(fields.at(12))) /
         static_cast<double>(sysconf(_SC_CLK_TCK));
}

// A cumulative histogram: upper bound -> observations at or below it (+Inf included).
using Buckets = std::map<double, double>;

// The labels of a sample line (name{a="x",b="y"} 12), as name -> value.
std::map<std::string, std::string> sampleLabels(std::string_view line) {
  std::map<std::string, std::string> labels;
  const auto open = line.find('{');
  const auto close = line.rfind('}');
  if (open == std::string_view::npos || close == std::string_view::npos) return labels;
  std::string_view rest = line.substr(open + 1, close - open - 1);
  while (!rest.empty()) {
    const auto eq = rest.find("=\"");
    if (eq == std::string_view::npos) break;
    std::string key(rest.substr(0, eq));
    key.erase(0, key.find_first_not_of(", "));
    std::string value;
    size_t i = eq + 2;
    for (; i < rest.size() && rest[i] != '"'; ++i) {
      if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
      value += rest[i];
    }
    labels[key] = value;
    rest.remove_prefix(std::min(rest.size(), i + 1));
  }
  return labels;
}

// The buckets of histogram `name` in a scrape, result="scheduled", summed over the other labels
// (profiles). Empty when the scrape has no such series.
Buckets scheduledBuckets(const std::string& text, const std::string& name) {
  Buckets b;
  std::istringstream in(text);
  const std::string prefix = name + "_bucket{";
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(prefix, 0) != 0) continue;
    auto labels = sampleLabels(line);
    if (labels["result"] != "scheduled" || !labels.contains("le")) continue;
    const double le =
        labels["le"] == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(labels["le"]);
    b[le] += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return b;
}

// PromQL's histogram_quantile over cumulative buckets: the bucket holding rank q × count, with
// linear interpolation inside it (from 0 for the first bucket); the last finite bound when the
// rank falls in +Inf. NaN without observations.
double histogramQuantile(double q, const Buckets& b) {
  if (b.size() < 2 || !std::isinf(b.rbegin()->first)) return std::nan("");
  std::vector<std::pair<double, double>> v(b.begin(), b.end());
  for (size_t i = 1; i < v.size(); ++i) v[i].second = std::max(v[i].second, v[i - 1].second);
  const double total = v.back().second;
  if (total <= 0) return std::nan("");
  const double rank = q * total;
  size_t i = 0;
  while (i < v.size() && v[i].second < rank) ++i;
  if (i >= v.size() - 1) return v[v.size() - 2].first;
  if (i == 0 && v[0].first <= 0) return v[0].first;
  const double start = i == 0 ? 0 : v[i - 1].first;
  const double below = i == 0 ? 0 : v[i - 1].second;
  const double inBucket = v[i].second - below;
  if (inBucket <= 0) return v[i].first;
  return start + (v[i].first - start) * ((rank - below) / inBucket);
}

constexpr const char* kAttemptMetric = "scheduler_scheduling_attempt_duration_seconds";
// kube-scheduler v1.20.2's histogram of the same span (attempt start to binding end).
constexpr const char* kAttemptMetricV120 = "scheduler_e2e_scheduling_duration_seconds";

// Which of the two attempt histograms a scrape carries ("" for neither).
std::string attemptMetricIn(const std::string& text) {
  if (text.find(std::string(kAttemptMetric) + "_bucket{") != std::string::npos)
    return kAttemptMetric;
  if (text.find(std::string(kAttemptMetricV120) + "_bucket{") != std::string::npos)
    return kAttemptMetricV120;
  return "";
}

// Nearest-rank percentile of sorted values.
double percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(sorted.size())));
  return sorted[std::min(sorted.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The churn workload's second phase (see the top of the file).
int churn(client::RestClient& c, const Args& a) {
  // Let the scheduler try every pending pod once.
  double before = scheduleAttempts(a);
  if (before < 0) {
    std::fprintf(stderr, "cannot read %s\n", a.metricsUrl.c_str());
    return 1;
  }
  for (int i = 0; i < 600; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    const double now = scheduleAttempts(a);
    if (now >= a.initPods + a.pods && now == before) break;
    before = now;
  }
  const double attempts0 = scheduleAttempts(a);
  const double cpu0 = cpuSeconds(a.schedulerPid);
  const auto start = Clock::now();
  constexpr int kSeconds = 60;
  constexpr int kPerSecond = 50;
  for (int i = 0; i < kSeconds * kPerSecond; ++i) {
    std::this_thread::sleep_until(start + std::chrono::milliseconds(1000 * i / kPerSecond));
    const std::string name = "init-" + std::to_string(i % std::min(a.initPods, 1000));
    nlohmann::json status = {
        {"status",
         {{"phase", "Running"},
          {"podIP", "10.2." + std::to_string((i / 250) % 250) + "." + std::to_string(i % 250)},
          {"conditions", {{{"type", "Ready"}, {"status", i % 2 ? "True" : "False"}}}}}}};
    c.patch("/api/v1/namespaces/" + a.ns + "/pods/" + name + "/status", status,
            "application/strategic-merge-patch+json");
  }
  const double churnAttempts = scheduleAttempts(a) - attempts0;
  const double churnCpu = cpuSeconds(a.schedulerPid) - cpu0;

  constexpr int kFreed = 200;
  const int boundBefore = countBound(c, a.ns);
  const auto t0 = Clock::now();
  parallel(kFreed, a.clients, [&](int i) {
    c.del("/api/v1/namespaces/" + a.ns + "/pods/init-" + std::to_string(i),
          {{"gracePeriodSeconds", 0}});
  });
  // 200 init pods gone, 200 pending pods in their place: back to the same count.
  const auto deadline = t0 + std::chrono::seconds(a.timeoutSeconds);
  int bound = 0;
  while ((bound = countBound(c, a.ns)) < boundBefore && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const double refill = std::chrono::duration<double>(Clock::now() - t0).count();
  std::printf(
      "workload=churn nodes=%d init_pods=%d pods=%d churn_updates=%d churn_attempts=%.0f "
      "churn_cpu_s=%.2f freed=%d refill_s=%.2f bound=%d\n",
      a.nodes, a.initPods, a.pods, kSeconds * kPerSecond, churnAttempts, churnCpu, kFreed, refill,
      bound);
  return bound >= boundBefore ? 0 : 1;
}

// Backlog: every pod exists and the scheduler has just been started; the time until all of them
// that can bind (init + measured; unschedulable: the measured pods) are bound.
int waitForBacklog(client::RestClient& c, const Args& a) {
  const int total = a.workload == "unschedulable" ? a.pods : a.initPods + a.pods;
  const auto t0 = Clock::now();
  const auto deadline = t0 + std::chrono::seconds(a.timeoutSeconds);
  const std::string path = "/api/v1/namespaces/" + a.ns + "/pods";
  std::set<std::string> bound;
  std::string from;
  double first = -1;  // the first binding seen (the scheduler is up and scheduling)
  double last = 0;
  while (static_cast<int>(bound.size()) < total && Clock::now() < deadline) {
    if (from.empty()) {  // a LIST: what is bound already, and where to watch from
      auto list = c.list(path, {.limit = 1000});
      for (const auto& p : list.items) {
        if (!p["spec"].value("nodeName", "").empty()) bound.insert(p["metadata"].value("name", ""));
      }
      from = list.resourceVersion;
      last = std::chrono::duration<double>(Clock::now() - t0).count();
      continue;
    }
    try {
      c.watch(path, {.resourceVersion = from, .timeoutSeconds = 60}, [&](client::WatchEvent&& ev) {
        from = ev.object["metadata"].value("resourceVersion", from);
        if (ev.type == client::WatchEventType::kBookmark) return true;
        if (!ev.object["spec"].value("nodeName", "").empty() &&
            bound.insert(ev.object["metadata"].value("name", "")).second) {
          last = std::chrono::duration<double>(Clock::now() - t0).count();
          if (first < 0) first = last;
        }
        return static_cast<int>(bound.size()) < total;
      });
    } catch (const client::ApiError& e) {
      std::fprintf(stderr, "watch: %s\n", e.what());
      from.clear();
    }
  }
  // pods/s from the first binding to the last: the rate the scheduler sustains, its start-up
  // (informers listing, the first cycle) apart; first_bound_s is that start-up.
  const double span = first >= 0 ? last - first : 0;
  std::printf(
      "workload=%s-backlog nodes=%d init_pods=%d pods=%d bound=%zu seconds=%.2f "
      "first_bound_s=%.2f pods_per_s_from_start=%.1f pods_per_s=%.1f\n",
      a.workload.c_str(), a.nodes, a.initPods, a.pods, bound.size(), last, first,
      last > 0 ? static_cast<double>(bound.size()) / last : 0.0,
      span > 0 ? static_cast<double>(bound.size() - 1) / span : 0.0);
  return static_cast<int>(bound.size()) == total ? 0 : 1;
}

constexpr const char* kUsage = R"(usage: ksched_e2e_load --kubeconfig FILE [flags]

Creates nodes and pods on the apiserver of FILE and times until the measured pods are bound by
the scheduler the caller runs (tests/perf/e2e.sh). Prints one line of key=value figures.

  --nodes N            nodes to create (500)
  --init-pods N        pods created and bound before the measured ones (500)
  --pods N             measured pods (2000)
  --clients N          parallel creating clients (16)
  --namespace NS       namespace of the pods (perf)
  --scheduler-name S   the pods' spec.schedulerName (default-scheduler)
  --workload W         basic, anti-affinity, topology-spread, preemption, churn, unschedulable
                       or gang (basic)
  --mode M             stream: create while the scheduler runs; create: create everything and
                       return; wait: time until every pod that can bind is bound (stream);
                       create and wait take basic, unschedulable and topology-spread
  --rate R             stream, basic or topology-spread: create the measured pods at R per
                       second and print creation-to-bound p50/p90/p99 (0: as fast as possible)
  --timeout S          give up after S seconds (600)
  --metrics-url URL    the scheduler's /metrics: churn's attempts; other streamed workloads:
                       attempt p50/p90/p99 of the measured phase from its histogram
  --metrics-token-file F  bearer token for --metrics-url
  --metrics-insecure   do not verify --metrics-url's HTTPS certificate
  --scheduler-pid PID  churn: the scheduler's process, for its CPU time
  --gang-size N        gang: pods per PodGroup (16)
  --crd FILE           gang: the PodGroup CRD manifest; dra: the resource.k8s.io CRDs
)";

}  // namespace

int main(int argc, char** argv) {
  Args a;
  const bool ok = perf::parseFlags(argc, argv, kUsage, {"--metrics-insecure"},
                                   [&](const std::string& k, const std::string& v) {
                                     if (k == "--metrics-insecure")
                                       a.metricsInsecure = true;
                                     else if (k == "--kubeconfig")
                                       a.kubeconfig = v;
                                     else if (k == "--nodes")
                                       a.nodes = std::stoi(v);
                                     else if (k == "--init-pods")
                                       a.initPods = std::stoi(v);
                                     else if (k == "--pods")
                                       a.pods = std::stoi(v);
                                     else if (k == "--clients")
                                       a.clients = std::stoi(v);
                                     else if (k == "--namespace")
                                       a.ns = v;
                                     else if (k == "--scheduler-name")
                                       a.schedulerName = v;
                                     else if (k == "--workload")
                                       a.workload = v;
                                     else if (k == "--timeout")
                                       a.timeoutSeconds = std::stoi(v);
                                     else if (k == "--metrics-url")
                                       a.metricsUrl = v;
                                     else if (k == "--metrics-token-file")
                                       a.metricsTokenFile = v;
                                     else if (k == "--rate")
                                       a.rate = std::stod(v);
                                     else if (k == "--scheduler-pid")
                                       a.schedulerPid = std::stoi(v);
                                     else if (k == "--gang-size")
                                       a.gangSize = std::stoi(v);
                                     else if (k == "--crd")
                                       a.crd = v;
                                     else if (k == "--mode")
                                       a.mode = v;
                                     else
                                       return false;
                                     return true;
                                   });
  if (!ok) return 2;
  client::Config cfg = client::loadKubeconfig(a.kubeconfig);
  cfg.qps = 100000;
  cfg.burst = 100000;
  client::RestClient c(cfg);
  if (a.mode != "stream" && a.mode != "create" && a.mode != "setup" && a.mode != "wait") {
    std::fprintf(stderr, "unknown mode %s\n", a.mode.c_str());
    return 2;
  }
  if ((a.mode == "create" || a.mode == "wait") && a.workload != "basic" &&
      a.workload != "unschedulable" && a.workload != "topology-spread") {
    std::fprintf(stderr, "--mode %s: basic, unschedulable or topology-spread\n", a.mode.c_str());
    return 2;
  }
  if (a.rate > 0 &&
      (a.mode != "stream" || (a.workload != "basic" && a.workload != "topology-spread"))) {
    std::fprintf(stderr, "--rate: streamed basic or topology-spread only\n");
    return 2;
  }
  if (a.mode == "wait") return waitForBacklog(c, a);
  try {
    c.post("/api/v1/namespaces", {{"metadata", {{"name", a.ns}}}});
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
  if (a.workload == "preemption") {
    try {
      c.post("/apis/scheduling.k8s.io/v1/priorityclasses",
             {{"metadata", {{"name", "perf-high"}}}, {"value", 10}});
    } catch (const client::ApiError& e) {
      if (!e.isConflict()) throw;
    }
  } else if (a.workload == "churn") {
    if (a.metricsUrl.empty() || a.schedulerPid == 0) {
      std::fprintf(stderr, "churn needs --metrics-url and --scheduler-pid\n");
      return 2;
    }
  } else if (a.workload == "gang") {
    std::ifstream f(a.crd);
    std::stringstream text;
    text << f.rdbuf();
    try {
      c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
             config::yamlToJson(text.str()));
    } catch (const client::ApiError& e) {
      if (!e.isConflict()) throw;
    }
    for (int tries = 0;; ++tries) {
      try {
        c.get("/apis/scheduling.x-k8s.io/v1alpha1/podgroups");
        break;
      } catch (const client::ApiError&) {
        if (tries > 100) return std::fprintf(stderr, "PodGroup CRD not served\n"), 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
  } else if (a.workload == "dra") {
    std::ifstream f(a.crd);
    std::stringstream text;
    text << f.rdbuf();
    for (const auto& crd : config::yamlDocumentsToJson(text.str())) {
      try {
        c.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
      } catch (const client::ApiError& e) {
        if (!e.isConflict()) throw;
      }
    }
    for (int tries = 0;; ++tries) {
      try {
        c.get("/apis/resource.k8s.io/v1/resourceslices");
        c.get("/apis/resource.k8s.io/v1/deviceclasses");
        c.get("/apis/resource.k8s.io/v1/resourceclaims");
        break;
      } catch (const client::ApiError&) {
        if (tries > 100) return std::fprintf(stderr, "resource.k8s.io CRDs not served\n"), 1;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
    // Idempotent: `--mode setup` may have made them before the scheduler started.
    auto created = [&](const std::string& path, const nlohmann::json& obj) {
      try {
        c.post(path, obj);
      } catch (const client::ApiError& e) {
        if (!e.isConflict()) throw;
      }
    };
    created("/apis/resource.k8s.io/v1/deviceclasses",
            {{"apiVersion", "resource.k8s.io/v1"},
             {"kind", "DeviceClass"},
             {"metadata", {{"name", "gpu.example.com"}}},
             {"spec",
              {{"selectors", {{{"cel", {{"expression", "device.driver == \"gpu.example.com\""}}}}}},
               {"extendedResourceName", "example.com/gpu"}}}});
    parallel(a.nodes, a.clients, [&](int i) {
      const std::string name = "perf-node-" + std::to_string(i);
      nlohmann::json devices = nlohmann::json::array();
      for (int d = 0; d < 8; ++d) devices.push_back({{"name", "gpu-" + std::to_string(d)}});
      created("/apis/resource.k8s.io/v1/resourceslices",
              {{"apiVersion", "resource.k8s.io/v1"},
               {"kind", "ResourceSlice"},
               {"metadata", {{"name", name + "-gpus"}}},
               {"spec",
                {{"driver", "gpu.example.com"},
                 {"nodeName", name},
                 {"pool", {{"name", name}, {"generation", 1}, {"resourceSliceCount", 1}}},
                 {"devices", devices}}}});
    });
  } else if (a.workload != "basic" && a.workload != "anti-affinity" &&
             a.workload != "topology-spread" && a.workload != "unschedulable") {
    std::fprintf(stderr, "unknown workload %s\n", a.workload.c_str());
    return 2;
  }
  if (a.mode == "setup") return std::printf("setup done\n"), 0;
  parallel(a.nodes, a.clients, [&](int i) { c.post("/api/v1/nodes", node(i)); });
  parallel(a.initPods, a.clients, [&](int i) {
    c.post("/api/v1/namespaces/" + a.ns + "/pods", pod(a, "init-" + std::to_string(i), false));
  });
  if (a.mode == "create") {
    parallel(a.pods, a.clients, [&](int i) {
      c.post("/api/v1/namespaces/" + a.ns + "/pods", pod(a, "m-" + std::to_string(i), true));
    });
    std::printf("created nodes=%d pods=%d\n", a.nodes, a.initPods + a.pods);
    return 0;
  }
  auto deadline = Clock::now() + std::chrono::seconds(a.timeoutSeconds);
  while (a.workload != "unschedulable" && countBound(c, a.ns) < a.initPods) {
    if (Clock::now() > deadline) return std::fprintf(stderr, "init pods not bound\n"), 1;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  std::printf("phase=measure\n");
  std::fflush(stdout);
  if (a.workload == "churn") {
    parallel(a.pods, a.clients, [&](int i) {
      c.post("/api/v1/namespaces/" + a.ns + "/pods", pod(a, "m-" + std::to_string(i), true));
    });
    return churn(c, a);
  }

  const int groups = a.workload == "gang" ? (a.pods + a.gangSize - 1) / a.gangSize : 0;
  for (int g = 0; g < groups; ++g) {
    const int size = std::min(a.gangSize, a.pods - g * a.gangSize);
    c.post("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" + a.ns + "/podgroups",
           {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
            {"kind", "PodGroup"},
            {"metadata", {{"name", "g-" + std::to_string(g)}}},
            {"spec", {{"minMember", size}}}});
  }
  // Per group: when its last pod was created and its last pod bound (ns since t0).
  std::vector<std::atomic<int64_t>> groupCreated(static_cast<size_t>(groups));
  std::vector<std::atomic<int64_t>> groupBound(static_cast<size_t>(groups));
  // Per measured pod: when its create was sent and when it was seen bound (ns since t0; -1 not
  // yet).
  std::vector<std::atomic<int64_t>> sentNs(static_cast<size_t>(a.pods));
  std::vector<std::atomic<int64_t>> boundNs(static_cast<size_t>(a.pods));
  for (auto& v : boundNs) v = -1;

  // The scheduler's attempt histogram before the measured phase.
  std::string metricsBefore, attemptMetric;
  if (!a.metricsUrl.empty()) {
    auto body = scrape(a);
    if (!body) return std::fprintf(stderr, "cannot read %s\n", a.metricsUrl.c_str()), 1;
    metricsBefore = std::move(*body);
    attemptMetric = attemptMetricIn(metricsBefore);
  }

  // Watch for bindings while the measured pods are created.
  auto rv = c.list("/api/v1/namespaces/" + a.ns + "/pods", {.limit = 1}).resourceVersion;
  std::atomic<int> bound{0};
  std::atomic<int64_t> lastBoundNs{0};
  std::stop_source stop;
  const auto t0 = Clock::now();
  std::jthread watcher([&] {
    std::string from = rv;
    std::set<std::string> seen;
    while (!stop.stop_requested() && bound.load() < a.pods) {
      try {
        c.watch(
            "/api/v1/namespaces/" + a.ns + "/pods", {.resourceVersion = from, .timeoutSeconds = 60},
            [&](client::WatchEvent&& ev) {
              from = ev.object["metadata"].value("resourceVersion", from);
              const std::string name = ev.object["metadata"].value("name", "");
              if (name.rfind("m-", 0) == 0 && !ev.object["spec"].value("nodeName", "").empty() &&
                  seen.insert(name).second) {
                lastBoundNs =
                    std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
                const int i = std::stoi(name.substr(2));
                if (i >= 0 && i < a.pods) boundNs[static_cast<size_t>(i)] = lastBoundNs.load();
                if (groups > 0) {
                  const int g = std::stoi(name.substr(2)) / a.gangSize;
                  groupBound[static_cast<size_t>(g)] = lastBoundNs.load();
                }
                if (bound.fetch_add(1) + 1 >= a.pods) return false;
              }
              return true;
            },
            stop.get_token());
      } catch (const client::ApiError& e) {
        std::fprintf(stderr, "watch: %s\n", e.what());
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    }
  });
  parallel(a.pods, a.clients, [&](int i) {
    if (a.rate > 0) {  // pod i is due i/R seconds after the first
      std::this_thread::sleep_until(
          t0 + std::chrono::nanoseconds(static_cast<int64_t>(1e9 * i / a.rate)));
    }
    const nlohmann::json body = pod(a, "m-" + std::to_string(i), true);
    sentNs[static_cast<size_t>(i)] =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
    c.post("/api/v1/namespaces/" + a.ns + "/pods", body);
    if (groups > 0) {
      auto& created = groupCreated[static_cast<size_t>(i / a.gangSize)];
      const int64_t now =
          std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t0).count();
      for (int64_t cur = created.load(); now > cur && !created.compare_exchange_weak(cur, now);) {
      }
    }
  });
  const double createSeconds = std::chrono::duration<double>(Clock::now() - t0).count();
  while (bound.load() < a.pods && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  stop.request_stop();
  watcher.join();
  const double seconds = static_cast<double>(lastBoundNs.load()) / 1e9;
  if (a.rate > 0) {
    std::vector<double> lat;
    int64_t firstSent = INT64_MAX, lastSent = 0;
    for (int i = 0; i < a.pods; ++i) {
      const int64_t sent = sentNs[static_cast<size_t>(i)].load();
      const int64_t b = boundNs[static_cast<size_t>(i)].load();
      firstSent = std::min(firstSent, sent);
      lastSent = std::max(lastSent, sent);
      if (b >= 0) lat.push_back(static_cast<double>(b - sent) / 1e6);
    }
    std::sort(lat.begin(), lat.end());
    const double arrival = a.pods > 1 && lastSent > firstSent
                               ? (a.pods - 1) / (static_cast<double>(lastSent - firstSent) / 1e9)
                               : a.rate;
    std::printf("rate=%.0f arrival_per_s=%.1f p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f max_ms=%.1f ",
                a.rate, arrival, percentile(lat, 0.5), percentile(lat, 0.9), percentile(lat, 0.99),
                lat.empty() ? 0.0 : lat.back());
  }
  if (!a.metricsUrl.empty()) {
    // Attempts are recorded when their binding ends, which may come after its watch event.
    std::string after;
    for (int tries = 0; tries < 50; ++tries) {
      auto body = scrape(a);
      if (body) {
        after = std::move(*body);
        if (attemptMetric.empty()) attemptMetric = attemptMetricIn(after);
        const auto b0 = scheduledBuckets(metricsBefore, attemptMetric);
        const auto b1 = scheduledBuckets(after, attemptMetric);
        const double n0 = b0.empty() ? 0 : b0.rbegin()->second;
        const double n1 = b1.empty() ? 0 : b1.rbegin()->second;
        if (n1 - n0 >= bound.load()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    Buckets delta = scheduledBuckets(after, attemptMetric);
    for (const auto& [le, n] : scheduledBuckets(metricsBefore, attemptMetric)) delta[le] -= n;
    auto ms = [&](double q) { return 1000 * histogramQuantile(q, delta); };
    std::printf(
        "attempt_metric=%s attempts=%.0f attempt_p50_ms=%.2f attempt_p90_ms=%.2f "
        "attempt_p99_ms=%.2f ",
        attemptMetric.empty() ? "none" : attemptMetric.c_str(),
        delta.empty() ? 0.0 : delta.rbegin()->second, ms(0.5), ms(0.9), ms(0.99));
  }
  if (groups > 0) {
    std::vector<double> lat;
    for (int g = 0; g < groups; ++g) {
      const auto b = groupBound[static_cast<size_t>(g)].load();
      if (b > 0)
        lat.push_back(static_cast<double>(b - groupCreated[static_cast<size_t>(g)].load()) / 1e6);
    }
    std::sort(lat.begin(), lat.end());
    auto pct = [&](double q) {
      return lat.empty() ? 0.0
                         : lat[std::min(lat.size() - 1,
                                        static_cast<size_t>(q * static_cast<double>(lat.size())))];
    };
    std::printf(
        "gang_groups=%d gangs_complete=%zu gang_last_created_to_last_bound_ms_p50=%.0f p99=%.0f "
        "max=%.0f ",
        groups, lat.size(), pct(0.5), pct(0.99), lat.empty() ? 0.0 : lat.back());
  }
  std::printf("workload=%s ", a.workload.c_str());
  std::printf("nodes=%d init_pods=%d pods=%d bound=%d create_s=%.2f seconds=%.2f pods_per_s=%.1f\n",
              a.nodes, a.initPods, a.pods, bound.load(), createSeconds, seconds,
              seconds > 0 ? bound.load() / seconds : 0.0);
  return bound.load() == a.pods ? 0 : 1;
}
