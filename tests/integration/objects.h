// Small builders for the objects integration tests create, and helpers to make many quickly.
#pragma once

#include <atomic>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace ksched::testing {

// A pod no scheduler serves (schedulerName "ksched-test-nobody"), so that pods made for
// client and informer tests stay put while scheduler tests run in the same cluster.
inline nlohmann::json podJson(const std::string& ns, const std::string& name,
                              nlohmann::json labels = nlohmann::json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", ns}, {"labels", std::move(labels)}}},
          {"spec",
           {{"terminationGracePeriodSeconds", 0},
            {"schedulerName", "ksched-test-nobody"},
            {"containers",
             {{{"name", "c"},
               {"image", "registry.k8s.io/pause:3.9"},
               {"resources", {{"requests", {{"cpu", "100m"}, {"memory", "64Mi"}}}}}}}}}}};
}

inline nlohmann::json nodeJson(const std::string& name,
                               nlohmann::json labels = nlohmann::json::object()) {
  labels["kubernetes.io/hostname"] = name;
  nlohmann::json res = {{"cpu", "4"}, {"memory", "16Gi"}, {"pods", "110"}};
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)}}},
          {"status", {{"capacity", res}, {"allocatable", res}}}};
}

// Runs fn(i) for i in [0, n) on `threads` threads.
inline void parallelFor(int n, int threads, const std::function<void(int)>& fn) {
  std::atomic<int> next{0};
  std::vector<std::jthread> ts;
  for (int t = 0; t < threads; ++t) {
    ts.emplace_back([&] {
      for (int i; (i = next.fetch_add(1)) < n;) fn(i);
    });
  }
}

}  // namespace ksched::testing
