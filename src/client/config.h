// Connection configuration for the Kubernetes API: kubeconfig files, in-cluster service
// account, and the bearer token source that follows token rotation.
//
// Everything here reads files and the environment only; nothing opens a connection. All
// loading errors are `ConfigError` with a message naming the file and the field, e.g.
//   kubeconfig /x/y: context "foo" not found
//   kubeconfig /x/y: users[0].user.client-certificate-data: invalid base64
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace ksched::client {

struct Config {
  // Scheme, host and port, e.g. "https://10.0.0.1:6443". Never ends with '/'. A path prefix
  // from the kubeconfig (API server behind a proxy) is kept.
  std::string server;
  std::string caPem;  // CA bundle PEM contents; empty means the system roots
  bool insecureSkipTLSVerify = false;
  std::string clientCertPem;  // client certificate identity, PEM contents; both or neither set
  std::string clientKeyPem;
  std::string token;      // bearer token; when tokenFile is set, the value read at load time
  std::string tokenFile;  // if set, the token is (re)read from this file: see TokenSource
  double qps = 50;        // client-side rate limit (kube-scheduler defaults 50/100)
  int burst = 100;
  std::string userAgent = "ksched";
  std::string tlsServerName;  // SNI / verification name override (kubeconfig tls-server-name)
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(const std::string& what) : std::runtime_error(what) {}
};

inline constexpr std::string_view kServiceAccountDir =
    "/var/run/secrets/kubernetes.io/serviceaccount";

// The kubeconfig to use when none is given explicitly: the first existing file of the
// ':'-separated $KUBECONFIG, else $HOME/.kube/config (returned even if it does not exist, so the
// load error names it). Empty only if neither $KUBECONFIG nor $HOME is set.
[[nodiscard]] std::string defaultKubeconfigPath();

// Loads one kubeconfig file. An empty `path` means defaultKubeconfigPath(); an empty `context`
// means the file's current-context.
//   cluster: server (required; "https://" is assumed without a scheme when TLS settings are
//     present, else "http://"), certificate-authority(-data), insecure-skip-tls-verify,
//     tls-server-name.
//   user: client-certificate(-data) and client-key(-data) (both or neither), token, tokenFile.
//     A context without a user is anonymous. exec and auth-provider plugins are not supported:
//     a user with only those is an error.
// A *-data field wins over its file counterpart. Relative file paths are resolved against the
// kubeconfig's directory; files are read now and their contents stored. If only tokenFile is
// set it must be readable now; `token` is then its trimmed contents.
// Throws ConfigError: unreadable file, YAML syntax error (with line and column), a field of
// the wrong type, missing context/cluster/user, invalid base64, unreadable referenced file,
// no server.
[[nodiscard]] Config loadKubeconfig(const std::string& path, const std::string& context = "");
// loadKubeconfig() of a file whose contents are `text`, read from `path` already: `path` names
// the kubeconfig in errors and relative file references resolve against its directory.
[[nodiscard]] Config parseKubeconfig(std::string_view text, const std::string& path,
                                     const std::string& context = "");

// The pod's service account: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
// (an IPv6 host gets brackets), tokenFile = saDir/token (read now, so `token` is set too; the
// file is re-read later so rotation is seen), CA from saDir/ca.crt (logged and left empty if
// unreadable, like client-go). Throws ConfigError if the variables are unset or the token is
// unreadable.
[[nodiscard]] Config inClusterConfig(const std::string& saDir = std::string(kServiceAccountDir));

// What kube-scheduler does with --kubeconfig and --master:
//   - both empty: in-cluster if that works, else loadKubeconfig("") ($KUBECONFIG, ~/.kube/config);
//   - kubeconfig set: that file's current context, with the server replaced by master if set;
//   - only master set: just that server, no credentials (e.g. "http://127.0.0.1:8080").
// Throws ConfigError; when both sources fail the message includes both reasons.
[[nodiscard]] Config resolveConfig(const std::string& kubeconfigFlag, const std::string& masterFlag,
                                   const std::string& saDir = std::string(kServiceAccountDir));

// The current bearer token. Thread-safe.
//
// Without a token file it always returns the static token. With one, it reads the file on the
// first call, then again when kRefreshPeriod has passed since the last attempt or after
// invalidate() (call that on a 401). Contents are trimmed of surrounding whitespace. A missing,
// unreadable or empty file is logged and the last good token is kept (initially the static
// token); the next attempt is a period later or after the next invalidate().
class TokenSource {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;
  static constexpr std::chrono::seconds kRefreshPeriod{60};

  // `clock` defaults to std::chrono::steady_clock::now.
  TokenSource(std::string staticToken, std::string tokenFile, Clock clock = {});
  explicit TokenSource(const Config& config, Clock clock = {});

  [[nodiscard]] std::string token();
  void invalidate();

 private:
  Clock clock_;
  const std::string tokenFile_;
  std::mutex mu_;
  std::string token_;
  bool stale_ = true;
  std::chrono::steady_clock::time_point lastAttempt_{};
};

}  // namespace ksched::client
