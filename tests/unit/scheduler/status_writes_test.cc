#include "scheduler/status_writes.h"

#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ksched::scheduler {
namespace {

// Runs the writer's tasks by hand, so a test decides what is "in flight".
struct Harness {
  std::deque<std::function<void()>> tasks;
  std::vector<std::string> sent;  // "uid:message:nominated"
  bool accepting = true;
  std::function<void()> duringSend;  // called inside the next send (a write arriving meanwhile)
  StatusWrites writes{[this](std::function<void()> t) {
                        if (!accepting) return false;
                        tasks.push_back(std::move(t));
                        return true;
                      },
                      [this](const StatusWrites::Write& w) {
                        sent.push_back(w.pod->metadata.uid + ":" + w.message + ":" +
                                       (w.nominatedNode ? *w.nominatedNode : "-"));
                        if (auto f = std::exchange(duringSend, nullptr)) f();
                      }};

  static StatusWrites::Write write(const std::string& uid, const std::string& message,
                                   std::optional<std::string> nominated = std::nullopt) {
    auto pod = std::make_shared<api::Pod>();
    pod->metadata.uid = uid;
    return {pod, "Unschedulable", message, std::move(nominated), ""};
  }
  void runAll() {
    while (!tasks.empty()) {
      auto t = std::move(tasks.front());
      tasks.pop_front();
      t();
    }
  }
};

TEST(StatusWritesTest, WriteTheInformerAlreadyHasIsNotSent) {
  Harness h;
  EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m1"), /*inInformer=*/true));
  EXPECT_TRUE(h.tasks.empty());
  EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m1"), false));
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:m1:-"});
  EXPECT_EQ(h.writes.pods(), 0u);
}

TEST(StatusWritesTest, WritesQueuedBehindOneInFlightCollapseToTheLatestInOrder) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", Harness::write("a", "m1"), false));
  // While m1 is being sent, three more attempts fail: only the last waits, and it lands after
  // m1 from the same task (no second task that could overtake it).
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m2"), false));
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m3"), false));
    EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m3"), false));  // same as waiting
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m4"), true));    // informer is stale
  };
  ASSERT_EQ(h.tasks.size(), 1u);
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:m1:-", "a:m4:-"}));
  EXPECT_EQ(h.writes.pods(), 0u);
}

TEST(StatusWritesTest, SameAsTheWriteInFlightIsNotQueued) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", Harness::write("a", "m1", "node-1"), false));
  h.duringSend = [&] {
    // The informer does not have node-1 yet, but the write in flight does.
    EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m1"), false));
    EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m1", "node-1"), false));
  };
  h.runAll();
  EXPECT_EQ(h.sent, std::vector<std::string>{"a:m1:node-1"});
}

TEST(StatusWritesTest, ReplacedWriteKeepsTheNominationItWasToMake) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", Harness::write("a", "m1"), false));
  h.duringSend = [&] {
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m2", "node-2"), false));
    // The next attempt only changes the message: node-2 must still be written.
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m3"), false));
    // Cleared after all: the clearing wins.
    EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m4", ""), false));
  };
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:m1:-", "a:m4:"}));

  Harness g;
  ASSERT_TRUE(g.writes.submit("b", Harness::write("b", "m1"), false));
  g.duringSend = [&] {
    EXPECT_TRUE(g.writes.submit("b", Harness::write("b", "m2", "node-2"), false));
    EXPECT_TRUE(g.writes.submit("b", Harness::write("b", "m3"), false));
  };
  g.runAll();
  EXPECT_EQ(g.sent, (std::vector<std::string>{"b:m1:-", "b:m3:node-2"}));
}

TEST(StatusWritesTest, PodsAreIndependentAndANewWriteFollowsACompletedOne) {
  Harness h;
  ASSERT_TRUE(h.writes.submit("a", Harness::write("a", "m1"), false));
  ASSERT_TRUE(h.writes.submit("b", Harness::write("b", "m1"), false));
  EXPECT_EQ(h.tasks.size(), 2u);
  EXPECT_EQ(h.writes.pods(), 2u);
  h.runAll();
  EXPECT_EQ(h.writes.pods(), 0u);
  // Nothing in flight any more: the informer decides again.
  EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m1"), true));
  EXPECT_TRUE(h.writes.submit("a", Harness::write("a", "m2"), false));
  h.runAll();
  EXPECT_EQ(h.sent, (std::vector<std::string>{"a:m1:-", "b:m1:-", "a:m2:-"}));
}

TEST(StatusWritesTest, NothingIsKeptWhenThePoolNoLongerTakesTasks) {
  Harness h;
  h.accepting = false;
  EXPECT_FALSE(h.writes.submit("a", Harness::write("a", "m1"), false));
  EXPECT_EQ(h.writes.pods(), 0u);
}

}  // namespace
}  // namespace ksched::scheduler
