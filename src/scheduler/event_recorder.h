// Posts Kubernetes Events (events.k8s.io/v1) for pods and other objects, the way
// kube-scheduler does: asynchronously, through its own rate-limited client, with repeats
// aggregated into a series.
//
// event() never blocks: it enqueues into one of Options::senders queues, chosen by the object's
// uid (so one object's events stay in order), each drained by its own thread over its own
// keep-alive connection. The queues together hold at most Options::maxQueued events; beyond
// that an event is dropped and counted. A repeat of the same (object uid, type, reason, note)
// within Options::seriesWindow updates the first Event's `series` (count, lastObservedTime)
// instead of creating a new one, at most once per Options::seriesFlush per Event.
//
// Aggregation state is kept per object only while a repeat can still come: forget(uid) (a pod
// bound or deleted) sends its pending series update and drops it; whatever is older than the
// window is swept once per second, never per event.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include <ksched/handle.h>

#include "client/rest_client.h"
#include "scheduler/event_sink.h"

namespace ksched::scheduler {

// The live event sink (event_sink.h).
class ApiEventRecorder final : public EventSink {
 public:
  // Why an event was not sent (the `reason` label of scheduler_events_dropped_total).
  static constexpr std::string_view kDropQueueFull = "queue_full";
  static constexpr std::string_view kDropShutdown = "shutdown";
  static constexpr std::string_view kDropSendFailed = "send_failed";

  struct Options {
    int senders = 8;  // parallel POSTs, each on its own connection (within the client's QPS)
    size_t maxQueued = 10000;
    std::chrono::seconds seriesWindow{360};
    std::chrono::seconds seriesFlush{30};
    // Called for every event not sent, with the reason above (metrics). Any thread.
    std::function<void(std::string_view reason)> onDropped;
  };

  // `client` should have its own limiter (events must not starve bindings).
  // `reportingController` is the profile's scheduler name upstream; `instance` the holder id.
  ApiEventRecorder(client::RestClient& client, std::string reportingController,
                   std::string reportingInstance, Options options);
  ApiEventRecorder(client::RestClient& client, std::string reportingController,
                   std::string reportingInstance)
      : ApiEventRecorder(client, std::move(reportingController), std::move(reportingInstance),
                         Options{}) {}
  // Drops what is still queued (shutdown() first to send it).
  ~ApiEventRecorder() override;
  ApiEventRecorder(const ApiEventRecorder&) = delete;
  ApiEventRecorder& operator=(const ApiEventRecorder&) = delete;

  void event(const api::Pod& regarding, std::string_view type, std::string_view reason,
             std::string_view action, std::string message) override;
  void eventFor(const api::ObjectReference& regarding, std::string_view type,
                std::string_view reason, std::string_view action, std::string message) override;

  // Nothing more will be reported about the object `uid` (a pod bound or deleted): after the
  // events already queued for it, its pending series updates are sent and its aggregation state
  // dropped.
  void forget(const std::string& uid) override;

  // Sends what is queued and the pending series updates until `deadline`, drops the rest
  // (counted as kDropShutdown), and stops the senders. A send in flight at the deadline ends
  // when the client is aborted (the caller's job). Returns the events dropped at shutdown.
  // Idempotent.
  uint64_t shutdown(std::chrono::steady_clock::time_point deadline) override;

  [[nodiscard]] uint64_t sent() const override { return sent_.load(); }
  // Events not sent, for any reason.
  [[nodiscard]] uint64_t dropped() const override { return dropped_.load(); }
  // Objects and Events the aggregation state holds now (tests: memory stays bounded).
  [[nodiscard]] size_t seriesTracked() const;
  // Blocks until every queue is empty and no send is in progress (tests).
  void flushForTest();

 private:
  struct Pending {
    std::string ns, name, uid, resourceVersion;
    std::string type, reason, action, note;
    std::chrono::system_clock::time_point when;
    std::string apiVersion = "v1", kind = "Pod";
    bool forget = false;  // a forget(uid) marker, not an event
  };
  // One Event that repeats would update.
  struct Series {
    uint64_t key = 0;  // hash of (type, reason, note)
    std::string eventName;
    int32_t count = 1;
    std::chrono::system_clock::time_point first, last;
    std::chrono::steady_clock::time_point lastFlush;
    bool dirty = false;
  };
  // Aggregation state of one object.
  struct Object {
    std::string ns;
    std::vector<Series> series;
  };
  struct Shard {
    std::mutex mu;
    std::condition_variable_any cv;
    std::deque<Pending> queue;                        // guarded by mu
    bool busy = false;                                // guarded by mu
    std::unordered_map<std::string, Object> objects;  // sender thread only
    std::atomic<size_t> tracked{0};                   // Series entries in `objects`
    std::chrono::steady_clock::time_point lastMaintenance;
    std::jthread thread;
  };

  void enqueue(Pending p);
  void run(Shard& shard, const std::stop_token& st);
  void process(Shard& shard, const Pending& p);
  void send(Shard& shard, const Pending& p, uint64_t key);
  // Sends due series updates (all dirty ones with `all`) and forgets series past the window.
  void maintain(Shard& shard, bool all);
  void patchSeries(const std::string& ns, Series& s);
  void drop(std::string_view reason);
  [[nodiscard]] bool pastDeadline() const;

  // Constant after construction.
  client::RestClient& client_;
  const std::string controller_;
  const std::string instance_;
  const Options options_;

  std::vector<std::unique_ptr<Shard>> shards_;
  std::atomic<size_t> queued_{0};
  std::atomic<uint64_t> sent_{0}, dropped_{0}, droppedAtShutdown_{0};
  // steady_clock ticks; max until shutdown() sets it.
  std::atomic<std::chrono::steady_clock::rep> deadline_;
  std::atomic<bool> stopped_{false};
};

}  // namespace ksched::scheduler
