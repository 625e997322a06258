#include "util/task_pool.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

namespace ksched::util {

TaskPool::TaskPool(std::string name, int threads)
    : name_(std::move(name)), threadCount_(threads < 1 ? 1 : threads) {}

bool TaskPool::submit(std::function<void()> task) {
  {
    std::lock_guard lock(mu_);
    if (closed_) return false;
    if (threads_.empty()) {
      for (int i = 0; i < threadCount_; ++i) threads_.emplace_back([this, i] { work(i); });
    }
    tasks_.push_back(std::move(task));
  }
  cv_.notify_one();
  return true;
}

void TaskPool::drain() {
  {
    std::lock_guard lock(mu_);
    if (closed_ && threads_.empty()) return;
    closed_ = true;
  }
  cv_.notify_all();
  room_.notify_all();
  threads_.clear();  // joins after the queue is empty
}

void TaskPool::waitForRoom(size_t limit, const std::stop_token& stop) {
  std::unique_lock lock(mu_);
  if (limit == 0 || tasks_.size() < limit) return;
  const size_t resume = limit / 2;
  resumeAt_ = resume + 1;
  room_.wait(lock, stop, [&] { return closed_ || tasks_.size() <= resume; });
  resumeAt_ = 0;
}

size_t TaskPool::inFlight() const {
  std::lock_guard lock(mu_);
  return tasks_.size() + running_;
}

void TaskPool::work(int index) {
  std::string tname = (name_ + "-" + std::to_string(index)).substr(0, 15);
  pthread_setname_np(pthread_self(), tname.c_str());
  while (true) {
    std::function<void()> task;
    bool room = false;
    {
      std::unique_lock lock(mu_);
      cv_.wait(lock, [&] { return closed_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // closed and drained
      task = std::move(tasks_.front());
      tasks_.pop_front();
      ++running_;
      // A waiting producer is woken once, when the queue is down to where it resumes.
      room = resumeAt_ != 0 && tasks_.size() + 1 == resumeAt_;
    }
    if (room) room_.notify_all();
    try {
      task();
    } catch (const std::exception& e) {
      spdlog::error("{}: task failed: {}", name_, e.what());
    }
    std::lock_guard lock(mu_);
    --running_;
  }
}

}  // namespace ksched::util
