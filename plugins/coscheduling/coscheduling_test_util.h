// The Coscheduling unit tests' objects and fixture: PodGroups, gang pods, and the plugin over a
// FakeHandle with helpers for PreFilter, Reserve + Permit waits and Permit.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/decode.h>

#include "plugins/coscheduling/coscheduling.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::plugins::coscheduling_test {

using testutil::PodWrapper;

inline UnstructuredPtr podGroup(const std::string& name, int32_t minMember,
                                const std::string& created = "2026-01-01T00:00:00Z",
                                nlohmann::json extraSpec = nlohmann::json::object()) {
  nlohmann::json j = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
                      {"kind", "PodGroup"},
                      {"metadata",
                       {{"name", name},
                        {"namespace", "default"},
                        {"uid", name + "-uid"},
                        {"resourceVersion", "1"},
                        {"creationTimestamp", created}}},
                      {"spec", {{"minMember", minMember}}}};
  for (auto& [k, v] : extraSpec.items()) j["spec"][k] = v;
  auto o = std::make_shared<UnstructuredObject>();
  o->metadata = api::decode<api::ObjectMeta>(j["metadata"]);
  o->object = j;
  return o;
}

inline PodPtr gangPod(const std::string& name, const std::string& group,
                      const std::string& node = "") {
  auto w = PodWrapper(name).label(std::string(coscheduling::kPodGroupLabel), group);
  if (!node.empty()) w.nodeName(node);
  return std::make_shared<const api::Pod>(w.obj());
}

inline QueuedPodInfo queued(const PodPtr& pod, std::chrono::steady_clock::time_point initial = {}) {
  QueuedPodInfo q;
  q.podInfo = std::make_shared<const PodInfo>(pod, features::Gates{});
  q.initialAttemptTimestamp = initial;
  return q;
}

struct Fixture {
  explicit Fixture(CoschedulingArgs args = {}) : plugin(args, handle) {}
  // With `nodes` as the cycle's snapshot.
  explicit Fixture(testutil::FakeLister nodes) : handle(std::move(nodes)), plugin({}, handle) {}
  testutil::FakeHandle handle;
  Coscheduling plugin;
  CycleState state;
  PreFilterResult result;

  Status preFilter(const PodPtr& p) {
    return plugin.preFilter(state, *p, handle.snapshot(), result);
  }
  // The PodGroup `name` and its pods p-0 .. p-<pods-1>.
  void group(const std::string& name, int32_t minMember, int pods) {
    plugin.onPodGroup(nullptr, podGroup(name, minMember));
    for (int i = 0; i < pods; ++i) plugin.onPod(nullptr, gangPod("p-" + std::to_string(i), name));
  }
  // p-0 .. p-<n-1> of `name` reserved and waiting at Permit.
  std::vector<std::shared_ptr<testing::FakeWaitingPod>> holdWaiting(const std::string& name,
                                                                    int n) {
    std::vector<std::shared_ptr<testing::FakeWaitingPod>> out;
    for (int i = 0; i < n; ++i) {
      auto p = gangPod("p-" + std::to_string(i), name);
      EXPECT_TRUE(plugin.reserve(state, *p, "n").ok());
      out.push_back(handle.addWaitingPod(*p));
    }
    return out;
  }
  Status permit(const PodPtr& p, std::chrono::milliseconds& timeout) {
    return plugin.permit(state, *p, "node-a", timeout);
  }
};

}  // namespace ksched::plugins::coscheduling_test
