#include "scheduler/event_recorder.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include <ksched/api/object_reference.h>
#include <ksched/api/rfc3339.h>

namespace ksched::scheduler {
namespace {

using SteadyClock = std::chrono::steady_clock;

// The apiserver's limit on a note (NoteLengthLimit); longer ones end in " ...", as upstream.
std::string truncateNote(const std::string& note) {
  constexpr size_t kMax = 1024;
  if (note.size() <= kMax) return note;
  return note.substr(0, kMax - 4) + " ...";
}

std::string eventName(const std::string& objectName, std::chrono::system_clock::time_point t) {
  // Like client-go: "<object name>.<hex unix nanos>".
  auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llx", static_cast<unsigned long long>(ns));
  return objectName + "." + buf;
}

uint64_t seriesKey(const std::string& type, const std::string& reason, const std::string& note) {
  const std::hash<std::string_view> h;
  uint64_t k = h(type);
  k = k * 0x100000001b3ULL ^ h(reason);
  k = k * 0x100000001b3ULL ^ h(note);
  return k;
}

constexpr auto kMaintenanceEvery = std::chrono::seconds(1);

}  // namespace

ApiEventRecorder::ApiEventRecorder(client::RestClient& client, std::string reportingController,
                                   std::string reportingInstance, Options options)
    : client_(client),
      controller_(std::move(reportingController)),
      instance_(std::move(reportingInstance)),
      options_(std::move(options)),
      deadline_(SteadyClock::time_point::max().time_since_epoch().count()) {
  const int n = std::max(options_.senders, 1);
  for (int i = 0; i < n; ++i) shards_.push_back(std::make_unique<Shard>());
  for (auto& shard : shards_) {
    Shard* sh = shard.get();
    sh->thread = std::jthread([this, sh](const std::stop_token& st) {
      pthread_setname_np(pthread_self(), "events");
      run(*sh, st);
    });
  }
}

ApiEventRecorder::~ApiEventRecorder() { (void)shutdown(SteadyClock::now()); }

uint64_t ApiEventRecorder::shutdown(SteadyClock::time_point deadline) {
  if (stopped_.exchange(true)) return droppedAtShutdown_.load();
  deadline_.store(deadline.time_since_epoch().count());
  for (auto& sh : shards_) {
    sh->thread.request_stop();
    sh->cv.notify_all();
  }
  for (auto& sh : shards_) {
    if (sh->thread.joinable()) sh->thread.join();
  }
  // Events that raced with the stop into a queue whose sender had already left.
  for (auto& sh : shards_) {
    std::lock_guard lock(sh->mu);
    for (const auto& p : sh->queue) {
      queued_.fetch_sub(1);
      if (!p.forget) drop(kDropShutdown);
    }
    sh->queue.clear();
  }
  return droppedAtShutdown_.load();
}

bool ApiEventRecorder::pastDeadline() const {
  return SteadyClock::now().time_since_epoch().count() >= deadline_.load();
}

void ApiEventRecorder::drop(std::string_view reason) {
  dropped_.fetch_add(1);
  if (reason == kDropShutdown) droppedAtShutdown_.fetch_add(1);
  if (options_.onDropped) options_.onDropped(reason);
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

void ApiEventRecorder::forget(const std::string& uid) {
  Pending p;
  p.uid = uid;
  p.forget = true;
  enqueue(std::move(p));
}

void ApiEventRecorder::enqueue(Pending p) {
  if (stopped_.load()) {
    if (!p.forget) drop(kDropShutdown);
    return;
  }
  if (queued_.fetch_add(1) >= options_.maxQueued) {
    queued_.fetch_sub(1);
    if (p.forget) return;  // the window forgets the object instead
    drop(kDropQueueFull);
    if (dropped_.load() % 1000 == 1) {
      spdlog::warn("events: {} queued, dropping new ones ({} dropped so far)", options_.maxQueued,
                   dropped_.load());
    }
    return;
  }
  Shard& sh = *shards_[std::hash<std::string>{}(p.uid) % shards_.size()];
  {
    std::lock_guard lock(sh.mu);
    sh.queue.push_back(std::move(p));
  }
  sh.cv.notify_one();
}

size_t ApiEventRecorder::seriesTracked() const {
  size_t n = 0;
  for (const auto& sh : shards_) n += sh->tracked.load();
  return n;
}

void ApiEventRecorder::flushForTest() {
  while (true) {
    bool idle = true;
    for (auto& sh : shards_) {
      std::lock_guard lock(sh->mu);
      idle = idle && sh->queue.empty() && !sh->busy;
    }
    if (idle) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

void ApiEventRecorder::run(Shard& sh, const std::stop_token& st) {
  while (true) {
    Pending p;
    {
      std::unique_lock lock(sh.mu);
      sh.busy = false;
      sh.cv.wait_for(lock, st, kMaintenanceEvery, [&] { return !sh.queue.empty(); });
      if (sh.queue.empty()) {
        if (st.stop_requested()) break;
        lock.unlock();
        maintain(sh, false);
        continue;
      }
      p = std::move(sh.queue.front());
      sh.queue.pop_front();
      sh.busy = true;
    }
    queued_.fetch_sub(1);
    if (pastDeadline()) {
      if (!p.forget) drop(kDropShutdown);
      continue;
    }
    process(sh, p);
    if (SteadyClock::now() - sh.lastMaintenance >= kMaintenanceEvery) maintain(sh, false);
  }
  if (!pastDeadline()) maintain(sh, true);
}

void ApiEventRecorder::process(Shard& sh, const Pending& p) {
  if (p.forget) {
    if (auto it = sh.objects.find(p.uid); it != sh.objects.end()) {
      for (auto& s : it->second.series) {
        if (s.dirty) patchSeries(it->second.ns, s);
      }
      sh.tracked.fetch_sub(it->second.series.size());
      sh.objects.erase(it);
    }
    return;
  }
  const uint64_t key = seriesKey(p.type, p.reason, p.note);
  if (auto it = sh.objects.find(p.uid); it != sh.objects.end()) {
    for (auto& s : it->second.series) {
      if (s.key == key && p.when - s.first < options_.seriesWindow) {
        ++s.count;
        s.last = p.when;
        s.dirty = true;
        return;
      }
    }
  }
  send(sh, p, key);
}

void ApiEventRecorder::send(Shard& sh, const Pending& p, uint64_t key) {
  std::string name = eventName(p.name, p.when);
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
    client_.create("/apis/events.k8s.io/v1/namespaces/" + p.ns + "/events", ev);
  } catch (const client::ApiError& e) {
    // AlreadyExists: the name is this event's own (eventName), so an earlier try whose answer
    // was lost created it: sent, and its repeats go to its series as usual.
    if (!e.isConflict()) {
      if (client_.aborted() || pastDeadline()) {
        drop(kDropShutdown);
      } else {
        drop(kDropSendFailed);
        spdlog::warn("event {} for {} {}/{} not recorded: {}", p.reason, p.kind, p.ns, p.name,
                     e.what());
      }
      return;
    }
  }
  sent_.fetch_add(1);
  Object& obj = sh.objects[p.uid];
  obj.ns = p.ns;
  obj.series.push_back(Series{key, std::move(name), 1, p.when, p.when, SteadyClock::now(), false});
  sh.tracked.fetch_add(1);
}

void ApiEventRecorder::patchSeries(const std::string& ns, Series& s) {
  nlohmann::json patch = {
      {"series", {{"count", s.count}, {"lastObservedTime", api::formatRFC3339Micro(s.last)}}}};
  try {
    client_.patch("/apis/events.k8s.io/v1/namespaces/" + ns + "/events/" + s.eventName, patch);
  } catch (const client::ApiError& e) {
    spdlog::debug("event series {} not updated: {}", s.eventName, e.what());
  }
  s.dirty = false;
  s.lastFlush = SteadyClock::now();
}

void ApiEventRecorder::maintain(Shard& sh, bool all) {
  const auto now = SteadyClock::now();
  const auto wallNow = std::chrono::system_clock::now();
  sh.lastMaintenance = now;
  size_t tracked = 0;
  for (auto it = sh.objects.begin(); it != sh.objects.end();) {
    auto& series = it->second.series;
    for (auto& s : series) {
      if (s.dirty && (all || now - s.lastFlush >= options_.seriesFlush)) {
        if (pastDeadline()) return;  // shutting down: the count no longer matters
        patchSeries(it->second.ns, s);
      }
    }
    std::erase_if(series, [&](const Series& s) {
      return !s.dirty && wallNow - s.first >= options_.seriesWindow;
    });
    tracked += series.size();
    it = series.empty() ? sh.objects.erase(it) : std::next(it);
  }
  sh.tracked.store(tracked);
}

}  // namespace ksched::scheduler
