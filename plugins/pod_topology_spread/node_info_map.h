// NodeInfoMap: NodeInfo address -> value, for per-cycle lookups of the NodeInfos a plugin is
// handed (Score gets a NodeInfo, not its place in the snapshot's list).
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <ksched/node_info.h>

namespace ksched::plugins::spread {

// Open addressing, linear probing. Not thread-safe to change; find() may run on several threads
// at once while nothing changes the map.
template <typename V>
class NodeInfoMap {
 public:
  void clear() {
    for (Slot& slot : slots_) slot.key = nullptr;
    size_ = 0;
  }
  void reserve(size_t n) {
    if ((n + 1) * 2 <= slots_.size()) return;
    size_t cap = 16;
    while (cap < (n + 1) * 2) cap *= 2;
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{});
    size_ = 0;
    for (const Slot& slot : old) {
      if (slot.key != nullptr) put(slot.key, slot.value);
    }
  }
  // Inserts or overwrites. Call reserve() for the total first.
  void put(const NodeInfo* key, V value) {
    size_t at = bucket(key);
    while (slots_[at].key != nullptr && slots_[at].key != key) at = (at + 1) & (slots_.size() - 1);
    if (slots_[at].key == nullptr) ++size_;
    slots_[at] = {key, value};
  }
  // Removes `key` when it maps to `value`.
  void eraseIf(const NodeInfo* key, V value) {
    if (slots_.empty()) return;
    const size_t mask = slots_.size() - 1;
    size_t i = bucket(key);
    while (slots_[i].key != key) {
      if (slots_[i].key == nullptr) return;
      i = (i + 1) & mask;
    }
    if (slots_[i].value != value) return;
    // Backward-shift deletion: move up every later entry of the run that may take the hole.
    for (size_t j = (i + 1) & mask; slots_[j].key != nullptr; j = (j + 1) & mask) {
      const size_t home = bucket(slots_[j].key);
      const bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (between) continue;
      slots_[i] = slots_[j];
      i = j;
    }
    slots_[i].key = nullptr;
    --size_;
  }
  [[nodiscard]] const V* find(const NodeInfo* key) const {
    if (slots_.empty()) return nullptr;
    for (size_t at = bucket(key);; at = (at + 1) & (slots_.size() - 1)) {
      if (slots_[at].key == key) return &slots_[at].value;
      if (slots_[at].key == nullptr) return nullptr;
    }
  }
  [[nodiscard]] size_t size() const { return size_; }

 private:
  struct Slot {
    const NodeInfo* key = nullptr;
    V value{};
  };

  [[nodiscard]] size_t bucket(const NodeInfo* key) const {
    const auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h >> 32) & (slots_.size() - 1);
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
};

}  // namespace ksched::plugins::spread
