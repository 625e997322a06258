// A fixed pool of named worker threads running queued tasks in FIFO order: the scheduler's
// binder pool (WaitOnPermit, PreBind, Bind, PostBind) and pod-status writer, DefaultPreemption's
// victim preparers. Each worker issues its own API requests, so each holds its own keep-alive
// connection.
//
// The threads start with the first submit(), so a pool that is never used (a plugin built only
// to validate the configuration) starts none. submit() never blocks; a producer that must not
// run far ahead of the workers waits with waitForRoom() first. drain() stops accepting, lets
// the workers finish everything queued, and joins them; the destructor drains.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace ksched::util {

class TaskPool {
 public:
  TaskPool(std::string name, int threads);
  ~TaskPool() { drain(); }
  TaskPool(const TaskPool&) = delete;
  TaskPool& operator=(const TaskPool&) = delete;

  // False (task dropped) after drain() began.
  bool submit(std::function<void()> task);
  void drain();
  // Tasks queued or running.
  [[nodiscard]] size_t inFlight() const;
  // With `limit` or more tasks waiting for a worker (running ones not counted), blocks until
  // no more than half as many are left, or `stop` is requested, or drain() began; with fewer,
  // returns at once (always, for a limit of 0). The producer then runs a batch before it
  // waits again rather than being woken for every task. One caller at a time.
  void waitForRoom(size_t limit, const std::stop_token& stop);

 private:
  void work(int index);

  const std::string name_;
  const int threadCount_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::condition_variable_any room_;         // waitForRoom() callers
  std::deque<std::function<void()>> tasks_;  // guarded by mu_
  size_t running_ = 0;                       // guarded by mu_
  size_t resumeAt_ = 0;  // guarded by mu_: where a waitForRoom() caller resumes; 0: none waits
  bool closed_ = false;  // guarded by mu_
  std::vector<std::jthread> threads_;  // started under mu_ by the first submit()
};

}  // namespace ksched::util
