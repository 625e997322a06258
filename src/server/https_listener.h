// The secure port's connections: one event-driven thread owns every socket (accept, TLS
// handshake, reading requests, writing answers, all non-blocking), and a small pool of workers
// runs the handler on complete requests only. An idle, slow or garbage connection costs a
// socket and a few kilobytes, never a thread, so it cannot delay anyone else's /healthz.
//
// Bounds (Go's net/http as kube-scheduler's secure serving sets it up is the reference):
//   - TLS handshake and each request's header within `headerTimeout` (32 s, upstream's
//     ReadHeaderTimeout, which Go also applies to the handshake);
//   - a kept-alive connection idle for `idleTimeout` (90 s, upstream's IdleTimeout) is closed;
//   - an answer must drain within `writeTimeout`;
//   - at most `maxConnections` open: past that, the connection that has waited longest
//     without a request in progress (handshaking or idle) is closed for the new one;
//   - requests wait for a worker in a queue of `maxQueued`; beyond that they are answered 503;
//     requests `urgent` picks (health checks that need no call to the apiserver) have a queue
//     and a worker of their own, so requests waiting on TokenReviews never hold them up;
//   - request sizes as in http_request.h.
//
// Threads: "https-server" (the loop), `workers` × "https-worker" and, with `urgent`, one
// "https-urgent", all owned and joined by
// stop(). The handler runs on a worker and may block (TokenReviews); it must be thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>

#include "server/http_request.h"

namespace ksched::server {

struct ListenerLimits {
  std::chrono::milliseconds headerTimeout{32'000};
  std::chrono::milliseconds idleTimeout{90'000};
  std::chrono::milliseconds writeTimeout{60'000};
  size_t maxConnections = 2048;
  size_t maxQueued = 256;
  int workers = 4;
  std::function<bool(const httplib::Request&)> urgent;
};

class HttpsListener {
 public:
  // `request` carries the peer's TLS connection in `ssl` (client certificates); `response`
  // starts as 200 with no body.
  using Handler = std::function<void(const httplib::Request& request, httplib::Response& response)>;

  // Listens on address:port (port 0: an ephemeral one) and starts the threads. Takes a
  // reference to `ctx`. Throws std::runtime_error when the address cannot be bound.
  static std::unique_ptr<HttpsListener> start(SSL_CTX* ctx, const std::string& address, int port,
                                              Handler handler, ListenerLimits limits = {});
  ~HttpsListener();
  HttpsListener(const HttpsListener&) = delete;
  HttpsListener& operator=(const HttpsListener&) = delete;

  // Stops accepting, lets the workers finish the requests they hold, closes every connection
  // and joins the threads. Idempotent.
  void stop();

  [[nodiscard]] int port() const;

  struct Stats {
    size_t open = 0;        // connections open now
    uint64_t accepted = 0;  // since start
    uint64_t evicted = 0;   // closed to make room under maxConnections
    uint64_t timedOut = 0;  // closed by a handshake, header, idle or write timeout
    uint64_t requests = 0;  // complete requests handed to the handler
    uint64_t rejected = 0;  // answered 503 because the queue was full
  };
  [[nodiscard]] Stats stats() const;

 private:
  struct Impl;
  explicit HttpsListener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ksched::server
