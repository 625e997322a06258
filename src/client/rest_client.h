// A kube-apiserver client: HTTPS (OpenSSL) with hostname/IP verification, bearer token or
// client certificate, a client-side QPS/burst limiter, retries with backoff and jitter,
// paged LIST, streaming WATCH and the writes a scheduler makes.
//
// Thread-safety: every method may be called from any thread. Each calling thread borrows
// its own keep-alive connection from a pool (one connection per concurrent caller) and gives
// it back afterwards; a WATCH holds its connection for the life of the stream.
//
// Errors: methods throw ApiError (client/errors.h). Retries happen inside for answers that
// are worth retrying (no answer, 429 honouring Retry-After, 5xx), up to Options::maxRetries;
// other 4xx are never retried. A POST whose connection broke may have been applied: callers
// of non-idempotent writes must treat 409 AlreadyExists / Conflict on a retry accordingly.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "client/config.h"
#include "client/errors.h"
#include "client/rate_limiter.h"
#include "client/watch_body.h"

namespace ksched::client {

class TlsContext;

// Offered each LIST page's body before it is parsed into a JSON tree, by a caller that can
// decode its kind straight from the text (api/fast_decode.h): nullopt leaves the page to
// the usual parse and the PageHandler; otherwise the handler took the page's items (the value
// as a PageHandler's) and set the page's continue token and resourceVersion.
using PageTextHandler = std::function<std::optional<bool>(
    std::string_view body, std::string& continueToken, std::string& resourceVersion)>;

struct ListOptions {
  std::string labelSelector;
  std::string fieldSelector;
  int64_t limit = 500;          // page size; 0 = everything in one answer
  std::string resourceVersion;  // "" = most recent (quorum read)
  PageTextHandler pageText;     // listPaged only
};

struct ListResult {
  std::vector<nlohmann::json> items;
  std::string resourceVersion;  // the collection's resourceVersion: where a WATCH starts
};

struct WatchOptions {
  std::string resourceVersion;
  std::string labelSelector;
  std::string fieldSelector;
  int timeoutSeconds = 300;  // the server closes the stream after this; reflectors re-watch
  bool allowWatchBookmarks = true;
  // Offered each line first (WatchBody): lines it takes never reach the WatchHandler.
  WatchLineHandler lineHandler;
};

// The JSON of a 2xx answer's body, as get(), post(), put() and patch() return it. Not JSON
// (a proxy's or another server's page): ApiError code 0 "the answer is not JSON: <why>", as for
// an answer that could not be read.
[[nodiscard]] nlohmann::json parseAnswerJson(std::string_view body, const std::string& verb,
                                             const std::string& path);

// Whether a LIST answer is one as the apiserver writes it: an object whose items (if any) are
// an array and whose metadata (if any) has string resourceVersion and continue. Anything else
// was cut or corrupted on the way, and the page is asked for again.
[[nodiscard]] bool isListPage(const nlohmann::json& page);

class RestClient {
 public:
  struct Options {
    int maxRetries = 5;  // attempts after the first for retryable failures
    std::chrono::milliseconds retryInitial{200};
    std::chrono::milliseconds retryMax{5000};
    std::chrono::seconds connectTimeout{5};
    std::chrono::seconds requestTimeout{30};
  };

  // `limiter` may be shared between clients; null makes one from config.qps/burst.
  explicit RestClient(Config config, Options options,
                      std::shared_ptr<RateLimiter> limiter = nullptr);
  explicit RestClient(Config config) : RestClient(std::move(config), Options{}) {}
  ~RestClient();
  RestClient(const RestClient&) = delete;
  RestClient& operator=(const RestClient&) = delete;

  // A 2xx answer that is not JSON (cut short or corrupted on the way) is asked for again.
  nlohmann::json get(const std::string& path);
  // Follows `continue` until the collection is complete. On 410 in the middle of paging
  // (continue token expired) it restarts the LIST once from scratch. A page whose answer is not
  // JSON (cut short, corrupted on the way) is asked for again, as a transport failure is.
  ListResult list(const std::string& path, const ListOptions& options = {});
  // The same, handing each page's items to `onPage` as it arrives, so that only one page is
  // held as JSON at a time; `onRestart` is called before a restart from scratch (the pages
  // given so far are void). `onPage` returns false to have the same page read again (an item
  // it wants to see twice before it believes it; the page's items may come again). Returns
  // the collection's resourceVersion.
  using PageHandler = std::function<bool(std::vector<nlohmann::json>&& items)>;
  std::string listPaged(const std::string& path, const ListOptions& options,
                        const PageHandler& onPage, const std::function<void()>& onRestart);
  // Streams events to `handler` until the server ends the stream (returns normally), the
  // handler returns false, or `stop` is requested. An ERROR event or a non-200 answer throws
  // ApiError (isGone() for an expired resourceVersion); a line that is not a watch event ends
  // the stream with a transport ApiError (WatchBody): the events after it were not handed on,
  // so watching again from the last event handed on loses none. Not retried: reflectors decide.
  void watch(const std::string& path, const WatchOptions& options, const WatchHandler& handler,
             std::stop_token stop = {});
  nlohmann::json post(const std::string& path, const nlohmann::json& body);
  // POST whose answer (the created object) is not wanted: it is not parsed. Bindings, Events.
  void create(const std::string& path, const nlohmann::json& body);
  nlohmann::json put(const std::string& path, const nlohmann::json& body);
  // contentType: application/merge-patch+json, application/strategic-merge-patch+json,
  // application/json-patch+json.
  nlohmann::json patch(const std::string& path, const nlohmann::json& body,
                       const std::string& contentType = "application/merge-patch+json");
  // DELETE with optional DeleteOptions body (preconditions.uid, gracePeriodSeconds).
  nlohmann::json del(const std::string& path, const nlohmann::json& deleteOptions = nullptr);

  // Discovery: the group versions the server offers for `group` ("" = core), preferred first.
  std::vector<std::string> servedVersions(const std::string& group);
  // The first of `candidates` (e.g. {"policy/v1", "policy/v1beta1"}) the server serves, if any.
  std::optional<std::string> pickVersion(const std::vector<std::string>& candidates);
  // The first of `candidates` whose resource list has `resource` (e.g. "csistoragecapacities"
  // in {"storage.k8s.io/v1", "storage.k8s.io/v1beta1"}): a group version can be served before
  // one of its kinds is.
  std::optional<std::string> pickVersionServing(const std::vector<std::string>& candidates,
                                                const std::string& resource);

  // Ends this client's work for good (shutdown): requests in flight are cut off, retry and
  // rate-limiter waits return at once, and every call from now on throws ApiError code 0
  // "client stopped". Watches end as if their stop token were requested. Idempotent.
  void abort();
  [[nodiscard]] bool aborted() const { return abort_.stop_requested(); }

  [[nodiscard]] const Config& config() const { return config_; }
  [[nodiscard]] RateLimiter& limiter() { return *limiter_; }
  // Requests sent on the wire (retries included).
  [[nodiscard]] uint64_t requestsSent() const { return requestsSent_.load(); }

 private:
  struct Connection;
  struct Answer {
    int status = 0;
    std::string body;
    std::string retryAfter;
  };

  // An idle connection, or a new one; nullptr with `error` set when connecting failed.
  std::unique_ptr<Connection> borrow(std::string& error);
  void giveBack(std::unique_ptr<Connection> conn);
  std::string bearer() const;
  // The whole request in one buffer (one write on the wire): request line, headers, body.
  std::string requestText(const std::string& method, const std::string& target,
                          const std::string* body, const std::string& contentType) const;

  // One attempt: waits for the limiter, sends, returns the answer (status 0 = transport).
  Answer send(Connection& conn, const std::string& method, const std::string& target,
              const std::string* body, const std::string& contentType, std::string& transportError);
  // Retries retryable failures; returns the body of a 2xx answer or throws ApiError.
  std::string call(const std::string& method, const std::string& path, const std::string& query,
                   const std::string* body, const std::string& contentType);
  // One page of a LIST: call() and a parse, retried as a transport failure when the answer is
  // not a list (cut short or corrupted on the way).
  // One LIST page as a tree, or (nullopt) taken by `pageText` with `cont` and `rv` set, as
  // `taken` says.
  nlohmann::json listPage(const std::string& path, const std::string& query,
                          const PageTextHandler& pageText, std::optional<bool>& taken,
                          std::string& cont, std::string& rv);
  // read() (a GET and its parse) again, with backoff, until good() takes what it returns, up
  // to Options::maxRetries times; then fail() (which throws). Reads only: a write whose answer
  // does not decode may have been applied and is not sent again.
  template <typename Read, typename Good, typename Fail>
  nlohmann::json readAgainUntil(const Read& read, const Good& good, const Fail& fail);

  // Constant after construction.
  const Config config_;
  const Options options_;
  std::shared_ptr<RateLimiter> limiter_;
  std::shared_ptr<TokenSource> tokens_;
  std::string host_;
  std::string hostHeader_;  // host[:port] as the Host header names it
  std::string pathPrefix_;  // from a server URL with a path (apiserver behind a proxy)
  int port_ = 443;
  bool https_ = true;
  std::unique_ptr<TlsContext> tls_;  // every connection's, watches' too; null for http://

  std::atomic<uint64_t> requestsSent_{0};
  std::stop_source abort_;

  std::mutex mu_;
  std::vector<std::unique_ptr<Connection>> idle_;  // guarded by mu_
};

// Aborts `clients` at `deadline` (after calling `onFire`) unless destroyed first: the bound on
// shutdown work that talks to the apiserver. Runs one named thread ("abort-timer").
class AbortAt {
 public:
  AbortAt(std::chrono::steady_clock::time_point deadline, std::vector<RestClient*> clients,
          std::function<void()> onFire = {});

 private:
  std::jthread thread_;
};

// Builds "?a=b&c=d" with URL-encoding; empty values are skipped.
std::string buildQuery(const std::vector<std::pair<std::string, std::string>>& params);

}  // namespace ksched::client
