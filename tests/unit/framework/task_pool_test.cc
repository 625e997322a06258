#include "util/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <optional>
#include <semaphore>
#include <thread>

namespace ksched::util {
namespace {

size_t threadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// A joined thread can stay listed in /proc/self/task for a moment: pthread_join returns when the
// kernel clears the thread's id, before it reaps the thread. The count once it has not moved for
// 10 ms (a thread of an earlier test may be going too), or once it is `want`, waiting up to 2 s.
size_t settledThreads(std::optional<size_t> want = std::nullopt) {
  size_t n = threadsOfThisProcess();
  for (int i = 0; i < 200 && n != want; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    const size_t m = threadsOfThisProcess();
    if (!want && m == n) break;
    n = m;
  }
  return n;
}

TEST(TaskPoolTest, StartsThreadsOnFirstSubmitRunsEverythingAndJoinsOnDrain) {
  // A sanitizer's runtime starts its own thread with the process's first: have it started.
  std::thread([] {}).join();
  const size_t before = settledThreads();
  TaskPool pool("test", 4);
  // A pool built only to validate a configuration starts nothing.
  EXPECT_EQ(threadsOfThisProcess(), before);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(pool.submit([&ran] { ran.fetch_add(1); }));
  EXPECT_EQ(threadsOfThisProcess(), before + 4);
  pool.drain();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(settledThreads(before), before);
  EXPECT_FALSE(pool.submit([] {}));
  pool.drain();  // idempotent
}

TEST(TaskPoolTest, NeverUsedDrainsAtOnce) {
  TaskPool pool("idle", 16);
  pool.drain();
  EXPECT_FALSE(pool.submit([] {}));
}

// A pool of one worker whose tasks each wait for a permit: the test decides when each ends.
struct GatedPool {
  TaskPool pool{"gated", 1};
  std::counting_semaphore<1024> permits{0};
  std::atomic<int> started{0};

  void submit(int n) {
    for (int i = 0; i < n; ++i) {
      ASSERT_TRUE(pool.submit([this] {
        started.fetch_add(1);
        permits.acquire();
      }));
    }
  }
  // Waits until `n` tasks have started (the worker took them off the queue).
  bool startedReaches(int n) {
    for (int i = 0; i < 500 && started.load() < n; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return started.load() >= n;
  }
  ~GatedPool() {
    permits.release(64);
    pool.drain();
  }
};

TEST(TaskPoolTest, WaitForRoomReturnsAtOnceBelowTheLimit) {
  GatedPool g;
  g.submit(4);  // one running, three queued
  ASSERT_TRUE(g.startedReaches(1));
  g.pool.waitForRoom(4, {});
  g.pool.waitForRoom(0, {});  // no limit
  EXPECT_EQ(g.pool.inFlight(), 4u);
}

TEST(TaskPoolTest, WaitForRoomResumesWhenHalfTheLimitIsLeft) {
  GatedPool g;
  g.submit(5);  // one running, four queued
  ASSERT_TRUE(g.startedReaches(1));
  std::atomic<bool> resumed{false};
  std::jthread producer([&] {
    g.pool.waitForRoom(4, {});
    resumed.store(true);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(resumed.load());  // four queued
  g.permits.release();
  ASSERT_TRUE(g.startedReaches(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_FALSE(resumed.load());  // three queued: below the limit, not yet down to half of it
  g.permits.release();
  ASSERT_TRUE(g.startedReaches(3));
  producer.join();  // two queued: resumes
  EXPECT_TRUE(resumed.load());
}

TEST(TaskPoolTest, StopOrDrainEndsAWaitForRoom) {
  GatedPool g;
  g.submit(3);
  ASSERT_TRUE(g.startedReaches(1));
  std::stop_source stop;
  std::jthread producer([&] { g.pool.waitForRoom(2, stop.get_token()); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.request_stop();
  producer.join();
  EXPECT_EQ(g.pool.inFlight(), 3u);  // nothing ran meanwhile

  std::jthread another([&] { g.pool.waitForRoom(2, {}); });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::jthread drainer([&] { g.pool.drain(); });
  another.join();  // drain() began: the wait ends before the queue does
  g.permits.release(64);
}

}  // namespace
}  // namespace ksched::util
