// In-tree plugin tests: the public fakes (<ksched/testing/fakes.h>) plus a Handle over a real
// cache::Snapshot.
#pragma once

#include <ksched/testing/fakes.h>

#include "cache/snapshot.h"

namespace ksched::plugins::testutil {

using namespace ::ksched::testing;  // NOLINT(google-build-using-namespace)

// The snapshot is a real cache::Snapshot (affinity lists and image spread computed).
class SnapshotHandle final : public HandleBase {
 public:
  explicit SnapshotHandle(cache::Snapshot s) : snapshot_(std::move(s)) {}
  SnapshotHandle(std::vector<PodPtr> pods, std::vector<NodePtr> nodes)
      : snapshot_(cache::Snapshot::fromForTest(std::move(pods), std::move(nodes))) {}
  [[nodiscard]] const NodeInfoLister& snapshot() const override { return snapshot_; }
  [[nodiscard]] const cache::Snapshot& cacheSnapshot() const { return snapshot_; }

 private:
  cache::Snapshot snapshot_;
};

}  // namespace ksched::plugins::testutil
