#include "queue/hints.h"

#include <chrono>
#include <exception>

namespace ksched::queue {

Judges judgesFor(const QueuedPodInfo& info, const QueueingHintMap& hints) {
  Judges j;
  j.gated = !info.gatingPlugin.empty();
  if (!j.gated && info.unschedulablePlugins.empty()) {
    j.always = true;
    return j;
  }
  auto profile = hints.find(info.pod().spec.schedulerName);
  if (profile == hints.end()) {
    j.always = !j.gated;
    return j;
  }
  auto add = [&](const std::string& plugin) {
    auto regs = profile->second.find(plugin);
    j.plugins.emplace_back(&plugin, regs == profile->second.end() ? nullptr : &regs->second);
  };
  if (j.gated) {
    add(info.gatingPlugin);
  } else {
    for (const std::string& plugin : info.unschedulablePlugins) add(plugin);
  }
  return j;
}

std::optional<QueueingHint> judge(const Judges& judges, const api::Pod& pod,
                                  const ClusterEvent& event, const EventObject& oldObj,
                                  const EventObject& newObj, const HintObserver& observe) {
  using Clock = std::chrono::steady_clock;
  if (event.isWildcard() || judges.always) return QueueingHint::kQueue;
  std::optional<QueueingHint> verdict;
  for (const auto& [plugin, regs] : judges.plugins) {
    // A gated pod moves only on its gating plugin's own events; a rejecting plugin that
    // registered nothing is interested in everything.
    if (regs == nullptr) {
      if (judges.gated) return std::nullopt;
      return QueueingHint::kQueue;
    }
    for (const ClusterEventWithHint& reg : *regs) {
      if (!reg.event.matches(event)) continue;
      if (!reg.hint) return QueueingHint::kQueue;
      const auto start = Clock::now();
      QueueingHint h = QueueingHint::kQueue;
      std::string_view result;
      std::string error;
      try {
        h = reg.hint(pod, oldObj, newObj);
        result = h == QueueingHint::kQueue ? "Queue" : "QueueSkip";
      } catch (const std::exception& ex) {
        result = "Error";
        error = ex.what();
      }
      if (observe) {
        observe(HintRun{.plugin = *plugin,
                        .event = event,
                        .result = result,
                        .seconds = std::chrono::duration<double>(Clock::now() - start).count(),
                        .error = error});
      }
      if (h == QueueingHint::kQueue) return QueueingHint::kQueue;
      verdict = QueueingHint::kSkip;
    }
  }
  return verdict;
}

}  // namespace ksched::queue
