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
    keys_.assign(keys_.size(), nullptr);
    size_ = 0;
  }
  void reserve(size_t n) {
    if ((n + 1) * 2 <= keys_.size()) return;
    size_t cap = 16;
    while (cap < (n + 1) * 2) cap *= 2;
    std::vector<const NodeInfo*> keys = std::move(keys_);
    std::vector<V> values = std::move(values_);
    keys_.assign(cap, nullptr);
    values_.assign(cap, V{});
    size_ = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      if (keys[i] != nullptr) put(keys[i], values[i]);
    }
  }
  // Inserts or overwrites. Call reserve() for the total first.
  void put(const NodeInfo* key, V value) {
    size_t at = bucket(key);
    while (keys_[at] != nullptr && keys_[at] != key) at = (at + 1) & (keys_.size() - 1);
    if (keys_[at] == nullptr) ++size_;
    keys_[at] = key;
    values_[at] = value;
  }
  // Removes `key` when it maps to `value`.
  void eraseIf(const NodeInfo* key, V value) {
    if (keys_.empty()) return;
    const size_t mask = keys_.size() - 1;
    size_t i = bucket(key);
    while (keys_[i] != key) {
      if (keys_[i] == nullptr) return;
      i = (i + 1) & mask;
    }
    if (values_[i] != value) return;
    // Backward-shift deletion: move up every later entry of the run that may take the hole.
    for (size_t j = (i + 1) & mask; keys_[j] != nullptr; j = (j + 1) & mask) {
      const size_t home = bucket(keys_[j]);
      const bool between = i <= j ? (i < home && home <= j) : (i < home || home <= j);
      if (between) continue;
      keys_[i] = keys_[j];
      values_[i] = values_[j];
      i = j;
    }
    keys_[i] = nullptr;
    --size_;
  }
  [[nodiscard]] const V* find(const NodeInfo* key) const {
    if (keys_.empty()) return nullptr;
    for (size_t at = bucket(key);; at = (at + 1) & (keys_.size() - 1)) {
      if (keys_[at] == key) return &values_[at];
      if (keys_[at] == nullptr) return nullptr;
    }
  }
  [[nodiscard]] size_t size() const { return size_; }

 private:
  [[nodiscard]] size_t bucket(const NodeInfo* key) const {
    const auto h = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(key)) * 0x9E3779B97F4A7C15ULL;
    return static_cast<size_t>(h >> 32) & (keys_.size() - 1);
  }

  std::vector<const NodeInfo*> keys_;
  std::vector<V> values_;
  size_t size_ = 0;
};

}  // namespace ksched::plugins::spread
