#include "framework/task_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>

namespace ksched::framework {
namespace {

size_t threadsOfThisProcess() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

TEST(TaskPoolTest, StartsThreadsOnFirstSubmitRunsEverythingAndJoinsOnDrain) {
  const size_t before = threadsOfThisProcess();
  TaskPool pool("test", 4);
  // A pool built only to validate a configuration starts nothing.
  EXPECT_EQ(threadsOfThisProcess(), before);
  std::atomic<int> ran{0};
  for (int i = 0; i < 100; ++i) EXPECT_TRUE(pool.submit([&ran] { ran.fetch_add(1); }));
  EXPECT_EQ(threadsOfThisProcess(), before + 4);
  pool.drain();
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(threadsOfThisProcess(), before);
  EXPECT_FALSE(pool.submit([] {}));
  pool.drain();  // idempotent
}

TEST(TaskPoolTest, NeverUsedDrainsAtOnce) {
  TaskPool pool("idle", 16);
  pool.drain();
  EXPECT_FALSE(pool.submit([] {}));
}

}  // namespace
}  // namespace ksched::framework
