// Who may call the HTTPS port, and what they may read: kube-scheduler's delegated
// authentication and authorization, re-derived.
//
// Authentication, in upstream's order (the first that recognises the caller wins; if none does
// and one of them failed, the answer is 401; if none applies, the caller is system:anonymous):
//   1. request headers from an authenticating proxy: a client certificate signed by the
//      request-header CA (and with an allowed CN, if any are named) may set the user in
//      X-Remote-User, its groups in X-Remote-Group and extras in X-Remote-Extra-<key>;
//   2. a client certificate signed by the client CA: the CN is the user, the O entries groups;
//   3. a bearer token, checked by a TokenReview on the apiserver.
// Authorization: the always-allow paths (exact, or a prefix with a trailing *), members of
// system:masters, else a SubjectAccessReview of the non-resource path and lowercase verb.
//
// Answers are cached as upstream: TokenReviews for --authentication-token-webhook-cache-ttl
// (authenticated or not), SubjectAccessReviews for the authorized/unauthorized TTLs. A review
// that fails (apiserver unreachable) is not cached: the token's caller gets 401, an
// authorization that cannot be decided 503.
//
// Thread-safety: check() may be called from any number of threads at once.
#pragma once

#include <openssl/ssl.h>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "config/command_line.h"

namespace httplib {
struct Request;
}

namespace ksched::client {
class RestClient;
struct Config;
}  // namespace ksched::client

namespace ksched::server {

struct UserInfo {
  std::string name;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;
};

// A review could not be made (the apiserver did not answer, or answered an error).
class ReviewError : public std::runtime_error {
 public:
  explicit ReviewError(const std::string& what) : std::runtime_error(what) {}
};

// The apiserver side: TokenReview and SubjectAccessReview. Implementations throw ReviewError.
class Reviewer {
 public:
  virtual ~Reviewer() = default;
  // The token's user, or nullopt (with `why` set) when the apiserver says it is not valid.
  virtual std::optional<UserInfo> reviewToken(const std::string& token, std::string& why) = 0;
  struct Decision {
    bool allowed = false;
    std::string reason;
  };
  virtual Decision reviewAccess(const UserInfo& user, const std::string& verb,
                                const std::string& path) = 0;
};

// Reviews through the apiserver: TokenReviews through `authn`, SubjectAccessReviews through
// `authz` (clients that do not retry for long: a caller waits).
[[nodiscard]] std::unique_ptr<Reviewer> apiReviewer(std::shared_ptr<client::RestClient> authn,
                                                    std::shared_ptr<client::RestClient> authz);

// The client CAs and request-header settings in force: from the flags, else (unless
// --authentication-skip-lookup) from kube-system/extension-apiserver-authentication.
struct ClientCertSettings {
  std::string clientCAPem;
  std::string requestheaderCAPem;
  std::vector<std::string> requestheaderAllowedNames;
  std::vector<std::string> requestheaderUsernameHeaders;
  std::vector<std::string> requestheaderGroupHeaders;
  std::vector<std::string> requestheaderExtraHeadersPrefix;
};

// Reads the files the flags name and, where they are silent, the ConfigMap through `lookup`
// (may be null: no lookup). Throws ReviewError naming the file or the ConfigMap; a failed
// ConfigMap read is only logged with --authentication-tolerate-lookup-failure (the default).
[[nodiscard]] ClientCertSettings resolveClientCertSettings(
    const config::AuthenticationOptions& options, client::RestClient* lookup);

class AccessControl {
 public:
  using Clock = std::function<std::chrono::steady_clock::time_point()>;

  // Throws ReviewError when a CA bundle holds no certificate.
  AccessControl(const config::ServingOptions& options, ClientCertSettings certs,
                std::shared_ptr<Reviewer> reviewer, Clock clock = {});
  ~AccessControl();
  AccessControl(const AccessControl&) = delete;
  AccessControl& operator=(const AccessControl&) = delete;

  struct Verdict {
    int status = 200;  // 200: go on; else the answer (401, 403, 503)
    std::string body;  // a metav1.Status, as upstream answers
    std::string user;  // who the caller is, when known
  };
  // `peer`: the TLS connection the request came on (client certificates), may be null.
  [[nodiscard]] Verdict check(const httplib::Request& request, const SSL* peer);

  // Whether the TLS handshake should ask for client certificates.
  [[nodiscard]] bool wantsClientCertificates() const;

  // Reviews sent to the apiserver so far (cache misses).
  [[nodiscard]] uint64_t tokenReviews() const;
  [[nodiscard]] uint64_t accessReviews() const;

 private:
  struct Authenticated {
    std::optional<UserInfo> user;  // nullopt: not recognised
    bool failed = false;           // a credential was offered and rejected (401)
  };
  Authenticated authenticate(const httplib::Request& request, const SSL* peer);
  Authenticated fromRequestHeader(const httplib::Request& request, const SSL* peer);
  Authenticated fromClientCert(const SSL* peer);
  Authenticated fromToken(const httplib::Request& request);
  bool alwaysAllowed(const std::string& path) const;

  struct Stores;
  template <typename V>
  struct Entry {
    V value;
    std::chrono::steady_clock::time_point expires;
  };
  template <typename V>
  static void prune(std::unordered_map<std::string, Entry<V>>& cache,
                    std::chrono::steady_clock::time_point now);

  const config::AuthenticationOptions authn_;
  const config::AuthorizationOptions authz_;
  const ClientCertSettings certs_;
  std::unique_ptr<Stores> stores_;
  std::shared_ptr<Reviewer> reviewer_;
  Clock clock_;

  mutable std::mutex mu_;
  std::unordered_map<std::string, Entry<std::optional<UserInfo>>> tokens_;  // by token hash
  std::unordered_map<std::string, Entry<Reviewer::Decision>> decisions_;    // by user+verb+path
  uint64_t tokenReviews_ = 0;
  uint64_t accessReviews_ = 0;
};

// The access control the daemon serves with: reviews through --authentication-kubeconfig and
// --authorization-kubeconfig, each defaulting to `own` (the scheduler's connection), with
// clients of their own (no retries, 10 s per request as upstream's); client CAs resolved as
// above. Throws ReviewError or client::ConfigError naming the flag.
[[nodiscard]] std::shared_ptr<AccessControl> makeAccessControl(
    const config::ServingOptions& options, const client::Config& own);

// The metav1.Status bodies upstream answers with.
[[nodiscard]] std::string statusBody(int code, const std::string& reason,
                                     const std::string& message);
[[nodiscard]] std::string unauthorizedBody();
[[nodiscard]] std::string forbiddenBody(const std::string& user, const std::string& verb,
                                        const std::string& path, const std::string& reason);

}  // namespace ksched::server
