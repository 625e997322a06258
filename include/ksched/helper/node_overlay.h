// NodeOverlay: a snapshot (`base`) with pods added to or removed from copies of some of its
// nodes, for trying a placement without touching the scheduler's cache: workload-aware
// preemption takes victims out and the pod-group cycle puts a group's pods in. The base is never
// changed and must outlive the overlay; call rebuild() after add/remove and before reading the
// lists. Restricted to some nodes (a pod group's placement: one rack), list() holds only those
// (get() still finds any). Not thread-safe (the scheduling thread's).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/node_info.h>

namespace ksched::helper {

class NodeOverlay final : public NodeInfoLister {
 public:
  explicit NodeOverlay(const NodeInfoLister& base) : base_(base) { rebuild(); }
  NodeOverlay(const NodeInfoLister& base, const std::vector<std::string>& only)
      : base_(base), only_(only.begin(), only.end()), restricted_(true) {
    rebuild();
  }

  // On the node the pod names (spec.nodeName); a node the base does not know is ignored.
  void add(const PodInfoPtr& pod) {
    if (NodeInfo* n = mutableNode(pod->pod->spec.nodeName)) n->addPod(pod);
  }
  void remove(const PodInfoPtr& pod) {
    if (NodeInfo* n = mutableNode(pod->pod->spec.nodeName)) n->removePod(pod->pod->metadata.uid);
  }
  void rebuild() {
    list_.clear();
    affinity_.clear();
    antiAffinity_.clear();
    for (const NodeInfo* n : base_.list()) {
      if (restricted_ && !only_.contains(n->name())) continue;
      const NodeInfo* mine = get(n->name());
      list_.push_back(mine);
      if (!mine->podsWithAffinity().empty()) affinity_.push_back(mine);
      if (!mine->podsWithRequiredAntiAffinity().empty()) antiAffinity_.push_back(mine);
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
    auto it = owned_.find(nodeName);
    return it != owned_.end() ? it->second.get() : base_.get(nodeName);
  }
  [[nodiscard]] bool isPVCUsedByPods(std::string_view key) const override {
    return base_.isPVCUsedByPods(key);
  }

 private:
  NodeInfo* mutableNode(const std::string& name) {
    auto it = owned_.find(name);
    if (it == owned_.end()) {
      const NodeInfo* n = base_.get(name);
      if (n == nullptr) return nullptr;
      it = owned_.emplace(name, n->clone()).first;
    }
    return it->second.get();
  }

  const NodeInfoLister& base_;
  const std::set<std::string, std::less<>> only_;
  const bool restricted_ = false;
  std::map<std::string, std::shared_ptr<NodeInfo>, std::less<>> owned_;
  std::vector<const NodeInfo*> list_, affinity_, antiAffinity_;
};

}  // namespace ksched::helper
