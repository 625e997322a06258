// The HTTPS endpoint of the daemon, as kube-scheduler's secure serving: /metrics (Prometheus
// text exposition), /healthz and /livez (liveness, with the leader election watchdog when
// given), /readyz (503 until the informers synced) and /configz (the effective configuration).
//
// Serving certificate: --tls-cert-file/--tls-private-key-file when given; otherwise
// <cert-dir>/kube-scheduler.{crt,key}, generated self-signed when absent; otherwise (no
// --cert-dir) a self-signed pair kept in memory. Self-signed certificates name "localhost" and
// 127.0.0.1, like upstream's.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include "config/command_line.h"
#include "metrics/metrics.h"
#include "server/access.h"
#include "server/https_listener.h"

namespace ksched::server {

class ServerError : public std::runtime_error {
 public:
  explicit ServerError(const std::string& what) : std::runtime_error(what) {}
};

struct Hooks {
  // /metrics: the text exposition (SchedulerMetrics::scrape, say); without it /metrics
  // answers 404.
  std::function<std::string()> metrics;
  // /readyz: true once the informers synced. Without it /readyz is always ready.
  std::function<bool()> ready;
  // /healthz and /livez: "" while healthy, else why not (the leader election watchdog).
  std::function<std::string()> livezLeaderCheck;
  // /configz: the JSON body. Without it /configz answers 404.
  std::function<std::string()> configz;
  // /debug/explain?namespace=N&name=P[&node=X]: the answer's status and JSON body. Without it
  // /debug/explain answers 404.
  std::function<std::pair<int, std::string>(const std::string& ns, const std::string& name,
                                            const std::string& node)>
      explain;
  // Who may call which path. Required.
  std::shared_ptr<AccessControl> access;
};

// "" when --tls-min-version and --tls-cipher-suites can be applied, else what is wrong
// ("--tls-cipher-suites: \"X\" is not a supported cipher suite").
[[nodiscard]] std::string checkTlsOptions(const config::ServingOptions& options);

// A PEM certificate and private key.
struct CertKeyPair {
  std::string certPem;
  std::string keyPem;
};

// A self-signed certificate (EC P-256, one year) for `host` with IP SAN 127.0.0.1.
[[nodiscard]] CertKeyPair generateSelfSignedCert(const std::string& host);

// The pair serving uses for `options` (see above). Throws ServerError on unreadable files or
// when only one of --tls-cert-file/--tls-private-key-file is given.
[[nodiscard]] CertKeyPair resolveServingCert(const config::ServingOptions& options);

// The body and status of a health endpoint: "ok" when every check passed, else upstream's
// "[+]ping ok\n[-]leaderElection failed: reason withheld\n<name> check failed".
struct HealthResult {
  int status = 200;
  std::string body;
};
[[nodiscard]] HealthResult healthCheck(std::string_view endpoint, const std::string& leaderError);

// Connections are served by an HttpsListener (event-driven: idle and slow callers cost no
// thread); each complete request is authenticated and authorized by `hooks.access`, then
// answered from the hooks. Paths other than the ones above are 404, methods other than GET and
// HEAD on them 405.
class Server {
 public:
  // Binds and starts serving. nullptr when securePort is 0 (serving disabled). Throws
  // ServerError when the certificate or the bind fails.
  static std::unique_ptr<Server> start(const config::ServingOptions& options, Hooks hooks);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Stops serving and joins the threads. Idempotent.
  void stop();
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] HttpsListener::Stats stats() const;

 private:
  explicit Server(Hooks hooks);
  // One request, on a listener worker.
  void serve(const httplib::Request& req, httplib::Response& res);

  const Hooks hooks_;
  int port_ = 0;
  std::unique_ptr<HttpsListener> listener_;
};

}  // namespace ksched::server
