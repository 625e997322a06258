#include "informer/reflector.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include "client/backoff.h"

namespace ksched::informer {

Reflector::Reflector(client::RestClient& client, ResourceDef def, ReflectorSink& sink,
                     Options options)
    : client_(client), def_(std::move(def)), sink_(sink), options_(options) {}

Reflector::~Reflector() { stop(); }

void Reflector::start() {
  if (thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token st) {
    std::string name = "refl-" + def_.kind;
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    run(std::move(st));
  });
}

void Reflector::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  cv_.notify_all();
  thread_.join();
}

std::string rbacRuleFor(const std::string& path) {
  std::string group;
  if (path.starts_with("/apis/")) group = path.substr(6, path.find('/', 6) - 6);
  const std::string resource = path.substr(path.rfind('/') + 1);
  return "get, list, watch on \"" + resource + "\" (apiGroups: [\"" + group + "\"])";
}

bool Reflector::waitForSync(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return cv_.wait_for(lock, timeout, [this] { return synced_.load() || !fatal_.empty(); }) &&
         synced_.load();
}

std::string Reflector::fatalError() const {
  std::lock_guard lock(mu_);
  return fatal_;
}

void Reflector::onForbidden(const client::ApiError& e) {
  const std::string what = def_.kind + " (" + def_.path + ")";
  const std::string grant =
      "grant the scheduler's identity " + rbacRuleFor(def_.path) + " (docs/operations.md#rbac)";
  if (def_.withoutIt.empty()) {
    {
      std::lock_guard lock(mu_);
      if (!fatal_.empty()) return;
      fatal_ =
          "cannot watch " + what + ", which the scheduler needs: " + e.message() + "; " + grant;
    }
    cv_.notify_all();
    return;
  }
  if (forbidden_.exchange(true)) return;
  spdlog::warn(
      "not watching {}: {}. Without it, {}. To turn it on, {}; ksched then picks it up "
      "without a restart.",
      what, e.message(), def_.withoutIt, grant);
  synced_.store(true);  // nothing to wait for: the store stays empty
  cv_.notify_all();
}

std::string Reflector::lastResourceVersion() const {
  std::lock_guard lock(mu_);
  return resourceVersion_;
}

Reflector::Stats Reflector::stats() const {
  std::lock_guard lock(mu_);
  return stats_;
}

void Reflector::sleepFor(std::chrono::milliseconds d, std::stop_token stop) {
  std::unique_lock lock(mu_);
  cv_.wait_for(lock, stop, d, [] { return false; });
}

bool Reflector::listOnce(std::stop_token stop) {
  try {
    client::ListOptions lo;
    lo.labelSelector = def_.labelSelector;
    lo.fieldSelector = def_.fieldSelector;
    lo.limit = options_.pageSize;
    size_t pages = 0;
    size_t textPages = 0;  // of those, taken from the text (ReflectorSink::listPageText)
    if (sink_.decodesText()) {
      lo.pageText = [&](std::string_view body, std::string& cont, std::string& rv) {
        std::optional<bool> taken = sink_.listPageText(body, cont, rv);
        if (taken && *taken) {
          ++pages;
          ++textPages;
        }
        return taken;
      };
    }
    sink_.beginList();
    const std::string rv = client_.listPaged(
        def_.path, lo,
        [&](std::vector<nlohmann::json>&& items) {
          if (!sink_.listPage(std::move(items))) return false;
          ++pages;
          return true;
        },
        [&] {
          pages = 0;
          textPages = 0;
          sink_.beginList();
        });
    if (stop.stop_requested()) return false;
    sink_.endList(rv);
    {
      std::lock_guard lock(mu_);
      resourceVersion_ = rv;
      ++stats_.lists;
      stats_.pagesFromText += textPages;
      synced_.store(true);
    }
    cv_.notify_all();
    if (forbidden_.exchange(false)) {
      spdlog::info("{} ({}): allowed now; watching it", def_.kind, def_.path);
    }
    spdlog::debug("reflector {}: listed {} pages at resourceVersion {}", def_.kind, pages, rv);
    return true;
  } catch (const client::ApiError& e) {
    if (client_.aborted()) return false;  // shutting down
    {
      std::lock_guard lock(mu_);
      ++stats_.errors;
    }
    if (e.isForbidden()) {
      onForbidden(e);
      return false;
    }
    spdlog::warn("reflector {}: list failed: {}", def_.kind, e.what());
  } catch (const std::exception& e) {
    std::lock_guard lock(mu_);
    ++stats_.errors;
    spdlog::warn("reflector {}: list failed: {}", def_.kind, e.what());
  }
  return false;
}

bool Reflector::watchOnce(std::stop_token stop) {
  client::WatchOptions wo;
  wo.resourceVersion = lastResourceVersion();
  wo.labelSelector = def_.labelSelector;
  wo.fieldSelector = def_.fieldSelector;
  wo.timeoutSeconds = options_.watchTimeoutSeconds;
  wo.allowWatchBookmarks = true;
  if (sink_.decodesText()) {
    wo.lineHandler = [this](std::string_view line) -> std::optional<bool> {
      std::string rv;
      const std::optional<bool> applied = sink_.applyLine(line, rv);
      if (applied && *applied) {
        std::lock_guard lock(mu_);
        if (!rv.empty()) resourceVersion_ = rv;
        ++stats_.events;
        ++stats_.eventsFromText;
      }
      return applied;
    };
  }
  {
    std::lock_guard lock(mu_);
    ++stats_.watches;
  }
  client_.watch(
      def_.path, wo,
      [this](client::WatchEvent&& ev) {
        // WatchBody hands on objects with a metadata object only.
        const auto& meta = ev.object["metadata"];
        auto it = meta.find("resourceVersion");
        std::string rv = it != meta.end() && it->is_string() ? it->get<std::string>() : "";
        if (ev.type != client::WatchEventType::kBookmark &&
            !sink_.apply(ev.type, std::move(ev.object))) {
          return false;  // read it again: watch again from the last event applied
        }
        std::lock_guard lock(mu_);
        if (!rv.empty()) resourceVersion_ = rv;
        ++stats_.events;
        return true;
      },
      stop);
  return false;
}

void Reflector::run(std::stop_token stop) {
  client::Backoff backoff(options_.backoffInitial, options_.backoffMax);
  bool needList = true;
  int watchFailures = 0;
  while (!stop.stop_requested()) {
    if (needList) {
      if (!listOnce(stop)) {
        sleepFor(backoff.next(), stop);
        continue;
      }
      needList = false;
      watchFailures = 0;
      backoff.reset();
    }
    const uint64_t eventsBefore = stats().events;
    try {
      needList = watchOnce(stop);
      watchFailures = 0;
      backoff.reset();
    } catch (const client::ApiError& e) {
      if (stop.stop_requested()) break;
      if (e.isGone()) {
        spdlog::info("reflector {}: watch from resourceVersion {} expired ({}); listing again",
                     def_.kind, lastResourceVersion(), e.message());
        std::lock_guard lock(mu_);
        ++stats_.relistsAfterGone;
        needList = true;
        continue;
      }
      if (client_.aborted()) {  // shutting down: the reflector is stopped next
        sleepFor(backoff.next(), stop);
        continue;
      }
      {
        std::lock_guard lock(mu_);
        ++stats_.errors;
      }
      spdlog::warn("reflector {}: watch failed: {}", def_.kind, e.what());
      // While the apiserver is unreachable, keep re-watching from the same resourceVersion:
      // once it is back, either the watch resumes or a 410 says to LIST. A watch the server
      // keeps refusing for another reason (e.g. 403 after an RBAC change) goes through a
      // fresh LIST, which also reports the error.
      if (!e.isTransport() && ++watchFailures >= 5) needList = true;
      // A watch that handed on events before it broke (a stream cut or corrupted on the way)
      // resumes at once from the last of them; one that broke without any backs off.
      if (e.isTransport() && stats().events > eventsBefore) {
        backoff.reset();
        continue;
      }
      sleepFor(backoff.next(), stop);
    } catch (const std::exception& e) {
      spdlog::error("reflector {}: unexpected error: {}", def_.kind, e.what());
      needList = true;
      sleepFor(backoff.next(), stop);
    }
  }
}

}  // namespace ksched::informer
