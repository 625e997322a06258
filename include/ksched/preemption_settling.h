// Preemption settling (KEP 5690): resources that a preemption frees only after its victims are
// gone, because a controller reclaims them (DRA's ResourceClaims, deallocated by the
// resourceclaim controller once their pods are deleted).
//
// Preemption (DefaultPreemption) asks every participant two things:
//   - before it preempts for a pod: has an earlier preemption by this pod settled? While a
//     participant says no (and why), the pod does not preempt again: the resources it freed
//     are on their way, and preempting a second set of victims would be in vain;
//   - once it chose a node: the participant sees the dry run's CycleState of that node (the
//     victims removed through PreFilterExtensions::removePod) and may record what the pod is
//     owed, so that it holds that capacity for the pod until the pod is placed.
//
// One registry per scheduler process, shared by every profile (Handle::shared under kKey). A
// participant registers once and stays for the life of the process, so whatever its functions
// capture must too (a plugin's shared state, not the plugin).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/cycle_state.h>
#include <ksched/handle.h>

namespace ksched {

class PreemptionSettling {
 public:
  static constexpr std::string_view kKey = "ksched.preemption-settling";

  struct Participant {
    // "" when nothing an earlier preemption by `pod` freed is still being reclaimed; else why
    // the pod waits (for the pod's scheduling condition).
    std::function<std::string(const api::Pod& pod)> settling;
    // The preemption for `pod` chose `node`; `dryRun` is the state its dry run ended with there.
    std::function<void(const CycleState& dryRun, const api::Pod& pod, const std::string& node)>
        chosen;
  };

  // The process's registry (created on first use).
  [[nodiscard]] static std::shared_ptr<PreemptionSettling> of(Handle& handle) {
    return handle.shared<PreemptionSettling>(kKey,
                                             [] { return std::make_shared<PreemptionSettling>(); });
  }

  void add(Participant p) {
    std::lock_guard lock(mu_);
    participants_.push_back(std::move(p));
  }

  // The first participant's reason the pod still waits, or "".
  [[nodiscard]] std::string settling(const api::Pod& pod) const {
    for (const auto& p : snapshot()) {
      if (!p.settling) continue;
      if (std::string why = p.settling(pod); !why.empty()) return why;
    }
    return {};
  }

  void chosen(const CycleState& dryRun, const api::Pod& pod, const std::string& node) const {
    for (const auto& p : snapshot()) {
      if (p.chosen) p.chosen(dryRun, pod, node);
    }
  }

 private:
  [[nodiscard]] std::vector<Participant> snapshot() const {
    std::lock_guard lock(mu_);
    return participants_;
  }

  mutable std::mutex mu_;
  std::vector<Participant> participants_;
};

}  // namespace ksched
