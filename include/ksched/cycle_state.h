// CycleState: per-pod, per-cycle data that plugins share between extension points.
//
// Contract: written during PreFilter/PreScore/Reserve (single-threaded); only read during the
// parallel Filter/Score. Every value implements clone(): preemption runs Filter on copies.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace ksched {

namespace framework {
class Framework;
}

class StateData {
 public:
  virtual ~StateData() = default;
  [[nodiscard]] virtual std::unique_ptr<StateData> clone() const = 0;
};

// A typed key: `inline constexpr StateKey<MyState> kMyKey{"PreFilterNodeAffinity"};`
template <typename T>
struct StateKey {
  std::string_view name;
};

class CycleState {
 public:
  CycleState() = default;
  CycleState(CycleState&&) noexcept = default;
  CycleState& operator=(CycleState&&) noexcept = default;

  template <typename T>
  void write(StateKey<T> key, std::unique_ptr<T> value) {
    data_[std::string(key.name)] = std::move(value);
  }
  // nullptr when absent or of another type.
  template <typename T>
  [[nodiscard]] const T* read(StateKey<T> key) const {
    auto it = data_.find(key.name);
    return it == data_.end() ? nullptr : dynamic_cast<const T*>(it->second.get());
  }
  template <typename T>
  [[nodiscard]] T* mutableRead(StateKey<T> key) {
    auto it = data_.find(key.name);
    return it == data_.end() ? nullptr : dynamic_cast<T*>(it->second.get());
  }
  void erase(std::string_view key) {
    if (auto it = data_.find(key); it != data_.end()) data_.erase(it);
  }

  // A deep copy (each value cloned).
  [[nodiscard]] CycleState clone() const {
    CycleState c;
    for (const auto& [k, v] : data_) c.data_.emplace(k, v ? v->clone() : nullptr);
    c.skipFilterPlugins = skipFilterPlugins;
    c.skipScorePlugins = skipScorePlugins;
    c.skippedFilters_ = skippedFilters_;
    return c;
  }

  // Plugins whose PreFilter/PreScore returned Skip: the framework skips their Filter/Score.
  std::set<std::string, std::less<>> skipFilterPlugins;
  std::set<std::string, std::less<>> skipScorePlugins;

 private:
  friend class framework::Framework;
  // skipFilterPlugins as positions in the profile's Filter list (bit i = the i-th is skipped),
  // set by the framework after PreFilter so the per-node loop looks no names up.
  std::optional<uint64_t> skippedFilters_;
  std::map<std::string, std::unique_ptr<StateData>, std::less<>> data_;
};

}  // namespace ksched
