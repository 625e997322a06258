// EventSink: where the scheduling loop and the binders send Kubernetes Events. The plugins'
// EventRecorder (include/ksched/handle.h) plus what the scheduler itself needs: forget a pod it
// will say no more about, and send what is queued at shutdown.
//
// Implementations: ApiEventRecorder (event_recorder.h, the live daemon's, over its own REST
// client); an in-memory one for a simulator or unit tests. Thread-safe; event() never blocks.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include <ksched/handle.h>

namespace ksched::scheduler {

class EventSink : public EventRecorder {
 public:
  // Nothing more will be reported about the object `uid` (a pod bound or deleted): state kept
  // to aggregate its repeats may go once its queued events are out.
  virtual void forget(const std::string& uid) = 0;
  // Sends what is queued until `deadline`, drops the rest and stops accepting events. Returns
  // the number dropped. Idempotent.
  virtual uint64_t shutdown(std::chrono::steady_clock::time_point deadline) = 0;
  // Events sent so far.
  [[nodiscard]] virtual uint64_t sent() const = 0;
  // Events not sent so far, for any reason (a full queue, a failed send, shutdown); a sink that
  // keeps everything drops none.
  [[nodiscard]] virtual uint64_t dropped() const { return 0; }
};

}  // namespace ksched::scheduler
