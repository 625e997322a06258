// The queue's judge (queue/hints.h) on its own: which rejected or gated pod an event moves.
#include "queue/hints.h"

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <ksched/node_info.h>

namespace ksched::queue {
namespace {

constexpr char kProfile[] = "default-scheduler";
constexpr char kFit[] = "NodeResourcesFit";
constexpr char kTaints[] = "TaintToleration";
constexpr char kGate[] = "SchedulingGates";

const ClusterEvent kNodeAdd{EventResource::kNode, kAdd, {}};
const ClusterEvent kPodDelete{EventResource::kAssignedPod, kDelete, {}};

QueueingHintFn says(QueueingHint h) {
  return [h](const api::Pod&, const EventObject&, const EventObject&) { return h; };
}

QueuedPodInfo rejectedBy(std::vector<std::string> plugins, std::string gate = "") {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.name = "p";
  pod->spec.schedulerName = kProfile;
  QueuedPodInfo info;
  info.podInfo = std::make_shared<const PodInfo>(pod, features::Gates{});
  info.unschedulablePlugins.insert(plugins.begin(), plugins.end());
  info.gatingPlugin = std::move(gate);
  return info;
}

std::optional<QueueingHint> verdict(const QueuedPodInfo& info, const QueueingHintMap& hints,
                                    const ClusterEvent& event) {
  return judge(judgesFor(info, hints), info.pod(), event, {}, {});
}

TEST(QueueJudgeTest, WildcardEventsAndPodsWithoutRejectorsAlwaysMove) {
  const QueueingHintMap hints{{kProfile, {{kFit, {{kNodeAdd, says(QueueingHint::kSkip)}}}}}};
  EXPECT_EQ(verdict(rejectedBy({kFit}), hints, events::kUnschedulableTimeout),
            QueueingHint::kQueue);
  EXPECT_EQ(verdict(rejectedBy({}), hints, kPodDelete), QueueingHint::kQueue);
  // A profile the queue does not know: every event moves the pod, unless it is gated.
  const QueueingHintMap other{{"other", {}}};
  EXPECT_EQ(verdict(rejectedBy({kFit}), other, kPodDelete), QueueingHint::kQueue);
  EXPECT_EQ(verdict(rejectedBy({}, kGate), other, kPodDelete), std::nullopt);
}

TEST(QueueJudgeTest, SkipWhenEveryMatchingHintSkipsAndNothingWhenNoneMatches) {
  const QueueingHintMap hints{{kProfile,
                               {{kFit, {{kNodeAdd, says(QueueingHint::kSkip)}}},
                                {kTaints, {{kNodeAdd, says(QueueingHint::kSkip)}}}}}};
  EXPECT_EQ(verdict(rejectedBy({kFit, kTaints}), hints, kNodeAdd), QueueingHint::kSkip);
  EXPECT_EQ(verdict(rejectedBy({kFit, kTaints}), hints, kPodDelete), std::nullopt);
}

TEST(QueueJudgeTest, AnyRejectorSayingQueueMovesThePod) {
  const QueueingHintMap hints{{kProfile,
                               {{kFit, {{kNodeAdd, says(QueueingHint::kSkip)}}},
                                {kTaints, {ClusterEventWithHint(kNodeAdd)}}}}};
  // TaintToleration's registration has no hint: it counts as kQueue.
  EXPECT_EQ(verdict(rejectedBy({kFit, kTaints}), hints, kNodeAdd), QueueingHint::kQueue);
  // Only the plugins that rejected the pod judge it.
  EXPECT_EQ(verdict(rejectedBy({kFit}), hints, kNodeAdd), QueueingHint::kSkip);
}

TEST(QueueJudgeTest, RejectorWithoutRegistrationsWantsEveryEventButAGateDoesNot) {
  const QueueingHintMap hints{{kProfile, {}}};
  EXPECT_EQ(verdict(rejectedBy({kFit}), hints, kPodDelete), QueueingHint::kQueue);
  EXPECT_EQ(verdict(rejectedBy({kFit}, kGate), hints, kPodDelete), std::nullopt);
}

TEST(QueueJudgeTest, GatedPodIsJudgedByItsGateAlone) {
  const QueueingHintMap hints{{kProfile,
                               {{kFit, {ClusterEventWithHint(kNodeAdd)}},
                                {kGate, {{kPodDelete, says(QueueingHint::kSkip)}}}}}};
  const QueuedPodInfo gated = rejectedBy({kFit}, kGate);
  EXPECT_EQ(verdict(gated, hints, kNodeAdd), std::nullopt);
  EXPECT_EQ(verdict(gated, hints, kPodDelete), QueueingHint::kSkip);
}

TEST(QueueJudgeTest, ThrowingHintCountsAsQueueAndEveryRunIsObserved) {
  const QueueingHintMap hints{
      {kProfile,
       {{kFit,
         {{kNodeAdd, says(QueueingHint::kSkip)},
          {kNodeAdd,
           [](const api::Pod&, const EventObject&, const EventObject&) -> QueueingHint {
             throw std::runtime_error("boom");
           }},
          {kNodeAdd, says(QueueingHint::kSkip)}}}}}};
  const QueuedPodInfo info = rejectedBy({kFit});
  std::vector<std::string> runs;
  const auto got =
      judge(judgesFor(info, hints), info.pod(), kNodeAdd, {}, {}, [&](const HintRun& run) {
        runs.push_back(std::string(run.plugin) + ":" + std::string(run.result) + ":" +
                       std::string(run.error));
        EXPECT_GE(run.seconds, 0.0);
      });
  EXPECT_EQ(got, QueueingHint::kQueue);
  // The first registration that moves the pod decides: the third hint does not run.
  EXPECT_EQ(runs, (std::vector<std::string>{"NodeResourcesFit:QueueSkip:",
                                            "NodeResourcesFit:Error:boom"}));
}

}  // namespace
}  // namespace ksched::queue
