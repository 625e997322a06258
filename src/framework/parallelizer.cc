#include "framework/parallelizer.h"

#include <pthread.h>

#include <algorithm>
#include <cmath>
#include <string>

namespace ksched::framework {

ThreadPoolParallelizer::ThreadPoolParallelizer(int parallelism, std::chrono::microseconds wakeAfter)
    : parallelism_(parallelism < 1 ? 1 : parallelism), wakeAfter_(wakeAfter) {
  for (int i = 1; i < parallelism_; ++i) {
    threads_.emplace_back([this, i](std::stop_token st) {
      std::string name = "parallel-" + std::to_string(i);
      pthread_setname_np(pthread_self(), name.c_str());
      worker(std::move(st));
    });
  }
}

ThreadPoolParallelizer::~ThreadPoolParallelizer() {
  for (auto& t : threads_) t.request_stop();
  cv_.notify_all();
  threads_.clear();  // joins
}

bool ThreadPoolParallelizer::claim(const std::function<void(int)>& fn,
                                   const std::function<bool()>& stop, int n, int chunk) {
  const int first = next_.fetch_add(chunk, std::memory_order_relaxed);
  if (first >= n) return false;
  const int last = std::min(n, first + chunk);
  for (int i = first; i < last; ++i) {
    if (stop && stop()) {
      next_.store(n, std::memory_order_relaxed);  // nobody claims more
      return false;
    }
    fn(i);
  }
  return true;
}

int ThreadPoolParallelizer::chunkSize(int n, int parallelism) {
  // As upstream's chunkSizeFor: about sqrt(n) indexes per claim, fewer when that would leave a
  // worker without any; one shared counter touched per chunk rather than per node.
  int s = static_cast<int>(std::sqrt(static_cast<double>(n)));
  s = std::min(s, n / parallelism + 1);
  return std::max(s, 1);
}

void ThreadPoolParallelizer::worker(std::stop_token st) {
  uint64_t seen = 0;
  while (true) {
    const std::function<void(int)>* fn = nullptr;
    const std::function<bool()>* stop = nullptr;
    int n = 0;
    int chunk = 1;
    {
      std::unique_lock lock(mu_);
      if (!cv_.wait(lock, st, [&] { return jobGeneration_ != seen; })) return;
      seen = jobGeneration_;
      if (fn_ == nullptr) continue;
      fn = fn_;
      stop = stop_;
      n = n_;
      chunk = chunk_;
      ++busy_;
    }
    while (claim(*fn, *stop, n, chunk)) {
    }
    {
      std::lock_guard lock(mu_);
      --busy_;
    }
    doneCv_.notify_one();
  }
}

void ThreadPoolParallelizer::until(int n, const std::function<void(int)>& fn,
                                   const std::function<bool()>& stop) {
  if (n <= 0) return;
  static const std::function<bool()> kNoStop;
  next_.store(0, std::memory_order_relaxed);
  if (parallelism_ == 1 || n == 1) {
    (void)claim(fn, stop, n, n);  // all of it, here
    return;
  }
  // The caller starts alone and wakes the pool only once the job has run for wakeAfter_: waking
  // a thread and waiting for it costs more than short jobs take (a Filter or Score pass over a
  // few hundred nodes), long ones are shared as before. A job cut into no more pieces than
  // there are threads is shared at once, and one of a few pieces per thread (coarse pieces) is
  // timed piece by piece while the caller is alone.
  const int chunk = chunkSize(n, parallelism_);
  const auto started = std::chrono::steady_clock::now();
  bool shared = false;
  auto share = [&] {
    {
      std::lock_guard lock(mu_);
      fn_ = &fn;
      stop_ = stop ? &stop : &kNoStop;
      n_ = n;
      chunk_ = chunk;
      ++jobGeneration_;
    }
    cv_.notify_all();
    shared = true;
  };
  if (n <= parallelism_ || wakeAfter_.count() == 0) share();
  const int soloChunk = n <= 8 * parallelism_ ? 1 : chunk;
  while (claim(fn, stop, n, shared ? chunk : soloChunk)) {
    if (!shared && next_.load(std::memory_order_relaxed) < n &&
        std::chrono::steady_clock::now() - started >= wakeAfter_) {
      share();
    }
  }
  if (!shared) return;
  std::unique_lock lock(mu_);
  // Close the job: workers that have not joined yet must not start it late.
  fn_ = nullptr;
  doneCv_.wait(lock, [&] { return busy_ == 0; });
}

}  // namespace ksched::framework
