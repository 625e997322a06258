// The queue's judge: does a cluster event move a pod that waits in unschedulablePods? A pure
// function of the pod, the event and the registrations (ClusterEventWithHint lists) of the
// plugins that rejected or gate it; no queue state. SchedulingQueue decides with it, and the
// plugins' QueueingHint tests (tests/support/hint_test_util.h) ask it the same question, so a
// change of these rules shows in both.
//
// The rules (upstream PriorityQueue.isPodWorthRequeuing):
// - A wildcard event (UnschedulableTimeout, ForceActivate) moves every pod.
// - A pod no plugin rejected (it failed with an error), or ungated in a profile the queue does
//   not know, is moved by every event.
// - Otherwise the pod's judges are the plugins that rejected it, or its gating plugin alone if
//   a PreEnqueue plugin keeps it out of activeQ. A rejecting plugin with no registrations at all
//   is interested in every event; a gating plugin with none is moved by no event.
// - A judge's registration that matches the event moves the pod when it has no hint, when its
//   hint says kQueue, or when its hint throws. The first such registration decides; hints after
//   it are not run.
//
// Thread-safety: the functions are reentrant; the hints they run must be (plugins' hints are).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/cluster_event.h>
#include <ksched/plugin.h>

namespace ksched::queue {

// Profile (schedulerName) -> plugin -> the events it registered, with their hints
// (Framework::enqueueEvents() of each profile).
using QueueingHintMap =
    std::map<std::string, std::map<std::string, std::vector<ClusterEventWithHint>, std::less<>>,
             std::less<>>;

// Which registrations judge a pod's requeueing: those of the plugins that rejected (or gate)
// it, in its profile. The pointers borrow from the QueuedPodInfo and the QueueingHintMap they
// were resolved from; both must outlive the Judges.
struct Judges {
  bool always = false;  // no rejecting plugin recorded, or ungated in an unknown profile
  bool gated = false;   // judged by the gate alone; no plugins listed: no event moves it
  // Plugin -> its registrations; nullptr: it registered nothing (interested in everything).
  std::vector<std::pair<const std::string*, const std::vector<ClusterEventWithHint>*>> plugins;
};

// Resolves the judges of `info` in `hints` (its profile is its pod's schedulerName).
[[nodiscard]] Judges judgesFor(const QueuedPodInfo& info, const QueueingHintMap& hints);

// One QueueingHint that ran, for metrics and logs.
struct HintRun {
  std::string_view plugin;
  const ClusterEvent& event;
  std::string_view result;  // "Queue", "QueueSkip" or "Error" (the hint threw)
  double seconds;           // how long the hint took
  std::string_view error;   // the exception's message when result is "Error"
};
using HintObserver = std::function<void(const HintRun&)>;

// The verdict of `judges` on `event` (with the changed object before and after; either may be
// empty) for `pod`: kQueue moves the pod; kSkip: a registration matched the event and every
// matching hint said kSkip; nullopt: no registration matched, or a gating plugin registered
// nothing. Only kQueue moves the pod. `observe`, when set, is called after every hint run.
[[nodiscard]] std::optional<QueueingHint> judge(const Judges& judges, const api::Pod& pod,
                                                const ClusterEvent& event,
                                                const EventObject& oldObj,
                                                const EventObject& newObj,
                                                const HintObserver& observe = {});

}  // namespace ksched::queue
