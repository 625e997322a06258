// GangScheduling (PreEnqueue, Reserve, PlacementFeasible, EnqueueExtensions): kube-scheduler's
// gang scheduling of the Workload API (KEP-4671). A pod joins the PodGroup named by its
// spec.schedulingGroup.podGroupName (scheduling.k8s.io, in the pod's namespace); a PodGroup's
// spec.schedulingPolicy is basic (no gang) or gang with a minCount.
//
//   PreEnqueue:        keeps a member pod out of the active queue until its PodGroup exists and,
//                      for a gang, until minCount of its members are known (pending, assumed or
//                      bound). With the CompositePodGroup gate, a PodGroup that has a parent waits
//                      instead until its tree's root has enough ready children (recursively: a
//                      PodGroup is ready with minCount members, 1 for basic; a CompositePodGroup
//                      with minGroupCount ready children, 1 for basic).
//   PlacementFeasible: the pod-group cycle asks it before the first pod and after each: Success
//                      once minCount members are placed (those placed in the cycle plus those
//                      bound or reserved before it), Wait while the remaining pods could still
//                      make it, Unschedulable once they cannot.
//   Reserve:           counts a member assumed outside the group's cycle as placed (Unreserve
//                      takes it back); both are idempotent.
//   Queueing hints:    a member pod added (pending or bound), its PodGroup added, its gang's
//                      minCount lowered, a CompositePodGroup of its tree added (gate on).
//
// PodGroups (and, with the CompositePodGroup gate, CompositePodGroups) come from the plugin's
// own watch; it reports their adds, updates and deletes to the queue with the typed objects.
// Without the Workload API served (an older cluster, RBAC) nothing is watched and every member
// pod waits for its PodGroup.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <ksched/api/pod_group.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/pod_group_plugin.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class GangScheduling final : public PreEnqueuePlugin,
                             public ReservePlugin,
                             public PlacementFeasiblePlugin,
                             public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = names::kGangScheduling;

  // Registers its pod handlers and the PodGroup (and CompositePodGroup) watches with `handle`.
  explicit GangScheduling(Handle& handle);
  GangScheduling(const GangScheduling&) = delete;
  GangScheduling& operator=(const GangScheduling&) = delete;

  [[nodiscard]] std::string_view name() const override { return kName; }

  Status preEnqueue(const api::Pod& pod) override;
  Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  Status placementFeasible(CycleState& state, const PodGroupInfo& group,
                           const PlacementProgress& progress) override;
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;

  // The queueing hints (public for unit tests).
  [[nodiscard]] QueueingHint podAddedHint(const api::Pod& pod, const EventObject& oldObj,
                                          const EventObject& newObj) const;
  [[nodiscard]] QueueingHint podGroupAddedHint(const api::Pod& pod, const EventObject& oldObj,
                                               const EventObject& newObj) const;
  [[nodiscard]] QueueingHint podGroupUpdatedHint(const api::Pod& pod, const EventObject& oldObj,
                                                 const EventObject& newObj) const;
  [[nodiscard]] QueueingHint compositePodGroupAddedHint(const api::Pod& pod,
                                                        const EventObject& oldObj,
                                                        const EventObject& newObj) const;

  // What the handlers do (public for unit tests): pod events; watched objects as served (one
  // that does not decode is logged once and skipped); and the typed objects they decode to.
  void onPod(const PodPtr& oldPod, const PodPtr& newPod);
  void onPodGroupObject(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj);
  void onCompositePodGroupObject(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj);
  void applyPodGroup(std::shared_ptr<const api::PodGroup> pg);
  void removePodGroup(const std::string& ns, const std::string& name);
  void applyCompositePodGroup(std::shared_ptr<const api::CompositePodGroup> cpg);
  void removeCompositePodGroup(const std::string& ns, const std::string& name);

 private:
  // A PodGroup's or CompositePodGroup's identity: the two kinds have separate names.
  struct GroupKey {
    bool composite = false;
    std::string ns;
    std::string name;
    friend bool operator==(const GroupKey&, const GroupKey&) = default;
  };
  struct Members {
    std::map<std::string, PodPtr> pods;  // key (uid) -> latest version; finished pods left out
    std::set<std::string> reserved;      // keys Reserve counted and Unreserve did not take back
  };
  // Children of a CompositePodGroup ("<ns>/<name>"), by name.
  struct Children {
    std::set<std::string> podGroups;
    std::set<std::string> compositePodGroups;
  };

  // All under mu_.
  [[nodiscard]] size_t memberCount(const std::string& key, const api::Pod* self) const;
  [[nodiscard]] bool podGroupReady(const std::string& ns, const std::string& name,
                                   const api::Pod* self) const;
  [[nodiscard]] int32_t readyChildren(const std::string& ns, const std::string& cpgName,
                                      const api::Pod* self, int depth) const;
  [[nodiscard]] std::optional<GroupKey> rootOf(GroupKey key) const;
  [[nodiscard]] bool sameHierarchy(const api::Pod& pod, const GroupKey& target) const;
  // Moves `child` from under `oldParent` to under `newParent` in children_.
  void relink(const std::string& ns, const std::optional<std::string>& oldParent,
              const std::optional<std::string>& newParent, const std::string& child,
              bool composite);
  [[nodiscard]] Status treeQuorum(const api::Pod& pod, const std::string& parent) const;
  void warnMalformed(std::string_view kind, const std::string& key, const std::string& what);

  Handle& handle_;
  const bool compositeEnabled_;  // the CompositePodGroup gate, read at construction
  std::vector<std::shared_ptr<const ObjectStore>> stores_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<const api::PodGroup>> podGroups_;
  std::unordered_map<std::string, std::shared_ptr<const api::CompositePodGroup>> composites_;
  std::unordered_map<std::string, Children> children_;  // by parent CompositePodGroup key
  std::unordered_map<std::string, Members> members_;    // by PodGroup key
  std::set<std::string> malformed_;                     // "<kind> <ns>/<name>" logged
};

// Takes no args (any given are ignored, as upstream's plugin has none).
PluginFactory gangSchedulingFactory();

}  // namespace ksched::plugins
