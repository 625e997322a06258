// CycleState: per-pod, per-cycle data that plugins share between extension points.
//
// Contract: written during PreFilter/PreScore/Reserve (single-threaded); only read during the
// parallel Filter/Score. Every value implements clone(): preemption runs Filter on copies.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ksched {

namespace framework {
class Framework;
}

class StateData {
 public:
  virtual ~StateData() = default;
  [[nodiscard]] virtual std::unique_ptr<StateData> clone() const = 0;
};

// A set of plugin names, shared by a CycleState and its clones until one of them changes it
// (preemption and the nominated-pods pass clone the state for every node they try).
class PluginNameSet {
 public:
  void insert(std::string_view name) { mutate().emplace(name); }
  void emplace(std::string_view name) { insert(name); }
  [[nodiscard]] bool contains(std::string_view name) const {
    return names_ != nullptr && names_->contains(name);
  }
  [[nodiscard]] bool empty() const { return names_ == nullptr || names_->empty(); }
  void clear() { names_.reset(); }

 private:
  using Names = std::set<std::string, std::less<>>;
  Names& mutate() {
    if (names_ == nullptr) {
      names_ = std::make_shared<Names>();
    } else if (names_.use_count() > 1) {
      names_ = std::make_shared<Names>(*names_);
    }
    return *names_;
  }
  std::shared_ptr<Names> names_;
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
    Entry* e = find(key.name);
    if (e == nullptr) {
      e = &data_.emplace_back(Entry{std::string(key.name), key.name.data(), nullptr, nullptr});
    }
    e->type = &typeTag<T>;
    e->value = std::move(value);
  }
  // nullptr when absent or of another type.
  template <typename T>
  [[nodiscard]] const T* read(StateKey<T> key) const {
    return cast<const T>(findKey(key.name));
  }
  template <typename T>
  [[nodiscard]] T* mutableRead(StateKey<T> key) {
    return cast<T>(const_cast<Entry*>(std::as_const(*this).findKey(key.name)));
  }
  void erase(std::string_view key) {
    if (Entry* e = find(key)) data_.erase(data_.begin() + (e - data_.data()));
  }

  // A deep copy (each value cloned; the skip sets shared until changed).
  [[nodiscard]] CycleState clone() const {
    CycleState c;
    c.data_.reserve(data_.size());
    for (const auto& e : data_) {
      c.data_.push_back(Entry{e.key, e.written, e.type, e.value ? e.value->clone() : nullptr});
    }
    c.skipFilterPlugins = skipFilterPlugins;
    c.skipScorePlugins = skipScorePlugins;
    c.skippedFilters_ = skippedFilters_;
    return c;
  }

  // Plugins whose PreFilter/PreScore returned Skip: the framework skips their Filter/Score.
  PluginNameSet skipFilterPlugins;
  PluginNameSet skipScorePlugins;

 private:
  friend class framework::Framework;
  // skipFilterPlugins as positions in the profile's Filter list (bit i = the i-th is skipped),
  // set by the framework after PreFilter so the per-node loop looks no names up.
  std::optional<uint64_t> skippedFilters_;

  // Filter and Score read the state once per plugin and node, so a read is a short scan of a
  // dozen entries and, when the value was written as the type asked for, a static cast;
  // dynamic_cast only for a value written as another type. A key is usually one constant
  // (`kMyKey`) for the write and the reads: the scan compares the addresses of its text first
  // (then the text of the one that matches), and compares texts only when no address matches.
  struct Entry {
    std::string key;
    const char* written;  // the text's address in the StateKey first written with (never read)
    const void* type;     // &typeTag<T> of the write
    std::unique_ptr<StateData> value;
  };
  template <typename T>
  static constexpr char typeTag = 0;

  [[nodiscard]] const Entry* find(std::string_view key) const {
    for (const Entry& e : data_) {
      if (e.key.size() == key.size() && std::string_view(e.key) == key) return &e;
    }
    return nullptr;
  }
  [[nodiscard]] Entry* find(std::string_view key) {
    return const_cast<Entry*>(std::as_const(*this).find(key));
  }
  [[nodiscard]] const Entry* findKey(std::string_view key) const {
    for (const Entry& e : data_) {
      if (e.written == key.data() && std::string_view(e.key) == key) return &e;
    }
    return find(key);
  }
  template <typename T>
  [[nodiscard]] static T* cast(const Entry* e) {
    if (e == nullptr || e->value == nullptr) return nullptr;
    if (e->type == &typeTag<std::remove_const_t<T>>) return static_cast<T*>(e->value.get());
    return dynamic_cast<T*>(e->value.get());
  }

  std::vector<Entry> data_;
};

}  // namespace ksched
