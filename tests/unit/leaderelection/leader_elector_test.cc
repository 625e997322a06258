#include "leaderelection/leader_elector.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "client/errors.h"

namespace ksched::leaderelection {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// An in-memory Lease with resourceVersion checks (409 on a stale update) and injectable failures.
class FakeLeaseClient : public LeaseClient {
 public:
  std::optional<api::Lease> get() override {
    std::lock_guard lock(mu);
    ++gets;
    if (failAll) throw client::ApiError(500, "InternalError", "boom", "GET", "lease");
    return stored;
  }
  api::Lease create(const api::Lease& lease) override {
    std::lock_guard lock(mu);
    ++creates;
    if (failAll) throw client::ApiError(500, "InternalError", "boom", "POST", "lease");
    if (stored) throw client::ApiError(409, "AlreadyExists", "exists", "POST", "lease");
    stored = lease;
    stored->metadata.resourceVersion = std::to_string(++rv);
    return *stored;
  }
  api::Lease update(const api::Lease& lease) override {
    std::unique_lock lock(mu);
    ++updates;
    if (beforeUpdate) {
      auto hook = std::move(beforeUpdate);
      beforeUpdate = nullptr;
      lock.unlock();
      hook();
      lock.lock();
    }
    if (failAll) throw client::ApiError(500, "InternalError", "boom", "PUT", "lease");
    if (!stored) throw client::ApiError(404, "NotFound", "not found", "PUT", "lease");
    if (lease.metadata.resourceVersion != stored->metadata.resourceVersion) {
      throw client::ApiError(409, "Conflict", "the object has been modified", "PUT", "lease");
    }
    stored = lease;
    stored->metadata.resourceVersion = std::to_string(++rv);
    return *stored;
  }
  [[nodiscard]] std::string describe() const override { return "kube-system/kube-scheduler"; }

  // Another instance writes the lease directly.
  void otherWrites(const api::LeaseSpec& spec) {
    std::lock_guard lock(mu);
    if (!stored) {
      stored.emplace();
      stored->metadata.name = "kube-scheduler";
      stored->metadata.namespace_ = "kube-system";
    }
    stored->spec = spec;
    stored->metadata.resourceVersion = std::to_string(++rv);
  }
  api::LeaseSpec spec() {
    std::lock_guard lock(mu);
    return stored->spec;
  }

  std::mutex mu;
  std::optional<api::Lease> stored;
  int rv = 0;
  int gets = 0, creates = 0, updates = 0;
  std::atomic<bool> failAll{false};
  std::function<void()> beforeUpdate;
};

const api::TimePoint kStart = *api::parseRFC3339("2026-03-01T10:00:00.123456Z");

api::LeaseSpec held(const std::string& holder, int32_t durationSeconds, int32_t transitions,
                    const std::string& renewTime = "2001-01-01T00:00:00.000000Z") {
  api::LeaseSpec s;
  s.holderIdentity = holder;
  s.leaseDurationSeconds = durationSeconds;
  s.acquireTime = "2001-01-01T00:00:00.000000Z";
  s.renewTime = renewTime;
  s.leaseTransitions = transitions;
  return s;
}

class LeaderElectorTest : public ::testing::Test {
 protected:
  LeaderElectorTest() {
    config.identity = "host-a_1111";
    config.leaseDuration = seconds(15);
    config.renewDeadline = seconds(10);
    config.retryPeriod = seconds(2);
  }
  LeaderElector& elector() {
    if (!elector_) elector_.emplace(config, lock, [this] { return now; });
    return *elector_;
  }

  Config config;
  FakeLeaseClient lock;
  api::TimePoint now = kStart;
  std::optional<LeaderElector> elector_;
};

TEST_F(LeaderElectorTest, CreatesTheLeaseWhenAbsent) {
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_TRUE(elector().isLeader());
  EXPECT_EQ(elector().leader(), "host-a_1111");
  EXPECT_EQ(lock.creates, 1);
  EXPECT_EQ(lock.stored->metadata.name, "kube-scheduler");
  EXPECT_EQ(lock.stored->metadata.namespace_, "kube-system");
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"host-a_1111", 15, "2026-03-01T10:00:00.123456Z",
                                         "2026-03-01T10:00:00.123456Z", 0}));
}

TEST_F(LeaderElectorTest, WaitsWhileAnotherHolderIsNotExpiredByLocalObservation) {
  // The renewTime written by the other host is years old; only our observation time counts.
  lock.otherWrites(held("host-b_2222", 15, 3));
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_FALSE(elector().isLeader());
  EXPECT_EQ(elector().leader(), "host-b_2222");
  now = kStart + seconds(14) + milliseconds(999);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.updates, 0);
  EXPECT_EQ(lock.spec().holderIdentity, "host-b_2222");
  // observedTime + leaseDurationSeconds == now: expired.
  now = kStart + seconds(15);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_TRUE(elector().isLeader());
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"host-a_1111", 15, "2026-03-01T10:00:15.123456Z",
                                         "2026-03-01T10:00:15.123456Z", 4}));
}

TEST_F(LeaderElectorTest, UsesTheRecordsLeaseDuration) {
  lock.otherWrites(held("host-b_2222", 40, 0));
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(39);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(40);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.spec().leaseTransitions, 1);
  EXPECT_EQ(lock.spec().leaseDurationSeconds, 15);
}

TEST_F(LeaderElectorTest, AChangedRecordRestartsTheObservation) {
  lock.otherWrites(held("host-b_2222", 15, 1));
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(10);
  lock.otherWrites(held("host-b_2222", 15, 1, "2001-01-01T00:00:10.000000Z"));  // renewed
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(24);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(25);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.spec().leaseTransitions, 2);
}

TEST_F(LeaderElectorTest, AnUnchangedRecordKeepsTheFirstObservation) {
  lock.otherWrites(held("host-b_2222", 15, 1));
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(10);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(15);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
}

TEST_F(LeaderElectorTest, TakesAReleasedLeaseAtOnce) {
  api::LeaseSpec released = held("", 1, 5);
  lock.otherWrites(released);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"host-a_1111", 15, "2026-03-01T10:00:00.123456Z",
                                         "2026-03-01T10:00:00.123456Z", 6}));
}

TEST_F(LeaderElectorTest, RenewsItsOwnLeaseKeepingAcquireTimeWithoutARead) {
  ASSERT_TRUE(elector().tryAcquireOrRenew());
  now = kStart + seconds(2);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  now = kStart + seconds(4) + milliseconds(5);
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.gets, 1);  // only the first attempt read the lease
  EXPECT_EQ(lock.updates, 2);
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"host-a_1111", 15, "2026-03-01T10:00:00.123456Z",
                                         "2026-03-01T10:00:04.128456Z", 0}));
}

TEST_F(LeaderElectorTest, RenewsItsOwnLeaseFoundOnStartWithoutATransition) {
  // A restart with the same identity (or an expired own lease) keeps acquireTime/transitions.
  config.identity = "host-b_2222";
  lock.otherWrites(held("host-b_2222", 15, 7));
  EXPECT_TRUE(elector().tryAcquireOrRenew());
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"host-b_2222", 15, "2001-01-01T00:00:00.000000Z",
                                         "2026-03-01T10:00:00.123456Z", 7}));
}

TEST_F(LeaderElectorTest, LosesTheRaceOnConflict) {
  lock.otherWrites(held("", 1, 2));
  lock.beforeUpdate = [this] { lock.otherWrites(held("host-c_3333", 15, 3)); };
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_FALSE(elector().isLeader());
  EXPECT_EQ(lock.spec().holderIdentity, "host-c_3333");
  // The next attempt observes host-c as a fresh holder.
  now = kStart + seconds(2);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_EQ(elector().leader(), "host-c_3333");
  EXPECT_EQ(lock.updates, 1);
}

TEST_F(LeaderElectorTest, AFailedOptimisticRenewalFallsBackToARead) {
  ASSERT_TRUE(elector().tryAcquireOrRenew());
  // Someone else took the lease behind our back (e.g. it was edited by hand).
  lock.otherWrites(held("host-c_3333", 15, 1));
  now = kStart + seconds(2);
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_FALSE(elector().isLeader());
  EXPECT_EQ(elector().leader(), "host-c_3333");
  EXPECT_EQ(lock.gets, 2);
  EXPECT_EQ(lock.updates, 1);  // the optimistic one, refused with 409
}

TEST_F(LeaderElectorTest, ReadErrorsAreAFailedAttempt) {
  lock.failAll = true;
  EXPECT_FALSE(elector().tryAcquireOrRenew());
  EXPECT_FALSE(elector().isLeader());
  EXPECT_EQ(lock.creates, 0);
}

TEST_F(LeaderElectorTest, ReleaseClearsTheHolder) {
  lock.otherWrites(held("", 1, 4));
  ASSERT_TRUE(elector().tryAcquireOrRenew());
  now = kStart + seconds(3);
  EXPECT_TRUE(elector().release());
  EXPECT_FALSE(elector().isLeader());
  EXPECT_EQ(elector().leader(), "");
  EXPECT_EQ(lock.spec(), (api::LeaseSpec{"", 1, "2026-03-01T10:00:03.123456Z",
                                         "2026-03-01T10:00:03.123456Z", 5}));
  // Nothing to release any more.
  const int updates = lock.updates;
  EXPECT_TRUE(elector().release());
  EXPECT_EQ(lock.updates, updates);
}

TEST_F(LeaderElectorTest, HealthCheckFailsOnlyForAStaleLeader) {
  lock.otherWrites(held("host-b_2222", 15, 0));
  ASSERT_FALSE(elector().tryAcquireOrRenew());
  now = kStart + seconds(100);
  EXPECT_EQ(elector().check(), "");  // followers are always healthy
  ASSERT_TRUE(elector().tryAcquireOrRenew());
  now = kStart + seconds(100 + 35);
  EXPECT_EQ(elector().check(), "");
  now += std::chrono::microseconds(1);
  EXPECT_EQ(elector().check(), "failed election to renew leadership on lease kube-scheduler");
  EXPECT_EQ(elector().check(seconds(21)), "");
}

TEST(LeaderElectorValidateTest, ChecksTheTimings) {
  Config c;
  c.identity = "a";
  EXPECT_EQ(validate(c), "");
  c.renewDeadline = seconds(15);
  EXPECT_EQ(validate(c), "leaseDuration must be greater than renewDeadline");
  c.renewDeadline = milliseconds(2400);
  EXPECT_EQ(validate(c), "renewDeadline must be greater than retryPeriod*JitterFactor");
  c.renewDeadline = milliseconds(2401);
  EXPECT_EQ(validate(c), "");
  c.identity = "";
  EXPECT_EQ(validate(c), "lock identity is empty");
}

// run() with real (short) timings.
Config fastConfig(const std::string& identity) {
  Config c;
  c.identity = identity;
  c.leaseDuration = milliseconds(1500);  // written as 1 s
  c.renewDeadline = milliseconds(300);
  c.retryPeriod = milliseconds(50);
  return c;
}

TEST(LeaderElectorRunTest, LosesLeadershipWhenRenewalsFailPastTheDeadline) {
  FakeLeaseClient lock;
  Config c = fastConfig("host-a_1111");
  std::atomic<int> started{0}, stopped{0};
  c.onStartedLeading = [&] { ++started; };
  c.onStoppedLeading = [&] { ++stopped; };
  LeaderElector le(c, lock);
  std::atomic<bool> result{true};
  std::jthread t([&](std::stop_token st) { result = le.run(st); });
  for (int i = 0; i < 200 && started == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_EQ(started, 1);
  EXPECT_TRUE(le.isLeader());
  const auto failedAt = std::chrono::steady_clock::now();
  lock.failAll = true;
  t.join();
  const auto took = std::chrono::steady_clock::now() - failedAt;
  EXPECT_FALSE(result);
  EXPECT_EQ(stopped, 1);
  EXPECT_GE(took, milliseconds(250));
  EXPECT_LT(took, milliseconds(1000));
  lock.failAll = false;
  EXPECT_EQ(lock.spec().holderIdentity, "host-a_1111");  // not released after a loss
}

TEST(LeaderElectorRunTest, StopReleasesAndAFollowerTakesOver) {
  FakeLeaseClient lock;
  std::atomic<int> startedA{0}, startedB{0};
  Config a = fastConfig("host-a_1111");
  a.onStartedLeading = [&] { ++startedA; };
  Config b = fastConfig("host-b_2222");
  b.onStartedLeading = [&] { ++startedB; };
  LeaderElector la(a, lock), lb(b, lock);
  std::atomic<bool> resultA{false}, resultB{false};
  std::jthread ta([&](std::stop_token st) { resultA = la.run(st); });
  for (int i = 0; i < 200 && startedA == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  ASSERT_EQ(startedA, 1);
  std::jthread tb([&](std::stop_token st) { resultB = lb.run(st); });
  std::this_thread::sleep_for(milliseconds(400));
  EXPECT_EQ(startedB, 0);
  EXPECT_EQ(lb.leader(), "host-a_1111");
  ta.request_stop();
  ta.join();
  EXPECT_TRUE(resultA);
  EXPECT_FALSE(la.isLeader());
  for (int i = 0; i < 100 && startedB == 0; ++i) std::this_thread::sleep_for(milliseconds(10));
  EXPECT_EQ(startedB, 1);
  EXPECT_TRUE(lb.isLeader());
  EXPECT_EQ(lock.spec().leaseTransitions, 1);
  tb.request_stop();
  tb.join();
  EXPECT_TRUE(resultB);
  EXPECT_EQ(lock.spec().holderIdentity, "");
}

}  // namespace
}  // namespace ksched::leaderelection
