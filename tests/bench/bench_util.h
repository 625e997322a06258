// Shared pieces of the micro benchmarks.
#pragma once

#include <algorithm>
#include <thread>
#include <utility>

#include "cache/snapshot.h"
#include "framework/parallelizer.h"
#include "tests/support/plugin_test_util.h"

namespace ksched::bench {

// A plugin Handle over a fixed snapshot, with a thread pool as wide as the machine.
class BenchHandle final : public plugins::testutil::HandleBase {
 public:
  explicit BenchHandle(cache::Snapshot snapshot)
      : snapshot_(std::move(snapshot)),
        pool_(static_cast<int>(std::max(1u, std::thread::hardware_concurrency()))) {
    setParallelizer(&pool_);
  }
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return snapshot_; }

 private:
  cache::Snapshot snapshot_;
  framework::ThreadPoolParallelizer pool_;
};

}  // namespace ksched::bench
