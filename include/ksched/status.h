// Status: the result of running a plugin, with upstream kube-scheduler's codes.
//
// Cheap on the hot path: a Status is a code and one pointer. A success (or any status without
// reasons, details or plugin) holds no strings, allocates nothing and is destroyed by a null
// check; Filter and Score return one per plugin per node. Plugins return Status, never throw,
// inside a scheduling cycle.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ksched {

enum class Code {
  kSuccess,
  kError,                         // an internal error: the pod is retried with backoff
  kUnschedulable,                 // the pod does not fit now; preemption may help
  kUnschedulableAndUnresolvable,  // the pod does not fit and preemption cannot help
  kWait,                          // Permit: wait for allow/reject
  kSkip,  // PreFilter/PreScore/PreBindPreFlight: the plugin has nothing to do for this pod
};

[[nodiscard]] std::string_view codeName(Code c) noexcept;

namespace status_detail {
// What an empty Status's accessors refer to.
inline const std::vector<std::string> kNoStrings;
inline const std::string kNoString;
}  // namespace status_detail

class [[nodiscard]] Status {
 public:
  Status() noexcept = default;  // success
  Status(Code code, std::vector<std::string> reasons) : code_(code) {
    if (!reasons.empty()) more().reasons = std::move(reasons);
  }
  Status(const Status& other)
      : code_(other.code_),
        httpCode_(other.httpCode_),
        more_(other.more_ ? std::make_unique<More>(*other.more_) : nullptr) {}
  Status& operator=(const Status& other) {
    if (this != &other) {
      code_ = other.code_;
      httpCode_ = other.httpCode_;
      more_ = other.more_ ? std::make_unique<More>(*other.more_) : nullptr;
    }
    return *this;
  }
  Status(Status&&) noexcept = default;
  Status& operator=(Status&&) noexcept = default;
  ~Status() = default;

  static Status success() { return {}; }
  static Status error(std::string msg) { return {Code::kError, {std::move(msg)}}; }
  static Status unschedulable(std::string reason) {
    return {Code::kUnschedulable, {std::move(reason)}};
  }
  static Status unresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, {std::move(reason)}};
  }
  static Status wait() { return {Code::kWait, {}}; }
  // A Wait that says what it waits for (PlacementFeasible).
  static Status wait(std::string reason) { return {Code::kWait, {std::move(reason)}}; }
  static Status skip() { return {Code::kSkip, {}}; }

  [[nodiscard]] Code code() const noexcept { return code_; }
  [[nodiscard]] bool ok() const noexcept { return code_ == Code::kSuccess; }
  [[nodiscard]] bool isSkip() const noexcept { return code_ == Code::kSkip; }
  [[nodiscard]] bool isWait() const noexcept { return code_ == Code::kWait; }
  [[nodiscard]] bool isError() const noexcept { return code_ == Code::kError; }
  // Unschedulable or UnschedulableAndUnresolvable.
  [[nodiscard]] bool isRejected() const noexcept {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable;
  }
  // The reasons, each one a user-facing phrase such as "Insufficient cpu".
  [[nodiscard]] const std::vector<std::string>& reasons() const noexcept {
    return more_ ? more_->reasons : status_detail::kNoStrings;
  }
  // Reasons joined with ", ".
  [[nodiscard]] std::string message() const;

  // The HTTP code of the apiserver answer this status reports (ApiError::code, e.g. 409 when a
  // Bind found the pod bound already); 0 when it reports none.
  [[nodiscard]] int httpCode() const noexcept { return httpCode_; }
  Status& withHttpCode(int code) {
    httpCode_ = code;
    return *this;
  }

  // What a person needs beyond the reasons, one sentence each ("claim gpu, request a100: every
  // matching device is in use"): shown by explain and the diagnosis annotation, never part of
  // message() (so FailedScheduling counts reasons as upstream does).
  [[nodiscard]] const std::vector<std::string>& details() const noexcept {
    return more_ ? more_->details : status_detail::kNoStrings;
  }
  Status& withDetails(std::vector<std::string> details) {
    if (more_ || !details.empty()) more().details = std::move(details);
    return *this;
  }
  // The plugin that produced this status (set by the framework).
  [[nodiscard]] const std::string& plugin() const noexcept {
    return more_ ? more_->plugin : status_detail::kNoString;
  }
  Status& withPlugin(std::string_view plugin) {
    if (more_ || !plugin.empty()) more().plugin = plugin;
    return *this;
  }

 private:
  // Everything but the codes, allocated on first use.
  struct More {
    std::vector<std::string> reasons;
    std::vector<std::string> details;
    std::string plugin;
  };
  More& more() {
    if (!more_) more_ = std::make_unique<More>();
    return *more_;
  }

  Code code_ = Code::kSuccess;
  int httpCode_ = 0;
  std::unique_ptr<More> more_;
};

}  // namespace ksched
