// Coscheduling's PodGroup status writer: the status each group should have (phase, counts,
// occupiedBy, scheduleStartTime), written on the plugin's own thread, never in a cycle.
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>

#include <ksched/api/object_reference.h>
#include <ksched/api/rfc3339.h>

#include "plugins/coscheduling/coscheduling.h"

namespace ksched::plugins {

using coscheduling::GroupRef;
using coscheduling::PodGroup;
using coscheduling::PodGroupStatus;

namespace {

// "<namespace>/<name>" of the pod's controller, as scheduler-plugins' controller fills occupiedBy.
std::string occupiedBy(const api::Pod& pod) {
  for (const auto& o : pod.metadata.ownerReferences) {
    if (o.controller) return pod.metadata.namespace_ + "/" + o.name;
  }
  return "";
}

}  // namespace

// ---- PodGroup status ----

PodGroupStatus Coscheduling::computeStatus(const Group& g, const PodGroup& pg) const {
  PodGroupStatus s = pg.status;
  s.scheduled = s.running = s.succeeded = s.failed = 0;
  int pods = 0;
  const api::Pod* first = nullptr;
  for (const auto& [uid, p] : g.pods) {
    if (p->metadata.deletionTimestamp) continue;
    ++pods;
    // occupiedBy: the controller of the earliest pod that has one.
    if (!occupiedBy(*p).empty() &&
        (first == nullptr || p->metadata.creationTimestamp < first->metadata.creationTimestamp)) {
      first = p.get();
    }
    if (!p->spec.nodeName.empty()) ++s.scheduled;
    if (p->status.phase == "Running") ++s.running;
    if (p->status.phase == "Succeeded") ++s.succeeded;
    if (p->status.phase == "Failed") ++s.failed;
  }
  const int32_t min = pg.minMember;
  if (pods < min) {
    s.phase = std::string(coscheduling::kPhasePending);
  } else {
    s.phase = std::string(coscheduling::kPhaseScheduling);
    if (s.scheduled >= min) s.phase = std::string(coscheduling::kPhaseScheduled);
    if (s.running + s.succeeded >= min) s.phase = std::string(coscheduling::kPhaseRunning);
    if (s.failed != 0 && s.failed + s.running + s.succeeded >= min) {
      s.phase = std::string(coscheduling::kPhaseFailed);
    }
    if (s.succeeded >= min) s.phase = std::string(coscheduling::kPhaseFinished);
    if (s.occupiedBy.empty() && first != nullptr) s.occupiedBy = occupiedBy(*first);
    if (s.scheduleStartTime.empty()) {
      s.scheduleStartTime = g.scheduleStartTime.empty()
                                ? api::formatRFC3339(std::chrono::system_clock::now())
                                : g.scheduleStartTime;
    }
  }
  return s;
}

std::optional<PodGroupStatus> Coscheduling::desiredStatus(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = groups_.find(key);
  if (it == groups_.end() || !it->second.podGroup) return std::nullopt;
  return computeStatus(it->second, *it->second.podGroup);
}

void Coscheduling::writeStatus(std::stop_token st) {
  ClusterApi* api = handle_.api();
  while (!st.stop_requested()) {
    std::set<std::string> keys;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, st, [&] { return !dirty_.empty(); });
      if (st.stop_requested()) return;
    }
    // Let a burst of pod events settle into one write per group.
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, st, std::chrono::milliseconds(200), [] { return false; });
      keys.swap(dirty_);
    }
    for (const auto& key : keys) {
      std::shared_ptr<const PodGroup> pg;
      PodGroupStatus want;
      {
        std::lock_guard lock(mu_);
        auto it = groups_.find(key);
        if (it == groups_.end() || !it->second.podGroup) continue;
        pg = it->second.podGroup;
        want = computeStatus(it->second, *pg);
      }
      if (want == pg->status) continue;
      auto w = written_.find(key);
      if (w != written_.end() && w->second == want) continue;
      const std::string path = "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/" +
                               pg->metadata.namespace_ + "/podgroups/" + pg->metadata.name +
                               "/status";
      if (auto err = api->patch(path, {{"status", coscheduling::statusToJson(want)}}, nullptr)) {
        if (!err->isNotFound()) {
          spdlog::warn("Coscheduling: updating the status of PodGroup {}: {}", key, err->message);
          std::lock_guard lock(mu_);
          dirty_.insert(key);  // next round
        }
        continue;
      }
      written_[key] = want;
    }
  }
}

}  // namespace ksched::plugins
