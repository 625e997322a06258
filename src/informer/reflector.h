// Reflector: the list+watch loop for one resource kind, independent of the object type.
//
//   LIST (paged) ──► sink.beginList/listPage/endList(rv) ──► WATCH from rv ──► sink.apply(event)
//        ▲                                           │
//        │ 410 Gone / expired resourceVersion        │ stream ended (timeoutSeconds): WATCH again
//        └───────────────────────────────────────────┤ error: back off, WATCH again from last rv
//                                                    │        (LIST again if that keeps failing)
//
// The reflector owns one named thread (std::jthread). stop() ends it promptly: an open WATCH
// is cut, a backoff sleep is interrupted. All sink calls come from that thread, in order.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/rest_client.h"

namespace ksched::informer {

// What to list and watch, e.g. {"Pod", "/api/v1/pods"} or {"Lease",
// "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"}.
struct ResourceDef {
  std::string kind;  // for logs and thread names
  std::string path;  // collection path
  std::string labelSelector;
  std::string fieldSelector;
  // Set for a kind the scheduler can do without: what does not work while it is not watched
  // (e.g. "namespaceSelector in pod affinity terms matches no namespace"). When the apiserver
  // forbids listing it (RBAC), the reflector says so once, with the rule to grant and this,
  // counts as synced with nothing in the store, and keeps trying in the background. Empty: the
  // kind is required, and a forbidden LIST fails waitForSync() at once (fatalError()).
  std::string withoutIt;
};

// The RBAC rule that lets a client list and watch `path`'s collection, e.g.
// `get, list, watch on "namespaces" (apiGroups: [""])`.
[[nodiscard]] std::string rbacRuleFor(const std::string& path);

class ReflectorSink {
 public:
  virtual ~ReflectorSink() = default;
  // A LIST as it is paged in: beginList(), listPage() per page (again from beginList() when
  // the LIST restarts), then endList() with the collection's resourceVersion: the full state,
  // which the sink diffs against what it holds. A sink that decodes each page at once holds
  // one page's JSON at a time.
  virtual void beginList() = 0;
  // False: read the same page again (an item the sink wants to see twice, as apply()).
  virtual bool listPage(std::vector<nlohmann::json>&& items) = 0;
  virtual void endList(const std::string& resourceVersion) = 0;
  // One watch event (never kError; bookmarks only move the resourceVersion and are not passed).
  // False: the sink wants the event read again before it believes it (an object it could not
  // decode: corrupted on the way, or malformed for good) — the watch ends before the event's
  // resourceVersion and starts again from the last event applied, which re-delivers it.
  virtual bool apply(client::WatchEventType type, nlohmann::json&& object) = 0;
  // For a sink that decodes its kind straight from the text (decodesText(): the informers of
  // pods and nodes):
  // each LIST page's body and each watch event's line, offered before they are parsed into a
  // JSON tree. nullopt leaves them to listPage() or apply(). Otherwise the page's items were
  // taken (the value as listPage()'s) with its continue token and resourceVersion set, or the
  // line was an ADDED, MODIFIED or DELETED event, applied (the value as apply()'s) at
  // `resourceVersion`.
  [[nodiscard]] virtual bool decodesText() const { return false; }
  virtual std::optional<bool> listPageText(std::string_view /*body*/,
                                           std::string& /*continueToken*/,
                                           std::string& /*resourceVersion*/) {
    return std::nullopt;
  }
  virtual std::optional<bool> applyLine(std::string_view /*line*/,
                                        std::string& /*resourceVersion*/) {
    return std::nullopt;
  }
};

class Reflector {
 public:
  struct Options {
    int64_t pageSize = 500;
    int watchTimeoutSeconds = 300;  // upstream picks 5-10 min at random
    std::chrono::milliseconds backoffInitial{800};
    std::chrono::milliseconds backoffMax{30000};
  };

  struct Stats {
    uint64_t lists = 0;
    uint64_t watches = 0;
    uint64_t relistsAfterGone = 0;
    uint64_t errors = 0;
    uint64_t events = 0;
    uint64_t eventsFromText = 0;  // of those, applied from the line (ReflectorSink::applyLine)
    uint64_t pagesFromText = 0;   // LIST pages taken from the text (ReflectorSink::listPageText)
  };

  Reflector(client::RestClient& client, ResourceDef def, ReflectorSink& sink, Options options);
  Reflector(client::RestClient& client, ResourceDef def, ReflectorSink& sink)
      : Reflector(client, std::move(def), sink, Options{}) {}
  ~Reflector();
  Reflector(const Reflector&) = delete;
  Reflector& operator=(const Reflector&) = delete;

  void start();  // starts the thread; once
  void stop();   // requests stop and joins; idempotent

  [[nodiscard]] bool hasSynced() const { return synced_.load(); }
  // Blocks until the first LIST has been applied, or timeout, or a required kind is forbidden.
  // True when synced.
  bool waitForSync(std::chrono::milliseconds timeout);
  // Why a required kind cannot be watched (the apiserver forbids listing it), with the RBAC
  // rule to grant; "" otherwise.
  [[nodiscard]] std::string fatalError() const;
  // An optional kind the apiserver forbids: not watched for now (the store is empty).
  [[nodiscard]] bool forbidden() const { return forbidden_.load(); }
  [[nodiscard]] std::string lastResourceVersion() const;
  [[nodiscard]] Stats stats() const;
  [[nodiscard]] const ResourceDef& def() const { return def_; }

 private:
  void run(std::stop_token stop);
  bool listOnce(std::stop_token stop);
  // Returns true when the caller must LIST again (410), false to just WATCH again.
  bool watchOnce(std::stop_token stop);
  void sleepFor(std::chrono::milliseconds d, std::stop_token stop);

  // Constant after construction.
  client::RestClient& client_;
  const ResourceDef def_;
  ReflectorSink& sink_;
  const Options options_;

  // A LIST the apiserver answered 403: says so (once) and decides what it means for the kind.
  void onForbidden(const client::ApiError& e);

  std::atomic<bool> synced_{false};
  std::atomic<bool> forbidden_{false};
  mutable std::mutex mu_;
  std::condition_variable_any cv_;
  std::string resourceVersion_;  // guarded by mu_
  Stats stats_;                  // guarded by mu_
  std::string fatal_;            // guarded by mu_
  std::jthread thread_;
};

}  // namespace ksched::informer
