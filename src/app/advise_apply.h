// ksched advise --apply: a plan (advise/plan.h) carried out on a live cluster through the
// Eviction API, one move at a time: the nodes to free are cordoned first (the nodes already
// empty too, while the moves run; uncordoned after), then each pod is evicted (the apiserver
// enforces PodDisruptionBudgets: a refusal is waited out), an Event names the goal on it, and
// the next move waits until the pod is gone and its controller's replacement is bound. A pod
// that is no longer where the plan found it stops the run: the caller plans again.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "advise/plan.h"

namespace ksched::client {
class RestClient;
}

namespace ksched::app {

struct ApplyOptions {
  std::optional<int64_t> gracePeriodSeconds;  // nullopt: each pod's own
  std::chrono::milliseconds interval{1000};   // at least this long between two evictions
  std::chrono::seconds timeout{300};          // per move: refusals, the pod's end, replacement
};

struct MoveOutcome {
  std::string pod;      // "namespace/name"
  std::string planned;  // the node the plan gave it
  std::string landed;   // where its replacement was bound ("" when none was seen)
  std::string replacement;
};

struct ApplyResult {
  std::vector<MoveOutcome> done;
  bool changed = false;  // the cluster changed under the plan: plan again
  std::string stopped;   // why the run stopped before the end ("" when it did not)
};

// `say` gets one line per step ("cordoned n1", "evicted default/web-1 from n1; ...").
ApplyResult applyPlan(client::RestClient& rest, const advise::Plan& plan, const ApplyOptions& o,
                      const std::function<void(const std::string&)>& say);

}  // namespace ksched::app
