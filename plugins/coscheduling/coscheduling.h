// Coscheduling (QueueSort, PreFilter, PostFilter, Reserve, Permit): all-or-nothing placement of
// a group of pods, compatible with scheduler-plugins' Coscheduling and its PodGroup API
// (podgroup.h says how a pod names its group). Built on the public plugin API only.
//
//   QueueSort:  priority (higher first), then the group's creation time (the PodGroup's; for a
//               label-form group its first pod's; for a pod without a group its first attempt),
//               then the group, then the pod: a group's pods leave the queue together.
//   PreFilter:  rejects (UnschedulableAndUnresolvable) a pod whose PodGroup does not exist, whose
//               group is backing off, has fewer than minMember pods, or whose minResources the
//               cluster cannot hold (free room counted with the group's own pods taken out).
//   Reserve:    counts the pod as assigned to its group (Unreserve takes it back and rejects
//               every pod of the group waiting at Permit).
//   Permit:     Wait (scheduleTimeoutSeconds, else permitWaitingTimeSeconds) until minMember
//               pods of the group are assigned, then allows them all. The group's first waiting
//               pod activates its pending siblings.
//   PostFilter: when a pod of a group cannot fit and the group is more than 10% short of
//               minMember, rejects the group's waiting pods (their room is freed at once), backs
//               the group off for podGroupBackoffSeconds, and records a FailedScheduling Event
//               on the PodGroup. PreFilter then turns the group away until room frees up (an
//               assigned pod of another group, or of none, deleted; a node added or grown), unless
//               some did that the failing pod's cycle did not see (after its PreFilter, or
//               before it but missing from its snapshot).
//
// PodGroup status (phase, scheduled/running/succeeded/failed, scheduleStartTime, occupiedBy) is
// kept by this plugin, on its own thread, once the instance schedules (the leader), as
// scheduler-plugins' controller keeps it.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

#include "plugins/coscheduling/podgroup.h"

namespace ksched::plugins {

// CoschedulingArgs (scheduler-plugins config v1).
struct CoschedulingArgs {
  int64_t permitWaitingTimeSeconds = 60;  // JSON "permitWaitingTimeSeconds", >= 0
  int64_t podGroupBackoffSeconds = 0;     // JSON "podGroupBackoffSeconds", >= 0; 0 = none

  // Decodes strictly (null: defaults) and validates. Throws PluginArgsError.
  [[nodiscard]] static CoschedulingArgs fromJson(const nlohmann::json& j);
};

class Coscheduling final : public QueueSortPlugin,
                           public PreFilterPlugin,
                           public PostFilterPlugin,
                           public ReservePlugin,
                           public PermitPlugin,
                           public EnqueueExtensions {
 public:
  static constexpr std::string_view kName = names::kCoscheduling;

  // Registers its pod handlers and the PodGroup watch with `handle`.
  Coscheduling(CoschedulingArgs args, Handle& handle);
  ~Coscheduling() override;
  Coscheduling(const Coscheduling&) = delete;
  Coscheduling& operator=(const Coscheduling&) = delete;

  [[nodiscard]] std::string_view name() const override { return kName; }
  void start() override;
  void close() override;

  [[nodiscard]] bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override;
  Status preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& nodes,
                   PreFilterResult& result) override;
  std::pair<PostFilterResult, Status> postFilter(CycleState& state, const api::Pod& pod,
                                                 const NodeToStatus& filteredStatuses) override;
  Status reserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  void unreserve(CycleState& state, const api::Pod& pod, const std::string& nodeName) override;
  Status permit(CycleState& state, const api::Pod& pod, const std::string& nodeName,
                std::chrono::milliseconds& timeout) override;
  // Room freed up: an assigned pod of another group deleted, a node added or grown (a pod of
  // the same group unreserved does not count: the group just let it go).
  [[nodiscard]] std::vector<ClusterEventWithHint> eventsToRegister() const override;
  [[nodiscard]] QueueingHint roomHint(const api::Pod& pod, const EventObject& oldObj,
                                      const EventObject& newObj) const;

  // Pod and PodGroup events (public for unit tests; the handlers call them).
  void onPod(const PodPtr& oldPod, const PodPtr& newPod);
  void onPodGroup(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj);

  // The status the group `ns/name` should have now (unit tests); nullopt for an unknown group.
  [[nodiscard]] std::optional<coscheduling::PodGroupStatus> desiredStatus(
      const std::string& key) const;

 private:
  struct Group {
    std::shared_ptr<const coscheduling::PodGroup> podGroup;  // null: none (label form, missing)
    std::map<std::string, PodPtr> pods;                      // uid -> the informer's latest version
    std::set<std::string> reserved;                          // uids reserved and not yet seen bound
    std::chrono::steady_clock::time_point backoffUntil{};
    std::chrono::steady_clock::time_point permittedUntil{};  // minResources check passed
    std::chrono::system_clock::time_point created{};         // QueueSort key
    std::string scheduleStartTime;                           // when it first had enough pods
    // PreFilter turns the group's pods away while PostFilter released it for want of room and
    // no room has freed up for it since that pod's PreFilter began (roomEpoch() still
    // releasedAtEpoch). Bounded, as a backstop, by releasedUntil (kReleasedFor after it).
    std::chrono::steady_clock::time_point releasedUntil{};
    uint64_t releasedAtEpoch = 0;
    uint64_t ownRoomEvents = 0;  // the room events of roomEvents_ that its own pods caused
  };
  static constexpr std::chrono::minutes kReleasedFor{5};

  // All under mu_.
  [[nodiscard]] static int32_t minMember(const Group& g, const coscheduling::GroupRef& ref);
  [[nodiscard]] static int activeCount(const Group& g);
  [[nodiscard]] static int assignedCount(const Group& g, std::string_view exceptUid);
  [[nodiscard]] static std::vector<PodPtr> pendingPods(const Group& g);
  void updateCreated(Group& g, const coscheduling::GroupRef& ref);
  void markDirty(const std::string& key);
  [[nodiscard]] coscheduling::PodGroupStatus computeStatus(const Group& g,
                                                           const coscheduling::PodGroup& pg) const;

  [[nodiscard]] std::chrono::system_clock::time_point sortTime(const QueuedPodInfo& qpi,
                                                               std::string& groupKey) const;
  [[nodiscard]] Status checkMinResources(const Group& g, const coscheduling::GroupRef& ref,
                                         const coscheduling::PodGroup& pg,
                                         const NodeInfoLister& nodes) const;
  void rejectWaiting(const coscheduling::GroupRef& ref, const std::string& message);
  [[nodiscard]] std::chrono::milliseconds waitTime(const Group& g) const;
  void writeStatus(std::stop_token st);

  // Constant after construction.
  const CoschedulingArgs args_;
  Handle& handle_;
  // steady_clock -> system_clock, for pods without a group in QueueSort.
  const std::chrono::system_clock::duration steadyToSystem_;
  std::shared_ptr<const ObjectStore> podGroups_;

  // Room freed (an assigned pod deleted; a node added or grown, seen through the queueing
  // hint), by a pod of group `by` if not empty. Counted, not flagged: a failure decided on a
  // snapshot older than the last such event must not release the group, whichever thread sees
  // the event first; and a group's own pods freeing room do not count for it.
  // The event is also kept a while (RoomEvent) so that PostFilter can tell whether its cycle's
  // snapshot shows it: an event counted before the pod's PreFilter may still be missing from
  // a snapshot taken earlier (the cache and the snapshot are updated after the handlers run).
  struct RoomEvent {
    std::string by;           // the group whose pod freed it, or ""
    std::string node;         // the node with the room
    std::string podUid;       // the pod that left it, or "" for a node added or grown
    std::string nodeVersion;  // that node's resourceVersion after the event (node events)
    std::chrono::steady_clock::time_point at;
  };
  // Counts and keeps the event (by; node; podUid or nodeVersion), once if the hint reports it
  // again for each pending pod.
  void roomFreedBy(const std::string& by, std::string_view node, std::string_view podUid,
                   std::string_view nodeVersion) const;
  [[nodiscard]] uint64_t roomEpoch(const Group& g) const { return roomEvents_ - g.ownRoomEvents; }
  // Whether `snapshot` misses a room event kept in recentRoom_ that group `key` did not cause
  // (a deleted pod still on its node, a node added or grown not there as the event left it).
  [[nodiscard]] bool missesRoom(const std::string& key, const NodeInfoLister& snapshot) const;
  // Room events are kept this long (a cycle's snapshot is far younger), at most kMaxRecent.
  static constexpr std::chrono::seconds kRecentFor{30};
  static constexpr size_t kMaxRecent = 4096;

  mutable std::mutex mu_;
  mutable uint64_t roomEvents_ = 0;           // guarded by mu_
  mutable std::deque<RoomEvent> recentRoom_;  // guarded by mu_, oldest first
  // When recentRoom_ last dropped an event younger than kRecentFor (too many at once): until
  // kRecentFor after it, every snapshot counts as missing room.
  mutable std::chrono::steady_clock::time_point recentDroppedAt_{};  // guarded by mu_
  mutable std::unordered_map<std::string, Group> groups_;            // guarded by mu_
  std::set<std::string> dirty_;  // guarded by mu_: groups whose status to write
  std::map<std::string, coscheduling::PodGroupStatus> written_;  // writer thread only
  std::condition_variable_any cv_;
  std::jthread writer_;
};

// Decodes and validates CoschedulingArgs (throws PluginArgsError).
PluginFactory coschedulingFactory();

}  // namespace ksched::plugins
