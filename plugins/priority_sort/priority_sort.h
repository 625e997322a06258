// PrioritySort (QueueSort): higher spec.priority first, then the pod queued earlier.
#pragma once

#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class PrioritySort final : public QueueSortPlugin {
 public:
  static constexpr std::string_view kName = names::kPrioritySort;

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Stateless: thread-safe.
  [[nodiscard]] bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
};

// Takes no args (ignored).
PluginFactory prioritySortFactory();

}  // namespace ksched::plugins
