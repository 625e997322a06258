// Bindings parked at PreBind: a PreBind plugin said Wait (a device not attached yet), so the
// pod's binding cycle holds no binder thread until one of the events the plugin named happens,
// its deadline passes, the pod is deleted or the scheduler stops. Events come from the informer
// threads; a timer thread serves the deadlines.
#pragma once

#include <array>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include <ksched/cluster_event.h>
#include <ksched/plugin.h>

namespace ksched::scheduler {

class ParkedBindings {
 public:
  enum class Why { kEvent, kDeadline, kDeleted, kShutdown };
  // Runs once per parking, outside the lock: on an informer thread (it must only hand work on),
  // the timer thread, or the caller of takeAll()/cancel().
  using Resume = std::function<void(Why)>;
  // Counts of events seen per resource: what a binding saw before its plugin looked.
  using Seen = std::array<uint64_t, static_cast<size_t>(EventResource::kWildcard) + 1>;

  ParkedBindings() = default;
  ~ParkedBindings();
  ParkedBindings(const ParkedBindings&) = delete;
  ParkedBindings& operator=(const ParkedBindings&) = delete;

  // Taken before the plugin looks at the cluster: an event it may have missed between looking and
  // parking then resumes the binding at once (park()).
  [[nodiscard]] Seen seen() const;
  // Parks `pod` until one of `wait.events` (a hint, when given, asked about `pod`) or
  // `wait.deadline`. An event of a named resource since `before` resumes it at once. After
  // stop() every park resumes at once with kShutdown.
  void park(const PodPtr& pod, PreBindPlugin::Wait wait, const Seen& before, Resume resume);
  // An event from the cluster: resumes the bindings waiting for it.
  void event(const ClusterEvent& ev, const EventObject& oldObj, const EventObject& newObj);
  // The pod `uid` was deleted: its binding, if parked, resumes with kDeleted.
  void cancel(const std::string& uid);
  // Resumes every parked binding with kShutdown (on this thread), refuses new ones from then on
  // and stops the timer.
  void stop();
  [[nodiscard]] size_t size() const;

 private:
  struct Entry {
    PodPtr pod;
    PreBindPlugin::Wait wait;
    Resume resume;
  };
  void runTimer(std::stop_token st);
  void resumeAll(std::vector<Entry>& due, Why why);

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  bool stopped_ = false;                 // guarded by mu_
  Seen seen_{};                          // guarded by mu_
  uint64_t parks_ = 0;                   // guarded by mu_: wakes the timer for a new deadline
  std::map<std::string, Entry> parked_;  // by pod uid; guarded by mu_
  std::jthread timer_;                   // started on the first park
};

}  // namespace ksched::scheduler
