// In-tree plugin tests: the public fakes (<ksched/testing/fakes.h>) plus a Handle over a real
// cache::Snapshot.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include <ksched/plugin.h>
#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"

namespace ksched::plugins::testutil {

using namespace ::ksched::testing;  // NOLINT(google-build-using-namespace)

// The snapshot is a real cache::Snapshot (affinity lists and image spread computed).
class SnapshotHandle final : public HandleBase {
 public:
  explicit SnapshotHandle(cache::Snapshot s) : snapshot_(std::move(s)) {}
  SnapshotHandle(std::vector<PodPtr> pods, std::vector<NodePtr> nodes)
      : snapshot_(cache::Snapshot::fromForTest(std::move(pods), std::move(nodes))) {}
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return snapshot_; }
  [[nodiscard]] const cache::Snapshot& cacheSnapshot() const { return snapshot_; }

 private:
  cache::Snapshot snapshot_;
};

// What `plugin` says of its rejection of node `nodeName` (FilterExplainer), asked as explain asks
// it: after its PreFilter (when it has one) over `snapshot`, in the same CycleState, and its
// Filter on that node. A test failure, and no details, when the Filter does not reject it.
inline std::vector<std::string> explainAfterFilter(Plugin& plugin, const NodeInfoLister& snapshot,
                                                   const api::Pod& pod, std::string_view nodeName) {
  CycleState state;
  if (auto* pre = dynamic_cast<PreFilterPlugin*>(&plugin)) {
    PreFilterResult result;
    const Status s = pre->preFilter(state, pod, snapshot, result);
    if (!s.ok() && !s.isSkip()) {
      ADD_FAILURE() << "PreFilter: " << s.message();
      return {};
    }
  }
  const NodeInfo* node = snapshot.get(nodeName);
  const auto* filter = dynamic_cast<const FilterPlugin*>(&plugin);
  const auto* explainer = dynamic_cast<const FilterExplainer*>(&plugin);
  if (node == nullptr || filter == nullptr || explainer == nullptr) {
    ADD_FAILURE() << "no node " << nodeName << ", or the plugin is no FilterExplainer";
    return {};
  }
  const Status s = filter->filter(state, pod, *node);
  if (!s.isRejected()) {
    ADD_FAILURE() << plugin.name() << " did not reject " << nodeName << ": " << s.message();
    return {};
  }
  return explainer->explainRejection(state, pod, *node);
}

}  // namespace ksched::plugins::testutil
