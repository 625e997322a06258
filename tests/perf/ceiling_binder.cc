// The ceiling of the end-to-end benchmark: a "scheduler" that does no scheduling. It lists and
// watches the pending pods of every namespace (spec.nodeName empty, spec.schedulerName
// default-scheduler) and POSTs a Binding for each to the next node in round-robin order (nodes
// listed at start and watched), through ksched's own client (client::RestClient, the same
// QPS/burst ksched gets in tests/perf/e2e.sh) from as many binder threads as ksched's default
// `binderThreads` (16). What it reaches on a workload is the most bindings per second the
// apiserver accepts there: the anchor for ksched's pods/s on the same apiserver.
//
//   ksched_ceiling_binder --kubeconfig scheduler.kubeconfig [--kube-api-qps 5000]
//                         [--kube-api-burst 5000] [--binder-threads 16]
//                         [--scheduler-name default-scheduler]
//
// Pods that a scheduler would leave pending stay pending: a pod whose CPU request is larger than
// every node's allocatable CPU (the unschedulable workload's 9999-CPU pods) is parked and bound
// only if a node that holds it appears. Nothing else is checked (no memory, no affinity, no
// spreading, no capacity left on the node), so preemption, DRA and gang workloads are out of
// its scope. After each binding it writes the Scheduled event a scheduler writes (--events
// false leaves it out), from 8 sender threads as ksched does, so it makes the same API writes
// per pod as kube-scheduler and ksched.
// Runs until SIGTERM or SIGINT, then prints what it did on stderr and exits 0.
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include <ksched/api/quantity.h>
#include <ksched/api/rfc3339.h>

#include "client/config.h"
#include "client/rest_client.h"
#include "tests/perf/flags.h"

namespace {

using namespace ksched;

struct Args {
  std::string kubeconfig;
  double qps = 5000;
  int burst = 5000;
  int binderThreads = 16;
  std::string schedulerName = "default-scheduler";
  bool events = true;         // a Scheduled event per binding, as a scheduler writes
  int eventSenders = 8;       // ksched's
  bool watchAllPods = false;  // watch bound pods too, as a scheduler's cache must
};

constexpr const char* kUsage = R"(usage: ksched_ceiling_binder --kubeconfig FILE [flags]

Binds every pending pod (spec.nodeName empty, spec.schedulerName as below, all namespaces) to
the next node in round-robin order, without scheduling: the most bindings per second the
apiserver accepts (tests/perf/e2e.sh CEILING=1). A pod whose CPU request exceeds every node's
allocatable CPU stays pending. Runs until SIGTERM or SIGINT; prints its counts on stderr.

  --kubeconfig FILE      the identity to list, watch and bind with (required)
  --kube-api-qps Q       client QPS (5000)
  --kube-api-burst B     client burst (5000)
  --binder-threads N     threads POSTing Bindings (16, ksched's default binderThreads)
  --scheduler-name S     bind only pods of this spec.schedulerName (default-scheduler)
  --events true|false    after each binding, POST the Scheduled event (events.k8s.io/v1) a
                         scheduler writes for it (true): the API writes of a scheduler
  --event-senders N      threads POSTing the events (8, as ksched's event recorder)
  --watch-all-pods true|false
                         list and watch every pod, the bound ones too, as a scheduler does
                         (false: only pending pods, spec.nodeName= as field selector)
)";

// Thousandths of a CPU in `requests` (a resources.requests object); 0 when absent or malformed.
int64_t cpuMilli(const nlohmann::json& resources, const char* field) {
  if (!resources.is_object()) return 0;
  auto f = resources.find(field);
  if (f == resources.end() || !f->is_object()) return 0;
  auto cpu = f->find("cpu");
  if (cpu == f->end() || !cpu->is_string()) return 0;
  auto q = api::Quantity::tryParse(cpu->get<std::string>());
  return q ? q->milliValue() : 0;
}

// The pod's CPU request as the scheduler counts it: pod-level resources when set, else the sum
// of the containers or the largest init container, whichever is more; plus the overhead.
int64_t podCpuMilli(const nlohmann::json& pod) {
  const auto& spec = pod["spec"];
  int64_t total = 0;
  if (spec.contains("resources")) total = cpuMilli(spec["resources"], "requests");
  if (total == 0) {
    for (const auto& c : spec.value("containers", nlohmann::json::array())) {
      total += cpuMilli(c.value("resources", nlohmann::json::object()), "requests");
    }
    for (const auto& c : spec.value("initContainers", nlohmann::json::array())) {
      total = std::max(total, cpuMilli(c.value("resources", nlohmann::json::object()), "requests"));
    }
  }
  if (spec.contains("overhead") && spec["overhead"].is_object() &&
      spec["overhead"].contains("cpu") && spec["overhead"]["cpu"].is_string()) {
    if (auto q = api::Quantity::tryParse(spec["overhead"]["cpu"].get<std::string>())) {
      total += q->milliValue();
    }
  }
  return total;
}

struct PodRef {
  std::string ns;
  std::string name;
  std::string uid;
  int64_t cpuMilli = 0;
  int attempts = 0;
};

class Binder {
 public:
  Binder(const Args& a, client::RestClient& c) : a_(a), c_(c) {}

  // --- nodes -----------------------------------------------------------------------------
  void nodeEvent(const client::WatchEvent& ev) {
    const auto& meta = ev.object["metadata"];
    const std::string name = meta.value("name", "");
    if (name.empty()) return;
    std::lock_guard lock(nodesMu_);
    if (ev.type == client::WatchEventType::kDeleted) {
      nodes_.erase(name);
    } else {
      const auto& status = ev.object.value("status", nlohmann::json::object());
      const bool cordoned = ev.object.contains("spec") && ev.object["spec"].is_object() &&
                            ev.object["spec"].value("unschedulable", false);
      if (cordoned) {
        nodes_.erase(name);
      } else {
        nodes_[name] = cpuMilli(status, "allocatable");
      }
    }
    rebuildNodesLocked();
  }

  void relistNodes(std::vector<nlohmann::json>&& items) {
    std::lock_guard lock(nodesMu_);
    nodes_.clear();
    for (auto& n : items) {
      const bool cordoned =
          n.contains("spec") && n["spec"].is_object() && n["spec"].value("unschedulable", false);
      if (cordoned) continue;
      nodes_[n["metadata"].value("name", "")] =
          cpuMilli(n.value("status", nlohmann::json::object()), "allocatable");
    }
    rebuildNodesLocked();
  }

  // --- pods ------------------------------------------------------------------------------
  void podSeen(const nlohmann::json& pod) {
    const auto& meta = pod["metadata"];
    const auto& spec = pod["spec"];
    if (spec.value("schedulerName", "default-scheduler") != a_.schedulerName) return;
    if (!spec.value("nodeName", "").empty() || meta.contains("deletionTimestamp")) return;
    PodRef ref{meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", ""),
               podCpuMilli(pod)};
    {
      std::lock_guard lock(podsMu_);
      if (!known_.insert(ref.uid).second) return;
    }
    enqueueOrPark(std::move(ref));
  }

  void podGone(const nlohmann::json& pod) {
    const std::string uid = pod["metadata"].value("uid", "");
    std::lock_guard lock(podsMu_);
    known_.erase(uid);
    parked_.erase(uid);
  }

  // --- binders ---------------------------------------------------------------------------
  void binderLoop(std::stop_token st) {
    while (true) {
      PodRef ref;
      {
        std::unique_lock lock(podsMu_);
        if (!queueCv_.wait(lock, st, [&] { return !queue_.empty(); })) return;
        ref = std::move(queue_.front());
        queue_.pop_front();
      }
      std::string node;
      {
        std::lock_guard lock(nodesMu_);
        if (roundRobin_.empty() || ref.cpuMilli > maxCpuMilli_) {
          parkLocked(std::move(ref));
          continue;
        }
        node = roundRobin_[next_++ % roundRobin_.size()];
      }
      try {
        c_.create("/api/v1/namespaces/" + ref.ns + "/pods/" + ref.name + "/binding",
                  {{"apiVersion", "v1"},
                   {"kind", "Binding"},
                   {"metadata", {{"name", ref.name}, {"namespace", ref.ns}, {"uid", ref.uid}}},
                   {"target", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}}}});
        bound_.fetch_add(1);
        if (a_.events) {
          std::lock_guard lock(eventsMu_);
          events_.emplace_back(std::move(ref), std::move(node));
          eventsCv_.notify_one();
        }
      } catch (const client::ApiError& e) {
        if (c_.aborted()) return;
        if (e.isConflict() || e.isNotFound()) {  // bound already, or gone
          conflicts_.fetch_add(1);
        } else if (++ref.attempts < 3) {
          std::lock_guard lock(podsMu_);
          queue_.push_back(std::move(ref));
          queueCv_.notify_one();
        } else {
          errors_.fetch_add(1);
          std::fprintf(stderr, "ceiling_binder: binding %s/%s: %s\n", ref.ns.c_str(),
                       ref.name.c_str(), e.what());
        }
      }
    }
  }

  // --- event senders: the Scheduled events, apart from the bindings as a scheduler sends them
  void eventLoop(std::stop_token st) {
    while (true) {
      std::pair<PodRef, std::string> next;
      {
        std::unique_lock lock(eventsMu_);
        if (!eventsCv_.wait(lock, st, [&] { return !events_.empty(); })) return;
        next = std::move(events_.front());
        events_.pop_front();
      }
      scheduledEvent(next.first, next.second);
    }
  }

  // The event kube-scheduler writes for a binding (one create; a failure is counted, not
  // retried).
  void scheduledEvent(const PodRef& ref, const std::string& node) {
    const auto now = std::chrono::system_clock::now();
    const auto micros =
        std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count();
    char name[64];
    std::snprintf(name, sizeof name, ".%llx", static_cast<unsigned long long>(micros));
    const std::string when = api::formatRFC3339Micro(now);
    try {
      c_.create("/apis/events.k8s.io/v1/namespaces/" + ref.ns + "/events",
                {{"apiVersion", "events.k8s.io/v1"},
                 {"kind", "Event"},
                 {"metadata", {{"name", ref.name + name}, {"namespace", ref.ns}}},
                 {"eventTime", when},
                 {"reportingController", "ceiling-binder"},
                 {"reportingInstance", "ceiling-binder"},
                 {"action", "Binding"},
                 {"reason", "Scheduled"},
                 {"type", "Normal"},
                 {"note", "Successfully assigned " + ref.ns + "/" + ref.name + " to " + node},
                 {"regarding",
                  {{"apiVersion", "v1"},
                   {"kind", "Pod"},
                   {"namespace", ref.ns},
                   {"name", ref.name},
                   {"uid", ref.uid}}}});
    } catch (const client::ApiError&) {
      eventErrors_.fetch_add(1);
    }
  }

  void report() {
    size_t parked = 0, nodes = 0;
    {
      std::lock_guard lock(podsMu_);
      parked = parked_.size();
    }
    {
      std::lock_guard lock(nodesMu_);
      nodes = roundRobin_.size();
    }
    std::fprintf(stderr,
                 "ceiling_binder: bound=%llu conflicts=%llu errors=%llu event_errors=%llu "
                 "parked=%zu nodes=%zu\n",
                 static_cast<unsigned long long>(bound_.load()),
                 static_cast<unsigned long long>(conflicts_.load()),
                 static_cast<unsigned long long>(errors_.load()),
                 static_cast<unsigned long long>(eventErrors_.load()), parked, nodes);
  }

  void wakeAll() {
    queueCv_.notify_all();
    eventsCv_.notify_all();
  }

 private:
  // nodesMu_ held.
  void rebuildNodesLocked() {
    roundRobin_.clear();
    int64_t maxCpu = -1;
    for (const auto& [name, cpu] : nodes_) {
      roundRobin_.push_back(name);
      maxCpu = std::max(maxCpu, cpu);
    }
    const bool grew = maxCpu > maxCpuMilli_;
    maxCpuMilli_ = maxCpu;
    if (!grew) return;
    // Parked pods that a node may hold now go back to the queue.
    std::lock_guard lock(podsMu_);
    for (auto it = parked_.begin(); it != parked_.end();) {
      if (it->second.cpuMilli <= maxCpuMilli_) {
        queue_.push_back(std::move(it->second));
        it = parked_.erase(it);
      } else {
        ++it;
      }
    }
    queueCv_.notify_all();
  }

  // nodesMu_ held (so maxCpuMilli_ cannot grow between the check and the parking).
  void parkLocked(PodRef&& ref) {
    std::lock_guard lock(podsMu_);
    if (known_.contains(ref.uid)) parked_[ref.uid] = std::move(ref);
  }

  void enqueueOrPark(PodRef&& ref) {
    std::lock_guard nodesLock(nodesMu_);
    if (roundRobin_.empty() || ref.cpuMilli > maxCpuMilli_) {
      parkLocked(std::move(ref));
      return;
    }
    std::lock_guard lock(podsMu_);
    queue_.push_back(std::move(ref));
    queueCv_.notify_one();
  }

  const Args& a_;
  client::RestClient& c_;

  // Lock order: nodesMu_ before podsMu_.
  std::mutex nodesMu_;
  std::map<std::string, int64_t> nodes_;  // name -> allocatable CPU (milli)
  std::vector<std::string> roundRobin_;
  int64_t maxCpuMilli_ = -1;
  uint64_t next_ = 0;

  std::mutex podsMu_;
  std::condition_variable_any queueCv_;
  std::deque<PodRef> queue_;
  std::set<std::string> known_;           // uids of pending pods seen (queued, parked, bound)
  std::map<std::string, PodRef> parked_;  // uid -> pod that fits no node

  std::atomic<uint64_t> bound_{0};
  std::atomic<uint64_t> eventErrors_{0};

  std::mutex eventsMu_;
  std::condition_variable_any eventsCv_;
  std::deque<std::pair<PodRef, std::string>> events_;  // (pod, node) bound, event not sent
  std::atomic<uint64_t> conflicts_{0};
  std::atomic<uint64_t> errors_{0};
};

// LIST then WATCH `path` until `st` is stopped; a LIST again after 410 Gone or an error.
void reflect(client::RestClient& c, const std::string& path, const std::string& fieldSelector,
             const std::function<void(std::vector<nlohmann::json>&&)>& onList,
             const std::function<void(const client::WatchEvent&)>& onEvent, std::stop_token st) {
  std::string from;
  while (!st.stop_requested()) {
    try {
      if (from.empty()) {
        auto list = c.list(path, {.fieldSelector = fieldSelector, .limit = 1000});
        from = list.resourceVersion;
        onList(std::move(list.items));
      }
      c.watch(
          path, {.resourceVersion = from, .fieldSelector = fieldSelector, .timeoutSeconds = 300},
          [&](client::WatchEvent&& ev) {
            from = ev.object["metadata"].value("resourceVersion", from);
            if (ev.type != client::WatchEventType::kBookmark) onEvent(ev);
            return true;
          },
          st);
    } catch (const client::ApiError& e) {
      if (st.stop_requested() || c.aborted()) return;
      if (!e.isGone()) std::fprintf(stderr, "ceiling_binder: %s: %s\n", path.c_str(), e.what());
      from.clear();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }
}

bool parseArgs(int argc, char** argv, Args& a) {
  const bool ok =
      perf::parseFlags(argc, argv, kUsage, {}, [&](const std::string& k, const std::string& v) {
        if (k == "--kubeconfig")
          a.kubeconfig = v;
        else if (k == "--kube-api-qps")
          a.qps = std::stod(v);
        else if (k == "--kube-api-burst")
          a.burst = std::stoi(v);
        else if (k == "--binder-threads")
          a.binderThreads = std::stoi(v);
        else if (k == "--scheduler-name")
          a.schedulerName = v;
        else if (k == "--events" && (v == "true" || v == "false"))
          a.events = v == "true";
        else if (k == "--event-senders")
          a.eventSenders = std::stoi(v);
        else if (k == "--watch-all-pods" && (v == "true" || v == "false"))
          a.watchAllPods = v == "true";
        else
          return false;
        return true;
      });
  if (!ok) return false;
  if (a.kubeconfig.empty() || a.binderThreads < 1) {
    std::fprintf(stderr, "--kubeconfig is required and --binder-threads at least 1\n%s", kUsage);
    return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!parseArgs(argc, argv, a)) return 2;

  // SIGTERM and SIGINT are taken by one thread (sigwait), so every other thread runs with them
  // blocked and the stop is an ordinary stop request.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  client::Config cfg;
  try {
    cfg = client::loadKubeconfig(a.kubeconfig);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ceiling_binder: %s\n", e.what());
    return 1;
  }
  cfg.qps = a.qps;
  cfg.burst = a.burst;
  cfg.userAgent = "ksched-ceiling-binder";
  client::RestClient c(cfg);
  Binder binder(a, c);

  std::stop_source stop;
  std::thread signals([&] {
    int sig = 0;
    sigwait(&sigs, &sig);
    stop.request_stop();
    c.abort();
    binder.wakeAll();
  });
  signals.detach();

  std::vector<std::jthread> threads;
  threads.emplace_back([&] {
    reflect(
        c, "/api/v1/nodes", "",
        [&](std::vector<nlohmann::json>&& items) { binder.relistNodes(std::move(items)); },
        [&](const client::WatchEvent& ev) { binder.nodeEvent(ev); }, stop.get_token());
  });
  threads.emplace_back([&] {
    reflect(
        c, "/api/v1/pods",
        std::string(a.watchAllPods ? "" : "spec.nodeName=,") +
            "status.phase!=Succeeded,status.phase!=Failed",
        [&](std::vector<nlohmann::json>&& items) {
          for (const auto& p : items) binder.podSeen(p);
        },
        [&](const client::WatchEvent& ev) {
          if (ev.type == client::WatchEventType::kDeleted) {
            binder.podGone(ev.object);
          } else if (ev.type == client::WatchEventType::kAdded ||
                     ev.type == client::WatchEventType::kModified) {
            binder.podSeen(ev.object);
          }
        },
        stop.get_token());
  });
  for (int i = 0; i < a.binderThreads; ++i) {
    threads.emplace_back([&] { binder.binderLoop(stop.get_token()); });
  }
  for (int i = 0; a.events && i < a.eventSenders; ++i) {
    threads.emplace_back([&] { binder.eventLoop(stop.get_token()); });
  }
  for (auto& t : threads) t.join();
  binder.report();
  return 0;
}
