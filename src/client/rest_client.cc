#include "client/rest_client.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <csignal>
#include <thread>

#include "client/backoff.h"
#include "client/http_connection.h"
#include "client/object_json.h"
#include "client/url.h"

namespace ksched::client {
namespace {

std::string urlEncode(const std::string& s) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

// The headers every request carries (Content-Type only with a body).
template <typename F>
void forEachHeader(const Config& config, const std::string& token, const std::string& contentType,
                   F&& header) {
  header("Accept", "application/json");
  header("User-Agent", config.userAgent);
  if (!token.empty()) header("Authorization", "Bearer " + token);
  if (!contentType.empty()) header("Content-Type", contentType);
}

}  // namespace

nlohmann::json parseAnswerJson(std::string_view body, const std::string& verb,
                               const std::string& path) {
  try {
    return nlohmann::json::parse(body);
  } catch (const nlohmann::json::exception& e) {
    throw ApiError(0, "", std::string("the answer is not JSON: ") + e.what(), verb, path);
  }
}

std::string buildQuery(const std::vector<std::pair<std::string, std::string>>& params) {
  std::string q;
  for (const auto& [k, v] : params) {
    if (v.empty()) continue;
    q += q.empty() ? '?' : '&';
    q += urlEncode(k);
    q += '=';
    q += urlEncode(v);
  }
  return q;
}

struct RestClient::Connection {
  std::unique_ptr<HttpConnection> http;
};

namespace {

// An idle connection unused for longer than this is checked (one poll) before it is reused:
// the server may have closed it meanwhile. Connections in steady use are not.
constexpr std::chrono::seconds kIdleCheck{1};

}  // namespace

RestClient::RestClient(Config config, Options options, std::shared_ptr<RateLimiter> limiter)
    : config_(std::move(config)),
      options_(options),
      limiter_(limiter ? std::move(limiter)
                       : std::make_shared<RateLimiter>(config_.qps, config_.burst)),
      tokens_(std::make_shared<TokenSource>(config_)) {
  std::string error;
  const auto url = parseHttpUrl(config_.server, error);
  if (!url) {
    if (error.starts_with("unsupported protocol scheme"))
      error = "want https://host[:port] or http://";
    throw ConfigError("server \"" + config_.server + "\": " + error);
  }
  https_ = url->https;
  host_ = url->host;
  port_ = url->port;
  pathPrefix_ = url->path;
  hostHeader_ = host_.find(':') != std::string::npos ? "[" + host_ + "]" : host_;
  if (port_ != (https_ ? 443 : 80)) hostHeader_ += ":" + std::to_string(port_);
  if (https_) {
    tls_ = std::make_unique<TlsContext>(config_.caPem, config_.clientCertPem, config_.clientKeyPem,
                                        config_.insecureSkipTLSVerify);
  }
  // A peer that closes first must not kill the process: writes to a closed TLS socket raise
  // SIGPIPE, whose default action is to terminate.
  static std::once_flag ignoreSigpipe;
  std::call_once(ignoreSigpipe, [] { std::signal(SIGPIPE, SIG_IGN); });
}

RestClient::~RestClient() = default;

std::unique_ptr<RestClient::Connection> RestClient::borrow(std::string& error) {
  std::vector<std::unique_ptr<Connection>> stale;  // closed outside the lock
  {
    std::lock_guard lock(mu_);
    while (!idle_.empty()) {
      auto c = std::move(idle_.back());
      idle_.pop_back();
      if (c->http->reusable(kIdleCheck)) return c;
      stale.push_back(std::move(c));
    }
  }
  auto conn = std::make_unique<Connection>();
  conn->http = HttpConnection::open({host_, port_, tls_.get()}, options_.connectTimeout,
                                    options_.requestTimeout, error);
  if (!conn->http) return nullptr;
  return conn;
}

void RestClient::giveBack(std::unique_ptr<Connection> conn) {
  if (!conn->http->reusable(kIdleCheck)) return;
  std::lock_guard lock(mu_);
  idle_.push_back(std::move(conn));
}

std::string RestClient::bearer() const { return tokens_->token(); }

std::string RestClient::requestText(const std::string& method, const std::string& target,
                                    const std::string* body, const std::string& contentType) const {
  const std::string token = bearer();
  std::string req;
  req.reserve(200 + target.size() + token.size() + (body != nullptr ? body->size() : 0));
  req.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: ").append(hostHeader_);
  req.append("\r\n");
  forEachHeader(config_, token, body != nullptr ? contentType : std::string(),
                [&req](std::string_view name, std::string_view value) {
                  req.append(name).append(": ").append(value).append("\r\n");
                });
  if (body != nullptr) {
    req.append("Content-Length: ").append(std::to_string(body->size())).append("\r\n\r\n");
    req.append(*body);
  } else {
    req.append("\r\n");
  }
  return req;
}

RestClient::Answer RestClient::send(Connection& conn, const std::string& method,
                                    const std::string& target, const std::string* body,
                                    const std::string& contentType, std::string& transportError) {
  requestsSent_.fetch_add(1, std::memory_order_relaxed);
  const std::string req = requestText(method, target, body, contentType);
  HttpAnswer answer;
  bool answerStarted = false;
  Answer a;
  if (!conn.http->roundTrip(req, method == "HEAD", answer, transportError, answerStarted)) {
    return a;
  }
  a.status = answer.status;
  a.body = std::move(answer.body);
  a.retryAfter = std::move(answer.retryAfter);
  return a;
}

bool isListPage(const nlohmann::json& page) {
  if (!page.is_object()) return false;
  if (auto it = page.find("items"); it != page.end() && !it->is_array() && !it->is_null()) {
    return false;
  }
  auto meta = page.find("metadata");
  if (meta == page.end()) return true;
  if (!meta->is_object()) return false;
  for (const char* key : {"resourceVersion", "continue"}) {
    if (auto it = meta->find(key); it != meta->end() && !it->is_string()) return false;
  }
  return true;
}

namespace {

ApiError abortedError(const std::string& method, const std::string& path) {
  return {0, "", "client stopped (shutting down)", method, path};
}

}  // namespace

void RestClient::abort() { abort_.request_stop(); }

AbortAt::AbortAt(std::chrono::steady_clock::time_point deadline, std::vector<RestClient*> clients,
                 std::function<void()> onFire) {
  thread_ = std::jthread([deadline, clients = std::move(clients),
                          onFire = std::move(onFire)](const std::stop_token& st) {
    pthread_setname_np(pthread_self(), "abort-timer");
    if (!sleepFor(deadline - std::chrono::steady_clock::now(), st)) return;
    if (onFire) onFire();
    for (auto* c : clients) c->abort();
  });
}

std::string RestClient::call(const std::string& method, const std::string& path,
                             const std::string& query, const std::string* body,
                             const std::string& contentType) {
  const std::string target = pathPrefix_ + path + query;
  const std::stop_token aborted = abort_.get_token();
  Backoff backoff(options_.retryInitial, options_.retryMax);
  bool reauthed = false;
  for (int attempt = 0;; ++attempt) {
    if (aborted.stop_requested() || !limiter_->acquire(aborted)) throw abortedError(method, path);
    std::string transportError;
    Answer a;
    auto conn = borrow(transportError);
    if (conn) {
      // abort() cuts the request off (a hung apiserver must not hold a shutdown).
      std::stop_callback cutOff(aborted, [&conn] { conn->http->shutdown(); });
      if (!aborted.stop_requested())
        a = send(*conn, method, target, body, contentType, transportError);
    } else {
      requestsSent_.fetch_add(1, std::memory_order_relaxed);
    }
    if (a.status == 0) {
      if (aborted.stop_requested()) throw abortedError(method, path);
      // A broken connection is not reused, nor are the idle ones: after an apiserver restart
      // they are all dead, and retrying through each of them would use up the retries.
      conn.reset();
      std::vector<std::unique_ptr<Connection>> stale;
      {
        std::lock_guard lock(mu_);
        stale.swap(idle_);
      }
    } else {
      giveBack(std::move(conn));
    }
    if (a.status >= 200 && a.status < 300) return std::move(a.body);
    ApiError err = a.status == 0 ? ApiError(0, "", transportError, method, path)
                                 : ApiError::fromResponse(a.status, a.body, method, path);
    if (err.isUnauthorized() && !config_.tokenFile.empty() && !reauthed) {
      tokens_->invalidate();  // the token may have rotated
      reauthed = true;
      continue;
    }
    if (!err.isRetryable() || attempt >= options_.maxRetries) throw err;
    auto wait = backoff.next();
    if (auto ra = parseRetryAfter(a.retryAfter)) {
      wait = std::max<std::chrono::milliseconds>(wait, *ra);
    }
    spdlog::debug("{} {}: {} (retry {} in {} ms)", method, path, err.what(), attempt + 1,
                  wait.count());
    if (!sleepFor(wait, aborted)) throw abortedError(method, path);
  }
}

template <typename Read, typename Good, typename Fail>
nlohmann::json RestClient::readAgainUntil(const Read& read, const Good& good, const Fail& fail) {
  Backoff backoff(options_.retryInitial, options_.retryMax);
  for (int attempt = 0;; ++attempt) {
    nlohmann::json j = read();
    if (good(j)) return j;
    if (attempt >= options_.maxRetries) return fail();
    spdlog::debug("an answer that does not decode (retry {})", attempt + 1);
    if (!sleepFor(backoff.next(), abort_.get_token())) throw abortedError("GET", "");
  }
}

nlohmann::json RestClient::get(const std::string& path) {
  std::string body;
  return readAgainUntil(
      [&] {
        body = call("GET", path, "", nullptr, "");
        return nlohmann::json::parse(body, nullptr, false);
      },
      [](const nlohmann::json& j) { return !j.is_discarded(); },
      [&] { return parseAnswerJson(body, "GET", path); });
}

ListResult RestClient::list(const std::string& path, const ListOptions& options) {
  ListResult out;
  out.resourceVersion = listPaged(
      path, options,
      [&](std::vector<nlohmann::json>&& items) {
        if (out.items.empty()) {
          out.items = std::move(items);
        } else {
          for (auto& item : items) out.items.push_back(std::move(item));
        }
        return true;
      },
      [&] { out.items.clear(); });
  return out;
}

nlohmann::json RestClient::listPage(const std::string& path, const std::string& query,
                                    const PageTextHandler& pageText, std::optional<bool>& taken,
                                    std::string& cont, std::string& rv) {
  return readAgainUntil(
      [&] {
        const std::string body = call("GET", path, query, nullptr, "");
        taken = pageText ? pageText(body, cont, rv) : std::nullopt;
        return taken ? nlohmann::json::object() : parseObjectJson(body);
      },
      isListPage,
      [&]() -> nlohmann::json { throw ApiError(0, "", "the answer is not a list", "LIST", path); });
}

std::string RestClient::listPaged(const std::string& path, const ListOptions& options,
                                  const PageHandler& onPage,
                                  const std::function<void()>& onRestart) {
  std::string cont;
  bool restarted = false;
  int rereads = 0;
  while (true) {
    std::string query =
        buildQuery({{"labelSelector", options.labelSelector},
                    {"fieldSelector", options.fieldSelector},
                    {"limit", options.limit > 0 ? std::to_string(options.limit) : ""},
                    {"continue", cont},
                    {"resourceVersion", cont.empty() ? options.resourceVersion : ""}});
    nlohmann::json page;
    std::optional<bool> taken;  // the page went to options.pageText
    std::string textCont;
    std::string resourceVersion;
    try {
      page = listPage(path, query, options.pageText, taken, textCont, resourceVersion);
    } catch (const ApiError& e) {
      if (e.isGone() && !cont.empty() && !restarted) {  // continue token expired: start over
        restarted = true;
        cont.clear();
        if (onRestart) onRestart();
        continue;
      }
      throw;
    }
    bool accepted = false;
    std::string next;  // the next page's continue token
    if (taken) {
      next = std::move(textCont);
      accepted = *taken;
    } else {
      std::vector<nlohmann::json> items;
      if (auto it = page.find("items"); it != page.end() && it->is_array()) {
        items = std::move(it->get_ref<nlohmann::json::array_t&>());
      }
      const auto& meta = page.contains("metadata") ? page["metadata"] : nlohmann::json::object();
      resourceVersion = meta.value("resourceVersion", "");
      next = meta.value("continue", "");
      page = nullptr;  // only this page's items are left
      accepted = onPage(std::move(items));
    }
    if (!accepted) {
      if (++rereads > options_.maxRetries) {
        throw ApiError(0, "", "a page's items kept failing to decode", "LIST", path);
      }
      continue;  // the same page again: `cont` and the query are unchanged
    }
    rereads = 0;
    cont = std::move(next);
    if (cont.empty()) return resourceVersion;
  }
}

void RestClient::watch(const std::string& path, const WatchOptions& options,
                       const WatchHandler& handler, std::stop_token stop) {
  const std::string query =
      buildQuery({{"watch", "1"},
                  {"resourceVersion", options.resourceVersion},
                  {"labelSelector", options.labelSelector},
                  {"fieldSelector", options.fieldSelector},
                  {"allowWatchBookmarks", options.allowWatchBookmarks ? "true" : ""},
                  {"timeoutSeconds", std::to_string(options.timeoutSeconds)}});
  if (stop.stop_requested()) return;
  if (aborted()) throw abortedError("WATCH", path);
  (void)limiter_->acquire(stop);
  if (stop.stop_requested()) return;
  requestsSent_.fetch_add(1, std::memory_order_relaxed);
  // A watch holds a connection of its own for its whole life, opened (TLS handshake included)
  // within the requests' timeouts. The apiserver ends the answer after timeoutSeconds, so a
  // read that waits longer than that means a dead peer.
  std::string error;
  std::unique_ptr<HttpConnection> conn = HttpConnection::open(
      {host_, port_, tls_.get()}, options_.connectTimeout, options_.requestTimeout, error);
  if (!conn) throw ApiError(0, "", error, "WATCH", path);
  conn->setReadTimeout(std::chrono::seconds(options.timeoutSeconds + 30));
  std::stop_callback onStop(stop, [&conn] { conn->shutdown(); });
  std::stop_callback onAbort(abort_.get_token(), [&conn] { conn->shutdown(); });

  WatchBody body(path, handler, &options.lineHandler);
  auto sink = [&](std::string_view data) -> bool {
    return !stop.stop_requested() && body.feed(data) && !stop.stop_requested();
  };
  const std::string req = requestText("GET", pathPrefix_ + path + query, nullptr, "");
  HttpAnswer answer;
  const bool ok = !stop.stop_requested() && conn->stream(req, sink, answer, error);
  if (body.error()) throw *body.error();
  if (body.handlerStopped() || stop.stop_requested()) return;
  if (aborted()) throw abortedError("WATCH", path);
  if (!ok) {
    throw ApiError(0, "", answer.status == 200 ? "watch stream broke: " + error : error, "WATCH",
                   path);
  }
  if (answer.status != 200) throw ApiError::fromResponse(answer.status, answer.body, "WATCH", path);
  if (!body.finish() && body.error()) throw *body.error();
}

nlohmann::json RestClient::post(const std::string& path, const nlohmann::json& body) {
  std::string b = body.dump();
  return parseAnswerJson(call("POST", path, "", &b, "application/json"), "POST", path);
}

void RestClient::create(const std::string& path, const nlohmann::json& body) {
  std::string b = body.dump();
  (void)call("POST", path, "", &b, "application/json");
}

nlohmann::json RestClient::put(const std::string& path, const nlohmann::json& body) {
  std::string b = body.dump();
  return parseAnswerJson(call("PUT", path, "", &b, "application/json"), "PUT", path);
}

nlohmann::json RestClient::patch(const std::string& path, const nlohmann::json& body,
                                 const std::string& contentType) {
  std::string b = body.dump();
  return parseAnswerJson(call("PATCH", path, "", &b, contentType), "PATCH", path);
}

nlohmann::json RestClient::del(const std::string& path, const nlohmann::json& deleteOptions) {
  std::string out;
  if (deleteOptions.is_null()) {
    out = call("DELETE", path, "", nullptr, "");
  } else {
    std::string b = deleteOptions.dump();
    out = call("DELETE", path, "", &b, "application/json");
  }
  return nlohmann::json::parse(out, nullptr, false);
}

std::vector<std::string> RestClient::servedVersions(const std::string& group) {
  std::vector<std::string> out;
  if (group.empty()) {
    auto j = get("/api");
    for (const auto& v : j.value("versions", nlohmann::json::array())) {
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  auto j = get("/apis");
  for (const auto& g : j.value("groups", nlohmann::json::array())) {
    if (g.value("name", "") != group) continue;
    std::string preferred =
        g.value("preferredVersion", nlohmann::json::object()).value("groupVersion", "");
    if (!preferred.empty()) out.push_back(preferred);
    for (const auto& v : g.value("versions", nlohmann::json::array())) {
      std::string gv = v.value("groupVersion", "");
      if (!gv.empty() && gv != preferred) out.push_back(gv);
    }
  }
  return out;
}

std::optional<std::string> RestClient::pickVersion(const std::vector<std::string>& candidates) {
  std::map<std::string, std::vector<std::string>> byGroup;
  for (const auto& c : candidates) {
    auto slash = c.find('/');
    std::string group = slash == std::string::npos ? "" : c.substr(0, slash);
    if (!byGroup.contains(group)) byGroup[group] = servedVersions(group);
  }
  for (const auto& c : candidates) {
    auto slash = c.find('/');
    std::string group = slash == std::string::npos ? "" : c.substr(0, slash);
    const auto& served = byGroup[group];
    if (std::find(served.begin(), served.end(), c) != served.end()) return c;
  }
  return std::nullopt;
}

std::optional<std::string> RestClient::pickVersionServing(
    const std::vector<std::string>& candidates, const std::string& resource) {
  for (const auto& c : candidates) {
    if (pickVersion({c}) != c) continue;
    const auto j = get((c.find('/') == std::string::npos ? "/api/" : "/apis/") + c);
    for (const auto& r : j.value("resources", nlohmann::json::array())) {
      if (r.is_object() && r.value("name", "") == resource) return c;
    }
  }
  return std::nullopt;
}

}  // namespace ksched::client
