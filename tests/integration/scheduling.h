// Helpers for tests that watch pods get scheduled: sized objects, polling, and checks of
// what the apiserver holds.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/pod_resources.h>

#include "client/rest_client.h"
#include "cluster.h"
#include "objects.h"

namespace ksched::testing {

using namespace std::chrono_literals;
using client::RestClient;

inline void deleteAllNodes(RestClient& c) {
  for (const auto& n : c.list("/api/v1/nodes").items) {
    c.del("/api/v1/nodes/" + n["metadata"]["name"].get<std::string>());
  }
}

inline nlohmann::json sizedNode(const std::string& name, const std::string& cpu,
                                const std::string& mem,
                                nlohmann::json taints = nlohmann::json::array()) {
  auto n = nodeJson(name);
  nlohmann::json res = {{"cpu", cpu}, {"memory", mem}, {"pods", "110"}};
  n["status"]["capacity"] = res;
  n["status"]["allocatable"] = res;
  if (!taints.empty()) n["spec"]["taints"] = std::move(taints);
  return n;
}

// PriorityClass `name` (created once; an existing one is left as it is).
inline void ensurePriorityClass(RestClient& c, const std::string& name, int32_t value,
                                const std::string& policy = "PreemptLowerPriority") {
  try {
    c.post("/apis/scheduling.k8s.io/v1/priorityclasses",
           {{"metadata", {{"name", name}}}, {"value", value}, {"preemptionPolicy", policy}});
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
}

inline nlohmann::json sizedPod(const std::string& ns, const std::string& name,
                               const std::string& cpu, const std::string& mem = "64Mi") {
  auto p = podJson(ns, name);
  p["spec"]["schedulerName"] = "default-scheduler";
  p["spec"]["containers"][0]["resources"]["requests"] = {{"cpu", cpu}, {"memory", mem}};
  return p;
}

inline std::vector<api::Pod> listPods(RestClient& c, const std::string& ns) {
  std::vector<api::Pod> out;
  for (const auto& j : c.list("/api/v1/namespaces/" + ns + "/pods").items) {
    out.push_back(api::decode<api::Pod>(j));
  }
  return out;
}

// Polls until every pod of `ns` is bound (or the deadline passes); returns how many are bound.
inline size_t waitAllBound(RestClient& c, const std::string& ns, size_t want,
                           std::chrono::seconds within = 60s) {
  auto deadline = std::chrono::steady_clock::now() + within;
  size_t bound = 0;
  do {
    bound = 0;
    for (const auto& p : listPods(c, ns)) bound += p.spec.nodeName.empty() ? 0 : 1;
    if (bound >= want) return bound;
    std::this_thread::sleep_for(100ms);
  } while (std::chrono::steady_clock::now() < deadline);
  return bound;
}

// Node limits (cpu, memory, pods) exceeded by the requests of the pods bound to the node's
// name, all namespaces: "<node>: <what> <used> of <allocatable>" for each.
inline std::vector<std::string> overcommittedLimits(RestClient& c) {
  std::map<std::string, api::Resource> used;
  for (const auto& j : c.list("/api/v1/pods").items) {
    auto p = api::decode<api::Pod>(j);
    if (p.spec.nodeName.empty()) continue;
    auto& u = used[p.spec.nodeName];
    u.add(api::effectiveRequestsResource(p, api::PodResourcesOptions(features::Gates{})));
    ++u.allowedPodNumber;
  }
  std::vector<std::string> over;
  for (const auto& j : c.list("/api/v1/nodes").items) {
    auto n = api::decode<api::Node>(j);
    auto alloc = api::Resource::fromList(n.status.allocatable);
    const auto& u = used[n.metadata.name];
    for (const auto& [what, have, room] :
         {std::tuple{"milli-cpu", u.milliCPU, alloc.milliCPU},
          std::tuple{"memory", u.memory, alloc.memory},
          std::tuple{"pods", static_cast<int64_t>(u.allowedPodNumber),
                     static_cast<int64_t>(alloc.allowedPodNumber)}}) {
      if (have > room) {
        over.push_back(n.metadata.name + ": " + what + " " + std::to_string(have) + " of " +
                       std::to_string(room));
      }
    }
  }
  return over;
}

// Asserts that no node holds more than its allocatable cpu, memory and pods (the requests of
// the pods bound to its name, all namespaces); returns how many of these limits are exceeded.
inline int expectNoNodeOvercommitted(RestClient& c) {
  const std::vector<std::string> over = overcommittedLimits(c);
  for (const auto& o : over) ADD_FAILURE() << "node over its allocatable: " << o;
  return static_cast<int>(over.size());
}

// Events of `ns` with that reason: pod name -> notes.
inline std::map<std::string, std::vector<std::string>> eventsByPod(RestClient& c,
                                                                   const std::string& ns,
                                                                   const std::string& reason) {
  std::map<std::string, std::vector<std::string>> out;
  for (const auto& e : c.list("/apis/events.k8s.io/v1/namespaces/" + ns + "/events").items) {
    if (e.value("reason", "") != reason) continue;
    out[e["regarding"]["name"].get<std::string>()].push_back(e.value("note", ""));
  }
  return out;
}

// Deletes every pod of `ns` at once (grace period 0).
inline void deleteAllPods(RestClient& c, const std::string& ns) {
  for (const auto& p : listPods(c, ns)) {
    try {
      c.del("/api/v1/namespaces/" + ns + "/pods/" + p.metadata.name, {{"gracePeriodSeconds", 0}});
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) throw;
    }
  }
}

// A test that works in its own namespace (useNamespace) and deletes the namespace's pods at the
// end: pending pods left behind would be scheduled, or preempt, during later tests.
class NamespacedTest : public ::testing::Test {
 protected:
  void TearDown() override {
    if (!ns_.empty()) deleteAllPods(TestCluster::get().admin(), ns_);
  }
  const std::string& useNamespace(const std::string& ns) {
    ns_ = ns;
    ensureNamespace(TestCluster::get().admin(), ns_);
    return ns_;
  }

 private:
  std::string ns_;
};

// j[key] if it is an object, else an empty one: a field that a controller or the scheduler
// writes later (a PodGroup's status, say) is absent or null until then, and a poll must read
// that as "not yet" rather than throw (value() on null does).
inline nlohmann::json objectOrEmpty(const nlohmann::json& j, const std::string& key) {
  if (!j.is_object()) return nlohmann::json::object();
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : nlohmann::json::object();
}

// The value of the sample line `series` (name{labels}) in a Prometheus text exposition, or -1.
inline double metricSample(const std::string& text, const std::string& series) {
  const std::string key = series + " ";
  for (size_t at = 0; at < text.size();) {
    size_t end = text.find('\n', at);
    if (end == std::string::npos) end = text.size();
    if (text.compare(at, key.size(), key) == 0) {
      return std::stod(text.substr(at + key.size(), end - at - key.size()));
    }
    at = end + 1;
  }
  return -1;
}

template <typename F>
bool eventually(F f, std::chrono::seconds within = 20s) {
  auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (f()) return true;
    std::this_thread::sleep_for(100ms);
  }
  return f();
}

}  // namespace ksched::testing
