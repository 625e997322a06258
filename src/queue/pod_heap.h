// Internal to the scheduling queue: the per-pod record the queue keeps and an indexed binary
// heap over those records (upstream internal/heap). Not thread-safe: SchedulingQueue guards
// every use with its mutex.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <ksched/plugin.h>

#include "queue/hints.h"

namespace ksched::queue::detail {

enum class Location : uint8_t { kActive, kBackoff, kUnschedulable };

// One queued pod. Owned by SchedulingQueue; the heaps and the unschedulable map hold raw
// pointers to it.
struct Entry {
  std::unique_ptr<QueuedPodInfo> info;
  std::optional<Judges> judges;  // set while in unschedulablePods (on first use)
  Location where = Location::kActive;
  size_t heapIndex = 0;  // valid while in a heap
  // The end of the last failed attempt: the base of the backoff. Unset for pods that never failed.
  std::optional<std::chrono::steady_clock::time_point> lastFailure;
  // Set when entering backoffQ: lastFailure + backoff(attempts).
  std::chrono::steady_clock::time_point backoffExpiry{};

  [[nodiscard]] bool gated() const noexcept { return !info->gatingPlugin.empty(); }
};

// A binary heap of Entry* where every entry knows its index, so erase() and fix() are
// O(log n). `less(a, b)` true means a comes out before b.
class EntryHeap {
 public:
  using Less = std::function<bool(const Entry&, const Entry&)>;

  explicit EntryHeap(Less less) : less_(std::move(less)) {}

  [[nodiscard]] bool empty() const noexcept { return items_.empty(); }
  [[nodiscard]] size_t size() const noexcept { return items_.size(); }
  // Precondition: !empty().
  [[nodiscard]] Entry* top() const noexcept { return items_.front(); }
  // Unordered view, for iteration.
  [[nodiscard]] const std::vector<Entry*>& items() const noexcept { return items_; }

  void push(Entry* e);
  // Precondition: !empty().
  Entry* pop();
  // Precondition: `e` is in this heap.
  void erase(Entry* e);
  // Restores the order after `e`'s key changed. Precondition: `e` is in this heap.
  void fix(Entry* e);

 private:
  void swap(size_t i, size_t j) noexcept;
  void up(size_t i);
  bool down(size_t i);

  Less less_;
  std::vector<Entry*> items_;
};

}  // namespace ksched::queue::detail
