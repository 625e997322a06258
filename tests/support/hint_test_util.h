// QueueingHint tests: what a plugin's registrations answer for one event, as the scheduling
// queue asks them (SchedulingQueue::worthRequeuing).
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <ksched/cluster_event.h>
#include <ksched/plugin.h>

namespace ksched::plugins::testutil {

// kQueue if a registration covering `event` has no hint or its hint says kQueue (a throwing
// hint counts as kQueue), kSkip if every covering registration says kSkip, nullopt if none
// covers the event.
[[nodiscard]] inline std::optional<QueueingHint> hintFor(const EnqueueExtensions& ext,
                                                         const ClusterEvent& event,
                                                         const api::Pod& pod,
                                                         const EventObject& oldObj,
                                                         const EventObject& newObj) {
  std::optional<QueueingHint> out;
  for (const ClusterEventWithHint& reg : ext.eventsToRegister()) {
    if (!reg.event.matches(event)) continue;
    QueueingHint h = QueueingHint::kQueue;
    if (reg.hint) {
      try {
        h = reg.hint(pod, oldObj, newObj);
      } catch (const std::exception&) {
        h = QueueingHint::kQueue;
      }
    }
    if (h == QueueingHint::kQueue) return h;
    out = h;
  }
  return out;
}

[[nodiscard]] inline ClusterEvent event(EventResource r, uint32_t actions) {
  return {r, actions, {}};
}

// An EventObject holding a copy of `obj`.
template <typename T>
[[nodiscard]] EventObject obj(T o) {
  return std::make_shared<const T>(std::move(o));
}

[[nodiscard]] inline std::string hintName(const std::optional<QueueingHint>& h) {
  if (!h) return "not registered";
  return *h == QueueingHint::kQueue ? "Queue" : "QueueSkip";
}

}  // namespace ksched::plugins::testutil
