// The node listers of the pod-group cycle (pod_group_cycle.cc): the snapshot restricted to one
// placement (the scratch copy for workload-aware preemption is <ksched/helper/node_overlay.h>).
// Scheduling thread only.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/node_info.h>

#include "cache/snapshot.h"

namespace ksched::scheduler {

// The snapshot restricted to one placement's nodes (upstream AssumePlacement), in the
// snapshot's order. Holds pointers into the snapshot: refresh() after each update of it.
class PlacementLister final : public NodeInfoLister {
 public:
  PlacementLister(const cache::Snapshot& snapshot, const std::vector<std::string>& nodes)
      : snapshot_(snapshot), names_(nodes.begin(), nodes.end()) {
    refresh();
  }
  void refresh() {
    list_.clear();
    affinity_.clear();
    antiAffinity_.clear();
    for (const NodeInfo* n : snapshot_.list()) {
      if (!names_.contains(n->name())) continue;
      list_.push_back(n);
      if (!n->podsWithAffinity().empty()) affinity_.push_back(n);
      if (!n->podsWithRequiredAntiAffinity().empty()) antiAffinity_.push_back(n);
    }
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& list() const override { return list_; }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithAffinityList() const override {
    return affinity_;
  }
  [[nodiscard]] const std::vector<const NodeInfo*>& havePodsWithRequiredAntiAffinityList()
      const override {
    return antiAffinity_;
  }
  [[nodiscard]] const NodeInfo* get(std::string_view nodeName) const override {
    return snapshot_.get(nodeName);
  }
  [[nodiscard]] bool isPVCUsedByPods(std::string_view key) const override {
    return snapshot_.isPVCUsedByPods(key);
  }

 private:
  const cache::Snapshot& snapshot_;
  const std::set<std::string, std::less<>> names_;
  std::vector<const NodeInfo*> list_, affinity_, antiAffinity_;
};

}  // namespace ksched::scheduler
