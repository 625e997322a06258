#include "sim/recording_sink.h"

#include <utility>

namespace ksched::sim {
namespace {

constexpr std::string_view kPreemptedBy = "Preempted by pod ";

}  // namespace

void RecordingSink::suggested(const api::Pod& pod, const scheduler::ScheduleResult& result) {
  if (result.ties == 0) return;
  std::lock_guard lock(mu_);
  ties_[pod.metadata.uid] = {result.ties, result.tiedWith};
}

int RecordingSink::failures(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = failures_.find(uid);
  return it == failures_.end() ? 0 : it->second;
}

std::optional<std::string> RecordingSink::lastFailure(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = lastFailure_.find(uid);
  if (it == lastFailure_.end()) return std::nullopt;
  return it->second;
}

std::string RecordingSink::preemptor(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = preemptorOf_.find(uid);
  return it == preemptorOf_.end() ? "" : it->second;
}

RecordingSink::Ties RecordingSink::ties(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = ties_.find(uid);
  return it == ties_.end() ? Ties{} : it->second;
}

void RecordingSink::event(const api::Pod& regarding, std::string_view /*type*/,
                          std::string_view reason, std::string_view /*action*/,
                          std::string message) {
  std::lock_guard lock(mu_);
  const std::string& uid = regarding.metadata.uid;
  if (reason == "FailedScheduling") {
    ++failures_[uid];
    lastFailure_[uid] = std::move(message);
  } else if (reason == "Preempted" && message.starts_with(kPreemptedBy)) {
    // "Preempted by pod <uid> on node <node>"
    std::string rest = message.substr(kPreemptedBy.size());
    preemptorOf_[uid] = rest.substr(0, rest.find(' '));
  }
}

}  // namespace ksched::sim
