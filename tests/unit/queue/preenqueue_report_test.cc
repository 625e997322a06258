// The PreEnqueue verdicts the queue reports for the pod's status (SchedulerPreEnqueuePodStatus):
// only changes of the message, starting from what the pod's condition already says.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/pod.h>

#include "queue/scheduling_queue.h"

namespace ksched::queue {
namespace {

using std::chrono::milliseconds;
using Kind = SchedulingQueue::QueueKind;

constexpr char kHold[] = "TestHold";

// "<pod>:<message>", "" for a cleared one.
using Reports = std::vector<std::string>;

std::shared_ptr<api::Pod> makePod(const std::string& name, const std::string& hold = "",
                                  std::vector<std::string> gates = {}) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.name = name;
  p->metadata.namespace_ = "ns";
  p->metadata.uid = "uid-" + name;
  p->metadata.resourceVersion = "1";
  p->spec.schedulerName = "default-scheduler";
  if (!hold.empty()) p->metadata.annotations["hold"] = hold;
  p->spec.schedulingGates = std::move(gates);
  return p;
}

// The same pod, held with another message ("" releases it).
PodPtr holding(const PodPtr& pod, const std::string& hold) {
  auto p = std::make_shared<api::Pod>(*pod);
  if (hold.empty()) {
    p->metadata.annotations.erase("hold");
  } else {
    p->metadata.annotations["hold"] = hold;
  }
  p->metadata.resourceVersion += "1";
  return p;
}

// SchedulingGates first (with upstream's plugin name), then TestHold: the "hold" annotation's
// value is the rejection message; "-" rejects without a message.
Status preEnqueue(const api::Pod& pod) {
  if (!pod.spec.schedulingGates.empty()) {
    return Status::unresolvable("waiting for scheduling gates: [g]").withPlugin("SchedulingGates");
  }
  auto it = pod.metadata.annotations.find("hold");
  if (it == pod.metadata.annotations.end()) return {};
  if (it->second == "-") return Status(Code::kUnschedulableAndUnresolvable, {}).withPlugin(kHold);
  return Status::unresolvable(it->second).withPlugin(kHold);
}

struct Fixture {
  explicit Fixture(bool report = true) {
    Options o;
    if (report) {
      o.onPreEnqueueRejection = [this](const PodPtr& pod, const std::string& message) {
        if (!writing) return false;
        reports.push_back(pod->metadata.name + ":" + message);
        return true;
      };
    }
    // Every change of a held pod re-runs PreEnqueue (TestHold registers nothing).
    q = std::make_unique<SchedulingQueue>(std::move(o), nullptr, preEnqueue, QueueingHintMap{});
  }
  Reports reports;
  bool writing = true;  // what the callback answers
  std::unique_ptr<SchedulingQueue> q;
};

TEST(PreEnqueueReportTest, ARejectionIsReportedOnceUntilItsMessageChanges) {
  Fixture f;
  auto p = makePod("p", "gang g has 1 of 3 pods");
  f.q->add(p);
  EXPECT_EQ(f.reports, Reports{"p:gang g has 1 of 3 pods"});
  EXPECT_EQ(f.q->preEnqueueRejectionOf("uid-p"), "gang g has 1 of 3 pods");
  // Re-checked with the same verdict (an unrelated change): nothing new to say.
  auto p2 = std::make_shared<api::Pod>(*holding(p, "gang g has 1 of 3 pods"));
  p2->metadata.labels["x"] = "y";
  f.q->update(p, p2);
  f.q->activate({p2});
  EXPECT_EQ(f.reports.size(), 1u);
  // Another message is reported.
  auto p3 = holding(p2, "gang g has 2 of 3 pods");
  f.q->update(p2, p3);
  EXPECT_EQ(f.reports, (Reports{"p:gang g has 1 of 3 pods", "p:gang g has 2 of 3 pods"}));
  // Passes: the condition is outdated, and the pod is no longer held back.
  auto p4 = holding(p3, "");
  f.q->update(p3, p4);
  EXPECT_EQ(f.reports.back(), "p:");
  EXPECT_EQ(f.reports.size(), 3u);
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kActive), std::vector<std::string>{"ns/p"});
  EXPECT_EQ(f.q->preEnqueueRejectionOf("uid-p"), "");
}

TEST(PreEnqueueReportTest, APodThatNeverWasRejectedReportsNothing) {
  Fixture f;
  f.q->add(makePod("p"));
  auto info = f.q->popFor({}, milliseconds(0));
  ASSERT_NE(info, nullptr);
  info->unschedulablePlugins = {"NodeResourcesFit"};
  ASSERT_TRUE(f.q->addUnschedulableIfNotPresent(std::move(info), f.q->schedulingCycle()));
  f.q->moveAllToActiveOrBackoffQueue(events::kUnschedulableTimeout);
  EXPECT_TRUE(f.reports.empty());
}

TEST(PreEnqueueReportTest, StartsFromWhatThePodsConditionSays) {
  Fixture f;
  // A scheduler before this one wrote the rejection.
  auto p = makePod("p", "gang incomplete");
  p->status.conditions.push_back(
      {"PodScheduled", "False", "NotReadyForScheduling", "gang incomplete", ""});
  f.q->add(p);
  EXPECT_TRUE(f.reports.empty());
  EXPECT_EQ(f.q->preEnqueueRejectionOf("uid-p"), "gang incomplete");
  // And it is cleared when the pod passes.
  f.q->update(p, holding(p, ""));
  EXPECT_EQ(f.reports, Reports{"p:"});

  // A condition of another reason with the same words is not the rejection.
  auto r = makePod("r", "gang incomplete");
  r->status.conditions.push_back({"PodScheduled", "False", "Unschedulable", "gang incomplete", ""});
  f.q->add(r);
  EXPECT_EQ(f.reports, (Reports{"p:", "r:gang incomplete"}));

  // A pod that passes with such a condition has nothing to clear.
  auto s = makePod("s");
  s->status.conditions.push_back(
      {"PodScheduled", "False", "Unschedulable", "0/3 nodes are available", ""});
  f.q->add(s);
  EXPECT_EQ(f.reports.size(), 2u);
}

TEST(PreEnqueueReportTest, SchedulingGatesAndRejectionsWithoutAMessageAreNotReported) {
  Fixture f;
  // The apiserver says SchedulingGated itself.
  auto g = makePod("g", "", {"g"});
  f.q->add(g);
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kGated), std::vector<std::string>{"ns/g"});
  // Gates removed, held by TestHold now: that is reported.
  auto g2 = std::make_shared<api::Pod>(*holding(g, "waiting for quota"));
  g2->spec.schedulingGates.clear();
  f.q->update(g, g2);
  EXPECT_EQ(f.reports, Reports{"g:waiting for quota"});

  f.q->add(makePod("n", "-"));
  EXPECT_EQ(f.reports.size(), 1u);
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kGated), (std::vector<std::string>{"ns/g", "ns/n"}));
}

TEST(PreEnqueueReportTest, NothingIsReportedWithoutTheCallback) {
  Fixture f(/*report=*/false);
  auto p = makePod("p", "held");
  f.q->add(p);
  f.q->update(p, holding(p, ""));
  EXPECT_TRUE(f.reports.empty());
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kActive), std::vector<std::string>{"ns/p"});
}

TEST(PreEnqueueReportTest, AVerdictNotWrittenIsReportedAgainLater) {
  // A follower's queue: the scheduler writes nothing yet.
  Fixture f;
  f.writing = false;
  f.q->add(makePod("p", "held"));
  f.q->add(makePod("free"));
  EXPECT_TRUE(f.reports.empty());
  // Leading now: the held pods' verdicts are checked again and reported.
  f.writing = true;
  f.q->recheckGated();
  EXPECT_EQ(f.reports, Reports{"p:held"});
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kGated), std::vector<std::string>{"ns/p"});
  EXPECT_EQ(f.q->pendingPodKeysForTest(Kind::kActive), std::vector<std::string>{"ns/free"});
  f.q->recheckGated();
  EXPECT_EQ(f.reports.size(), 1u);
}

}  // namespace
}  // namespace ksched::queue
