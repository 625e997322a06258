#include "scheduler/event_recorder.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <random>

#include <ksched/api/object_reference.h>
#include <ksched/api/rfc3339.h>

namespace ksched::scheduler {
namespace {

// The apiserver's limit on a note (NoteLengthLimit); longer ones end in " ...", as upstream.
std::string truncateNote(const std::string& note) {
  constexpr size_t kMax = 1024;
  if (note.size() <= kMax) return note;
  return note.substr(0, kMax - 4) + " ...";
}

std::string eventName(const std::string& podName, std::chrono::system_clock::time_point t) {
  // Like client-go: "<object name>.<hex unix nanos>".
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ns));
  return podName + "." + buf;
}

}  // namespace

ApiEventRecorder::ApiEventRecorder(client::RestClient& client, std::string reportingController,
                                   std::string reportingInstance)
    : client_(client),
      controller_(std::move(reportingController)),
      instance_(std::move(reportingInstance)) {
  thread_ = std::jthread([this](std::stop_token st) {
    pthread_setname_np(pthread_self(), "events");
    run(std::move(st));
  });
}

ApiEventRecorder::~ApiEventRecorder() { shutdown(); }

void ApiEventRecorder::shutdown() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
}

void ApiEventRecorder::event(const api::Pod& regarding, std::string_view type,
                             std::string_view reason, std::string_view action,
                             std::string message) {
  Pending p{regarding.metadata.namespace_,
            regarding.metadata.name,
            regarding.metadata.uid,
            regarding.metadata.resourceVersion,
            std::string(type),
            std::string(reason),
            std::string(action),
            std::move(message),
            std::chrono::system_clock::now()};
  enqueue(std::move(p));
}

void ApiEventRecorder::eventFor(const api::ObjectReference& regarding, std::string_view type,
                                std::string_view reason, std::string_view action,
                                std::string message) {
  Pending p{regarding.namespace_,      regarding.name,     regarding.uid,
            regarding.resourceVersion, std::string(type),  std::string(reason),
            std::string(action),       std::move(message), std::chrono::system_clock::now(),
            regarding.apiVersion,      regarding.kind};
  enqueue(std::move(p));
}

void ApiEventRecorder::enqueue(Pending p) {
  {
    std::lock_guard lock(mu_);
    if (queue_.size() >= kMaxQueued) {
      ++dropped_;
      return;
    }
    queue_.push_back(std::move(p));
  }
  cv_.notify_one();
}

uint64_t ApiEventRecorder::sent() const {
  std::lock_guard lock(mu_);
  return sent_;
}

uint64_t ApiEventRecorder::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

void ApiEventRecorder::flushForTest() {
  std::unique_lock lock(mu_);
  idleCv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

void ApiEventRecorder::run(std::stop_token st) {
  while (true) {
    Pending p;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, st, std::chrono::seconds(1), [&] { return !queue_.empty(); });
      if (queue_.empty()) {
        idleCv_.notify_all();
        if (st.stop_requested()) break;
        lock.unlock();
        flushSeries(false);
        continue;
      }
      p = std::move(queue_.front());
      queue_.pop_front();
      busy_ = true;
    }
    send(p);
    {
      std::lock_guard lock(mu_);
      busy_ = false;
      if (queue_.empty()) idleCv_.notify_all();
    }
  }
  flushSeries(true);
}

void ApiEventRecorder::send(const Pending& p) {
  const std::string key = p.uid + "\x1f" + p.type + "\x1f" + p.reason + "\x1f" + p.note;
  auto it = series_.find(key);
  if (it != series_.end() && p.when - it->second.first < kSeriesWindow) {
    ++it->second.count;
    it->second.last = p.when;
    it->second.dirty = true;
    return;
  }
  const std::string name = eventName(p.name, p.when);
  nlohmann::json ev = {{"apiVersion", "events.k8s.io/v1"},
                       {"kind", "Event"},
                       {"metadata", {{"name", name}, {"namespace", p.ns}}},
                       {"eventTime", api::formatRFC3339Micro(p.when)},
                       {"reportingController", controller_},
                       {"reportingInstance", instance_},
                       {"action", p.action},
                       {"reason", p.reason},
                       {"type", p.type},
                       {"note", truncateNote(p.note)},
                       {"regarding",
                        {{"apiVersion", p.apiVersion},
                         {"kind", p.kind},
                         {"namespace", p.ns},
                         {"name", p.name},
                         {"uid", p.uid},
                         {"resourceVersion", p.resourceVersion}}}};
  try {
    client_.post("/apis/events.k8s.io/v1/namespaces/" + p.ns + "/events", ev);
    std::lock_guard lock(mu_);
    ++sent_;
  } catch (const client::ApiError& e) {
    spdlog::warn("event {} for {} {}/{} not recorded: {}", p.reason, p.kind, p.ns, p.name,
                 e.what());
    return;
  }
  // Forget old series so the map stays small.
  for (auto s = series_.begin(); s != series_.end();) {
    s = p.when - s->second.first >= kSeriesWindow && !s->second.dirty ? series_.erase(s) : ++s;
  }
  series_[key] = Series{name, p.ns, 1, p.when, p.when, std::chrono::steady_clock::now(), false};
}

void ApiEventRecorder::flushSeries(bool all) {
  auto now = std::chrono::steady_clock::now();
  for (auto& [key, s] : series_) {
    if (!s.dirty || (!all && now - s.lastFlush < kSeriesFlush)) continue;
    nlohmann::json patch = {
        {"series", {{"count", s.count}, {"lastObservedTime", api::formatRFC3339Micro(s.last)}}}};
    try {
      client_.patch("/apis/events.k8s.io/v1/namespaces/" + s.ns + "/events/" + s.eventName, patch);
    } catch (const client::ApiError& e) {
      spdlog::debug("event series {} not updated: {}", s.eventName, e.what());
    }
    s.dirty = false;
    s.lastFlush = now;
  }
}

}  // namespace ksched::scheduler
