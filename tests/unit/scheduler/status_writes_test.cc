#include "scheduler/status_writes.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/pod.h>

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using Write = StatusWrites::Write;

// A pod as the feed shows it: PodScheduled=False `reason`/`message` (none when reason is
// empty) and its nomination.
PodPtr fedPod(const std::string& uid, const std::string& reason = "",
              const std::string& message = "", const std::string& nominated = "") {
  auto pod = std::make_shared<api::Pod>();
  pod->metadata.uid = uid;
  if (!reason.empty())
    pod->status.conditions.push_back({"PodScheduled", "False", reason, message, ""});
  pod->status.nominatedNodeName = nominated;
  return pod;
}

PodPtr podOf(const std::string& uid) { return fedPod(uid); }

Write failure(const std::string& uid, const std::string& message,
              std::optional<std::string> nominated = std::nullopt) {
  return Write::podScheduledFalse(podOf(uid), "Unschedulable", message, std::move(nominated));
}

Write notReady(const std::string& uid, const std::string& message) {
  return Write::podScheduledFalse(podOf(uid), "NotReadyForScheduling", message);
}

// Runs the writer's tasks by hand, so a test decides what is "in flight"; a fake clock for the
// delayed writes; the feed's pods decide what is held already (as the scheduler asks).
struct Harness {
  std::deque<std::function<void()>> tasks;
  std::vector<std::string> sent;  // "uid:<what the condition gets>:nominated"
  bool accepting = true;
  std::function<void()> duringSend;  // called inside the next send (a write arriving meanwhile)
  std::map<std::string, PodPtr> feed;
  StatusWrites::Clock::time_point now{};
  StatusWrites writes{StatusWrites::Options{
      .run =
          [this](std::function<void()> t) {
            if (!accepting) return false;
            tasks.push_back(std::move(t));
            return true;
          },
      .send =
          [this](const Write& w) {
            std::string condition = "-";
            if (w.condition == Write::Condition::kSet) condition = w.reason + "/" + w.message;
            if (w.condition == Write::Condition::kClearNotReady) condition = "clear";
            sent.push_back(w.pod->metadata.uid + ":" + condition + ":" +
                           (w.nominatedNode ? *w.nominatedNode : "-"));
            if (auto f = std::exchange(duringSend, nullptr)) f();
          },
      .held =
          [this](const Write& w) {
            auto it = feed.find(w.pod->metadata.uid);
            return w.addsNothingTo(
                Write::heldBy(it != feed.end() ? it->second : podOf(w.pod->metadata.uid)));
          },
      .clock = [this] { return now; },
      .timerThread = false}};

  void runAll() {
    while (!tasks.empty()) {
      auto t = std::move(tasks.front());
      tasks.pop_front();
      t();
    }
  }
  // Moves the clock on and submits what is due.
  void advance(std::chrono::milliseconds d) {
    now += d;
    writes.sendDue();
  }
};

TEST(StatusWritesTest, WriteTheFeedAlreadyHasIsNotSent) {
  Harness h;
  h.feed["a"] = fedPod("a", "Unschedulable", "m1");
  EXPECT_FALSE(h.writes.submit("a", failure("a", "m1")));
  EXPECT_TRUE(h.tasks.empty());
  // Unless the feed is known to lag.
  EXPECT_TRUE(h.writes.submit("a", failure("a", "m1"), /*consultHeld=*/false));
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:Unschedulable/m1:-"});
  EXPECT_EQ(h.writes.pods(), 0u);
}

TEST(StatusWritesTest, WritesQueuedBehindOneInFlightCollapseToTheLatestInOrder) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m1")));
  // While m1 is being sent, three more attempts fail: only the last waits, and it lands after
  // m1 from the same task (no second task that could overtake it).
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m2")));
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m3")));
    EXPECT_FALSE(h.writes.submit("a", failure("a", "m3")));  // same as waiting
    h.feed["a"] = fedPod("a", "Unschedulable", "m4");        // the feed is not asked
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m4")));
  };
  ASSERT_EQ(h.tasks.size(), 1u);
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:Unschedulable/m1:-", "a:Unschedulable/m4:-"}));
  EXPECT_EQ(h.writes.pods(), 0u);
}

TEST(StatusWritesTest, SameAsTheWriteInFlightIsNotQueued) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m1", "node-1")));
  h.duringSend = [&] {
    // The feed does not have node-1 yet, but the write in flight does.
    EXPECT_FALSE(h.writes.submit("a", failure("a", "m1")));
    EXPECT_FALSE(h.writes.submit("a", failure("a", "m1", "node-1")));
  };
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:Unschedulable/m1:node-1"});
}

TEST(StatusWritesTest, ReplacedWriteKeepsTheNominationItWasToMake) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m1")));
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m2", "node-2")));
    // The next attempt only changes the message: node-2 must still be written.
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m3")));
    // Cleared after all: the clearing wins.
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m4", "")));
  };
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:Unschedulable/m1:-", "a:Unschedulable/m4:"}));

  Harness g;
  ASSERT_TRUE(g.writes.submit("b", failure("b", "m1")));
  g.duringSend = [&] {
    EXPECT_TRUE(g.writes.submit("b", failure("b", "m2", "node-2")));
    EXPECT_TRUE(g.writes.submit("b", failure("b", "m3")));
  };
  g.runAll();
  EXPECT_EQ(g.sent,
            (std::vector<std::string>{"b:Unschedulable/m1:-", "b:Unschedulable/m3:node-2"}));
}

TEST(StatusWritesTest, PodsAreIndependentAndANewWriteFollowsACompletedOne) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m1")));
  ASSERT_TRUE(h.writes.submit("b", failure("b", "m1")));
  EXPECT_EQ(h.tasks.size(), 2u);
  EXPECT_EQ(h.writes.pods(), 2u);
  h.runAll();
  EXPECT_EQ(h.writes.pods(), 0u);
  // Nothing in flight any more: the feed decides again.
  h.feed["a"] = fedPod("a", "Unschedulable", "m1");
  EXPECT_FALSE(h.writes.submit("a", failure("a", "m1")));
  EXPECT_TRUE(h.writes.submit("a", failure("a", "m2")));
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:Unschedulable/m1:-", "b:Unschedulable/m1:-",
                                              "a:Unschedulable/m2:-"}));
}

TEST(StatusWritesTest, NothingIsKeptWhenThePoolNoLongerTakesTasks) {
  Harness h;
  h.accepting = false;
  EXPECT_FALSE(h.writes.submit("a", failure("a", "m1")));
  EXPECT_EQ(h.writes.pods(), 0u);
}

// ---- PreEnqueue rejections: delayed, deduplicated ----

TEST(StatusWritesTest, DelayedWriteIsSentWhenDueAndNotBefore) {
  Harness h;
  h.writes.submitAfter("a", notReady("a", "gang incomplete"), 5s);
  h.advance(4999ms);
  EXPECT_TRUE(h.tasks.empty());
  EXPECT_EQ(h.writes.delayed(), 1u);
  h.advance(1ms);
  EXPECT_EQ(h.writes.delayed(), 0u);
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:NotReadyForScheduling/gang incomplete:-"});
}

TEST(StatusWritesTest, ANewerDelayedWriteReplacesTheWaitingOneAndKeepsItsDueTime) {
  Harness h;
  h.writes.submitAfter("a", notReady("a", "m1"), 5s);
  h.advance(3s);
  // The rejection changed: the new message waits for what is left of the first delay only.
  h.writes.submitAfter("a", notReady("a", "m2"), 5s);
  h.advance(2s);
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:NotReadyForScheduling/m2:-"});
}

TEST(StatusWritesTest, ARejectionThatEndsWithinTheDelayWritesNothing) {
  Harness h;
  h.writes.submitAfter("a", notReady("a", "m1"), 5s);
  h.advance(1s);
  // Passed PreEnqueue: the clearing replaces the rejection never sent, and the feed has no
  // NotReadyForScheduling condition to remove.
  h.writes.submitAfter("a", Write::clearNotReady(podOf("a")), 5s);
  h.advance(10s);
  EXPECT_TRUE(h.tasks.empty());
  EXPECT_TRUE(h.sent.empty());
}

TEST(StatusWritesTest, AWrittenRejectionIsClearedOnceThePodPasses) {
  Harness h;
  h.feed["a"] = fedPod("a", "NotReadyForScheduling", "m1");
  h.writes.submitAfter("a", Write::clearNotReady(podOf("a")), 5s);
  h.advance(5s);
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:clear:-"});
}

TEST(StatusWritesTest, TheSameRejectionAgainBeforeTheClearingIsSentWritesNothing) {
  Harness h;
  h.feed["a"] = fedPod("a", "NotReadyForScheduling", "m1");
  h.writes.submitAfter("a", Write::clearNotReady(podOf("a")), 5s);
  h.advance(1s);
  h.writes.submitAfter("a", notReady("a", "m1"), 5s);
  h.advance(5s);
  EXPECT_TRUE(h.tasks.empty());
  EXPECT_TRUE(h.sent.empty());
}

TEST(StatusWritesTest, ClearingNeverUndoesAnotherReasonsCondition) {
  // An attempt failed after the pod passed: its Unschedulable condition waits behind a write
  // in flight when the clearing comes due.
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m0")));
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m1", "node-1")));
    EXPECT_FALSE(h.writes.submit("a", Write::clearNotReady(podOf("a"))));
  };
  h.runAll();
  EXPECT_EQ(h.sent,
            (std::vector<std::string>{"a:Unschedulable/m0:-", "a:Unschedulable/m1:node-1"}));
  // Against what the feed shows: nothing to clear either.
  h.feed["a"] = fedPod("a", "Unschedulable", "m1");
  EXPECT_FALSE(h.writes.submit("a", Write::clearNotReady(podOf("a"))));
}

TEST(StatusWritesTest, ARejectionKeepsTheNominationOfTheFailureWaitingBeforeIt) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m0")));
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m1", "node-1")));
    EXPECT_TRUE(h.writes.submit("a", notReady("a", "waiting")));
  };
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:Unschedulable/m0:-",
                                              "a:NotReadyForScheduling/waiting:node-1"}));
}

TEST(StatusWritesTest, StopDropsTheDelayedWrites) {
  Harness h;
  h.writes.submitAfter("a", notReady("a", "m1"), 5s);
  h.writes.stop();
  h.advance(10s);
  EXPECT_TRUE(h.tasks.empty());
  EXPECT_EQ(h.writes.delayed(), 0u);
  h.writes.submitAfter("b", notReady("b", "m1"), 5s);
  EXPECT_EQ(h.writes.delayed(), 0u);
}

// ---- nominations of pods being bound ----

TEST(StatusWritesTest, ABindingNominationAndAFailureReplaceEachOtherWhole) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", failure("a", "m0")));
  h.duringSend = [&] {
    // A failure waits; the next attempt reaches Permit and waits there: its nomination is all
    // that is left to write (the failure's condition would be contradicted by the binding).
    EXPECT_TRUE(h.writes.submit("a", failure("a", "m1")));
    EXPECT_TRUE(h.writes.submit("a", Write::nomination(podOf("a"), "node-2")));
  };
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:Unschedulable/m0:-", "a:-:node-2"}));
}

TEST(StatusWritesTest, NominationTheFeedShowsIsNotSentAndClearingNeedsOne) {
  Harness h;
  h.feed["a"] = fedPod("a", "", "", "node-1");
  EXPECT_FALSE(h.writes.submit("a", Write::nomination(podOf("a"), "node-1")));
  EXPECT_TRUE(h.writes.submit("a", Write::nomination(podOf("a"), "")));
  h.feed["b"] = fedPod("b");
  EXPECT_FALSE(h.writes.submit("b", Write::nomination(podOf("b"), "")));
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:-:"});
}

TEST(StatusWritesTest, SettleDropsAWaitingNominationAndWaitsForTheOneInFlight) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", Write::nomination(podOf("a"), "node-1")));
  // Not started yet: dropped, never sent.
  EXPECT_TRUE(h.writes.settle("a"));
  h.runAll();
  EXPECT_TRUE(h.sent.empty());
  EXPECT_EQ(h.writes.pods(), 0u);
  EXPECT_FALSE(h.writes.settle("a"));

  // In flight: settle returns once it has landed.
  std::promise<void> inSend;
  std::promise<void> release;
  auto released = release.get_future().share();
  h.duringSend = [&] {
    inSend.set_value();
    released.wait();
  };
  ASSERT_TRUE(h.writes.submit("b", Write::nomination(podOf("b"), "node-2")));
  std::thread sender([&] { h.runAll(); });
  inSend.get_future().wait();
  auto settled = std::async(std::launch::async, [&] { return h.writes.settle("b"); });
  EXPECT_EQ(settled.wait_for(100ms), std::future_status::timeout);
  release.set_value();
  EXPECT_FALSE(settled.get());
  sender.join();
  EXPECT_EQ(h.sent, std::vector<std::string>{"b:-:node-2"});
}

}  // namespace
}  // namespace ksched::scheduler
