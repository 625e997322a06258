// Status: the result of running a plugin, with upstream kube-scheduler's codes.
//
// Cheap on the hot path: a success Status holds no strings and allocates nothing. Plugins
// return Status, never throw, inside a scheduling cycle.
#pragma once

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

class [[nodiscard]] Status {
 public:
  Status() = default;  // success
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}

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
  [[nodiscard]] const std::vector<std::string>& reasons() const noexcept { return reasons_; }
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
  [[nodiscard]] const std::vector<std::string>& details() const noexcept { return details_; }
  Status& withDetails(std::vector<std::string> details) {
    details_ = std::move(details);
    return *this;
  }
  // The plugin that produced this status (set by the framework).
  [[nodiscard]] const std::string& plugin() const noexcept { return plugin_; }
  Status& withPlugin(std::string_view plugin) {
    plugin_ = plugin;
    return *this;
  }

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::vector<std::string> details_;
  std::string plugin_;
  int httpCode_ = 0;
};

}  // namespace ksched
