// A fixed pool of worker threads for parallel Filter/Score (upstream's parallelize.Parallelizer).
//
// until() may be called from one thread at a time (the scheduling thread); the caller works
// too, so `parallelism` threads run in all (parallelism - 1 pool threads). Threads are owned
// std::jthreads, stopped and joined by the destructor.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#include <ksched/handle.h>

namespace ksched::framework {

class ThreadPoolParallelizer final : public Parallelizer {
 public:
  // parallelism < 1 is treated as 1. A job is shared with the pool once the caller has run it
  // alone for `wakeAfter` (0: from the start).
  explicit ThreadPoolParallelizer(int parallelism,
                                  std::chrono::microseconds wakeAfter = kDefaultWakeAfter);
  static constexpr std::chrono::microseconds kDefaultWakeAfter{50};
  ~ThreadPoolParallelizer() override;
  ThreadPoolParallelizer(const ThreadPoolParallelizer&) = delete;
  ThreadPoolParallelizer& operator=(const ThreadPoolParallelizer&) = delete;

  [[nodiscard]] int parallelism() const override { return parallelism_; }
  void until(int n, const std::function<void(int)>& fn,
             const std::function<bool()>& stop = nullptr) override;

 private:
  // Claims the next `chunk` indexes of the job and runs them; false once none are left or
  // stop() said so (then nobody claims more).
  bool claim(const std::function<void(int)>& fn, const std::function<bool()>& stop, int n,
             int chunk);
  static int chunkSize(int n, int parallelism);
  void worker(std::stop_token st);

  const int parallelism_;
  const std::chrono::microseconds wakeAfter_;

  std::mutex mu_;
  std::condition_variable_any cv_;  // workers wait for a job
  std::condition_variable doneCv_;  // the caller waits for workers to leave the job
  uint64_t jobGeneration_ = 0;      // guarded by mu_
  int busy_ = 0;                    // workers inside the current job; guarded by mu_
  // The current job, guarded by mu_: workers copy it when they join; the caller clears fn_
  // before waiting so that a worker waking late does not start a finished job.
  const std::function<void(int)>* fn_ = nullptr;
  const std::function<bool()>* stop_ = nullptr;
  int n_ = 0;
  int chunk_ = 1;
  std::atomic<int> next_{0};
  std::vector<std::jthread> threads_;
};

}  // namespace ksched::framework
