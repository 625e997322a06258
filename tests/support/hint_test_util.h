// QueueingHint tests: what the scheduling queue decides on one event for a pod that only the
// plugin under test rejected. The queue's own judge (queue/hints.h) decides, so a change of the
// queue's rules shows in every plugin's hint tests.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <ksched/cluster_event.h>
#include <ksched/node_info.h>
#include <ksched/plugin.h>

#include "queue/hints.h"

namespace ksched::plugins::testutil {

// kQueue: the event moves the pod (a matching registration has no hint, or its hint says kQueue
// or throws); kSkip: every matching registration's hint said kSkip; nullopt: no registration of
// `ext` matches the event.
[[nodiscard]] inline std::optional<QueueingHint> hintFor(const EnqueueExtensions& ext,
                                                         const ClusterEvent& event,
                                                         const api::Pod& pod,
                                                         const EventObject& oldObj,
                                                         const EventObject& newObj) {
  const auto* plugin = dynamic_cast<const Plugin*>(&ext);
  const std::string name = plugin != nullptr ? std::string(plugin->name()) : "PluginUnderTest";
  const queue::QueueingHintMap hints{{pod.spec.schedulerName, {{name, ext.eventsToRegister()}}}};
  QueuedPodInfo info;
  info.podInfo = std::make_shared<const PodInfo>(std::make_shared<const api::Pod>(pod), features::Gates{});
  info.unschedulablePlugins.insert(name);
  return queue::judge(queue::judgesFor(info, hints), pod, event, oldObj, newObj);
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
