#include "plugins/priority_sort/priority_sort.h"

#include <ksched/api/pod.h>

namespace ksched::plugins {

bool PrioritySort::less(const QueuedPodInfo& a, const QueuedPodInfo& b) const {
  const int32_t p1 = api::podPriority(a.pod());
  const int32_t p2 = api::podPriority(b.pod());
  return p1 > p2 || (p1 == p2 && a.timestamp < b.timestamp);
}

PluginFactory prioritySortFactory() {
  return makePluginFactory<PrioritySort>([](Handle&) { return std::make_unique<PrioritySort>(); });
}

}  // namespace ksched::plugins
