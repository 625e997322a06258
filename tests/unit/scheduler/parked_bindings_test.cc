#include "scheduler/parked_bindings.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/api/resource.h>

namespace ksched::scheduler {
namespace {

using namespace std::chrono_literals;
using Why = ParkedBindings::Why;
using Clock = std::chrono::steady_clock;

PodPtr pod(const std::string& uid) {
  auto p = std::make_shared<api::Pod>();
  p->metadata.uid = uid;
  p->metadata.name = uid;
  return p;
}

std::shared_ptr<const api::ResourceClaim> claim(const std::string& uid) {
  auto c = std::make_shared<api::ResourceClaim>();
  c->metadata.uid = uid;
  return c;
}

const ClusterEvent kClaimUpdate{EventResource::kResourceClaim, kUpdateOther, {}};
const ClusterEvent kSliceUpdate{EventResource::kResourceSlice, kUpdateOther, {}};

// Waits for claim updates; with `onlyClaim`, only of that claim (a hint, as DynamicResources).
PreBindPlugin::Wait claimWait(Clock::time_point deadline = Clock::time_point::max(),
                              const std::string& onlyClaim = "") {
  PreBindPlugin::Wait w;
  w.deadline = deadline;
  QueueingHintFn hint;
  if (!onlyClaim.empty()) {
    hint = [onlyClaim](const api::Pod&, const EventObject&, const EventObject& n) {
      const auto* c = std::get_if<std::shared_ptr<const api::ResourceClaim>>(&n);
      return c != nullptr && (*c)->metadata.uid == onlyClaim ? QueueingHint::kQueue
                                                             : QueueingHint::kSkip;
    };
  }
  w.events.emplace_back(ClusterEvent{EventResource::kResourceClaim, kUpdate | kDelete, {}},
                        std::move(hint));
  return w;
}

// What resumed, in order.
struct Log {
  std::mutex mu;
  std::vector<std::pair<std::string, Why>> resumed;
  ParkedBindings::Resume of(const std::string& uid) {
    return [this, uid](Why why) {
      std::lock_guard lock(mu);
      resumed.emplace_back(uid, why);
    };
  }
  std::vector<std::pair<std::string, Why>> get() {
    std::lock_guard lock(mu);
    return resumed;
  }
};

TEST(ParkedBindings, AnEventOfTheNamedKindResumesOnlyTheBindingsItConcerns) {
  Log log;  // outlives `parked`, whose destructor resumes what is still parked
  ParkedBindings parked;
  parked.park(pod("a"), claimWait(Clock::time_point::max(), "claim-a"), parked.seen(), log.of("a"));
  parked.park(pod("b"), claimWait(Clock::time_point::max(), "claim-b"), parked.seen(), log.of("b"));
  EXPECT_EQ(parked.size(), 2U);
  parked.event(kSliceUpdate, {}, {});                              // another kind: nothing
  parked.event(kClaimUpdate, claim("claim-c"), claim("claim-c"));  // another claim: nothing
  EXPECT_TRUE(log.get().empty());
  parked.event(kClaimUpdate, claim("claim-b"), claim("claim-b"));
  EXPECT_EQ(log.get(), (std::vector<std::pair<std::string, Why>>{{"b", Why::kEvent}}));
  EXPECT_EQ(parked.size(), 1U);
  parked.event(kClaimUpdate, claim("claim-b"), claim("claim-b"));  // resumed once only
  EXPECT_EQ(log.get().size(), 1U);
}

TEST(ParkedBindings, AnEventBetweenLookingAndParkingResumesAtOnce) {
  Log log;  // outlives `parked`, whose destructor resumes what is still parked
  ParkedBindings parked;
  const auto before = parked.seen();
  parked.event(kSliceUpdate, {}, {});  // not a kind the binding waits for
  parked.park(pod("a"), claimWait(Clock::time_point::max(), "claim-a"), before, log.of("a"));
  EXPECT_TRUE(log.get().empty());
  const auto before2 = parked.seen();
  parked.event(kClaimUpdate, claim("x"), claim("x"));  // the plugin may have missed it
  parked.park(pod("b"), claimWait(), before2, log.of("b"));
  EXPECT_EQ(log.get(), (std::vector<std::pair<std::string, Why>>{{"b", Why::kEvent}}));
  EXPECT_EQ(parked.size(), 1U);
}

TEST(ParkedBindings, TheDeadlineResumesWithoutAnEvent) {
  ParkedBindings parked;
  std::promise<std::pair<std::string, Why>> late;
  std::promise<std::pair<std::string, Why>> early;
  parked.park(pod("late"), claimWait(Clock::now() + 10s), parked.seen(), [&](Why why) {
    late.set_value({"late", why});
  });
  // Parked after, due first: the timer sees the earlier deadline.
  const auto start = Clock::now();
  parked.park(pod("early"), claimWait(Clock::now() + 50ms), parked.seen(), [&](Why why) {
    early.set_value({"early", why});
  });
  auto f = early.get_future();
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(f.get().second, Why::kDeadline);
  EXPECT_GE(Clock::now() - start, 50ms);
  EXPECT_EQ(parked.size(), 1U);
  parked.stop();
  EXPECT_EQ(late.get_future().get().second, Why::kShutdown);
}

TEST(ParkedBindings, DeletingThePodAndStoppingResumeEveryParkedBindingOnce) {
  Log log;  // outlives `parked`, whose destructor resumes what is still parked
  ParkedBindings parked;
  parked.park(pod("a"), claimWait(), parked.seen(), log.of("a"));
  parked.park(pod("b"), claimWait(), parked.seen(), log.of("b"));
  parked.cancel("a");
  parked.cancel("a");
  parked.cancel("unknown");
  parked.stop();
  EXPECT_EQ(log.get(), (std::vector<std::pair<std::string, Why>>{{"a", Why::kDeleted},
                                                                 {"b", Why::kShutdown}}));
  // Stopped: a binding that would park fails at once.
  parked.park(pod("c"), claimWait(), parked.seen(), log.of("c"));
  EXPECT_EQ(log.get().back(), (std::pair<std::string, Why>{"c", Why::kShutdown}));
  EXPECT_EQ(parked.size(), 0U);
}

TEST(ParkedBindings, AHintThatThrowsResumesTheBinding) {
  Log log;  // outlives `parked`, whose destructor resumes what is still parked
  ParkedBindings parked;
  PreBindPlugin::Wait w;
  w.events.emplace_back(
      ClusterEvent{EventResource::kResourceClaim, kUpdate, {}},
      [](const api::Pod&, const EventObject&, const EventObject&) -> QueueingHint {
        throw std::runtime_error("bug");
      });
  parked.park(pod("a"), std::move(w), parked.seen(), log.of("a"));
  parked.event(kClaimUpdate, claim("x"), claim("x"));
  EXPECT_EQ(log.get(), (std::vector<std::pair<std::string, Why>>{{"a", Why::kEvent}}));
}

}  // namespace
}  // namespace ksched::scheduler
