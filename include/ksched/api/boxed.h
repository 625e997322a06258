// Boxed<T>: an optional value kept on the heap, for the object model's large fields that most
// objects leave unset (a pod's affinity, its pod-level resources). An empty one is a null
// pointer (8 bytes where std::optional<T> holds a whole T); it reads and writes like
// std::optional and copies deeply.
#pragma once

#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace ksched::api {

template <typename T>
class Boxed {
 public:
  using value_type = T;

  Boxed() noexcept = default;
  Boxed(std::nullopt_t) noexcept {}  // NOLINT(google-explicit-constructor): as std::optional
  Boxed(const T& v) : p_(std::make_unique<T>(v)) {}        // NOLINT(google-explicit-constructor)
  Boxed(T&& v) : p_(std::make_unique<T>(std::move(v))) {}  // NOLINT(google-explicit-constructor)
  Boxed(const std::optional<T>& v)                         // NOLINT(google-explicit-constructor)
      : p_(v ? std::make_unique<T>(*v) : nullptr) {}
  Boxed(const Boxed& o) : p_(o.p_ ? std::make_unique<T>(*o.p_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  ~Boxed() = default;

  Boxed& operator=(const Boxed& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<T>(*o.p_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) noexcept {
    p_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) {
    if (p_) {
      *p_ = v;
    } else {
      p_ = std::make_unique<T>(v);
    }
    return *this;
  }
  Boxed& operator=(T&& v) {
    if (p_) {
      *p_ = std::move(v);
    } else {
      p_ = std::make_unique<T>(std::move(v));
    }
    return *this;
  }

  template <typename... Args>
  T& emplace(Args&&... args) {
    p_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *p_;
  }
  void reset() noexcept { p_.reset(); }

  [[nodiscard]] bool has_value() const noexcept { return p_ != nullptr; }
  explicit operator bool() const noexcept { return p_ != nullptr; }
  [[nodiscard]] T& operator*() noexcept { return *p_; }
  [[nodiscard]] const T& operator*() const noexcept { return *p_; }
  [[nodiscard]] T* operator->() noexcept { return p_.get(); }
  [[nodiscard]] const T* operator->() const noexcept { return p_.get(); }
  [[nodiscard]] T& value() {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  [[nodiscard]] const T& value() const {
    if (!p_) throw std::bad_optional_access();
    return *p_;
  }
  template <typename U>
  [[nodiscard]] T value_or(U&& fallback) const {
    return p_ ? *p_ : static_cast<T>(std::forward<U>(fallback));
  }
  // As a std::optional (a copy), for code written against one.
  [[nodiscard]] std::optional<T> optional() const {
    return p_ ? std::optional<T>(*p_) : std::nullopt;
  }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    return a.p_ ? (b.p_ && *a.p_ == *b.p_) : !b.p_;
  }
  friend bool operator==(const Boxed& a, std::nullopt_t) noexcept { return !a.p_; }

 private:
  std::unique_ptr<T> p_;
};

}  // namespace ksched::api
