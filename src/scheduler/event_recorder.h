// Posts Kubernetes Events (events.k8s.io/v1) for pods, the way kube-scheduler does:
// asynchronously, through its own rate-limited client, with repeats aggregated.
//
// event() never blocks: it enqueues (a bounded queue; when full the event is dropped and
// counted). One owned thread sends. A repeat of the same (pod uid, type, reason, note) within
// kSeriesWindow updates the first Event's `series` (count, lastObservedTime) instead of
// creating a new one, at most once per kSeriesFlush per Event.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <ksched/handle.h>

#include "client/rest_client.h"

namespace ksched::scheduler {

class ApiEventRecorder final : public EventRecorder {
 public:
  static constexpr size_t kMaxQueued = 10000;
  static constexpr std::chrono::minutes kSeriesWindow{6};
  static constexpr std::chrono::seconds kSeriesFlush{30};

  // `client` should have its own limiter (events must not starve bindings).
  // `reportingController` is the profile's scheduler name upstream; `instance` the holder id.
  ApiEventRecorder(client::RestClient& client, std::string reportingController,
                   std::string reportingInstance);
  ~ApiEventRecorder() override;

  void event(const api::Pod& regarding, std::string_view type, std::string_view reason,
             std::string_view action, std::string message) override;
  void eventFor(const api::ObjectReference& regarding, std::string_view type,
                std::string_view reason, std::string_view action, std::string message) override;

  // Sends what is queued and pending series updates, then stops the thread. Idempotent.
  void shutdown();

  [[nodiscard]] uint64_t sent() const;
  [[nodiscard]] uint64_t dropped() const;
  // Blocks until the queue is empty (tests).
  void flushForTest();

 private:
  struct Pending {
    std::string ns, name, uid, resourceVersion;
    std::string type, reason, action, note;
    std::chrono::system_clock::time_point when;
    std::string apiVersion = "v1", kind = "Pod";
  };
  struct Series {
    std::string eventName;
    std::string ns;
    int32_t count = 1;
    std::chrono::system_clock::time_point first, last;
    std::chrono::steady_clock::time_point lastFlush;
    bool dirty = false;
  };

  void enqueue(Pending p);
  void run(std::stop_token st);
  void send(const Pending& p);
  void flushSeries(bool all);

  // Constant after construction.
  client::RestClient& client_;
  const std::string controller_;
  const std::string instance_;

  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::condition_variable_any idleCv_;
  std::deque<Pending> queue_;             // guarded by mu_
  bool busy_ = false;                     // guarded by mu_
  uint64_t sent_ = 0, dropped_ = 0;       // guarded by mu_
  std::map<std::string, Series> series_;  // sender thread only
  std::jthread thread_;
};

}  // namespace ksched::scheduler
