// RunningScheduler: an in-process ksched Scheduler against the test cluster, started on
// construction (informers synced) and stopped on destruction.
#pragma once

#include <gtest/gtest.h>

#include <chrono>

#include "cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"

namespace ksched::testing {

// Runs an in-process scheduler against the test cluster for the life of the object.
class RunningScheduler {
 public:
  explicit RunningScheduler(scheduler::Options opts = defaultOptions(),
                            const Registry& registry = plugins::inTreeRegistry())
      : rest_(TestCluster::get().config("scheduler")),
        events_(TestCluster::get().config("scheduler")),
        sched_(rest_, events_, registry, std::move(opts)) {
    EXPECT_TRUE(sched_.startInformers(std::chrono::seconds(30)));
    sched_.startScheduling();
  }
  ~RunningScheduler() { sched_.stop(); }
  scheduler::Scheduler& operator*() { return sched_; }
  scheduler::Scheduler* operator->() { return &sched_; }

  static scheduler::Options defaultOptions() {
    scheduler::Options o;
    o.binderThreads = 8;
    o.parallelism = 4;
    return o;
  }

 private:
  client::RestClient rest_;
  client::RestClient events_;
  scheduler::Scheduler sched_;
};

}  // namespace ksched::testing
