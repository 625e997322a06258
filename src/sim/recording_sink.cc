#include "sim/recording_sink.h"

#include <utility>

namespace ksched::sim {
namespace {

constexpr std::string_view kPreemptedBy = "Preempted by pod ";

}  // namespace

void RecordingSink::suggested(const api::Pod& pod, const scheduler::ScheduleResult& result) {
  if (result.ties == 0) return;
  std::lock_guard lock(mu_);
  TieIndexes& t = ties_[pod.metadata.uid];
  t.count = result.ties;
  t.names.clear();
  t.names.reserve(result.tiedWith.size());
  for (const std::string& name : result.tiedWith) {
    auto [it, added] = nodeIndex_.try_emplace(name, static_cast<uint32_t>(nodeNames_.size()));
    if (added) nodeNames_.push_back(name);
    t.names.push_back(it->second);
  }
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
  if (it == ties_.end()) return {};
  Ties out{.count = it->second.count, .names = {}};
  out.names.reserve(it->second.names.size());
  for (uint32_t i : it->second.names) out.names.push_back(nodeNames_[i]);
  return out;
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
