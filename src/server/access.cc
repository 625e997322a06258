#include "server/access.h"

#include <httplib.h>
#include <openssl/evp.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "client/config.h"
#include "client/rest_client.h"
#include "client/tls.h"

namespace ksched::server {
namespace {

using nlohmann::json;

constexpr const char* kAnonymous = "system:anonymous";
constexpr const char* kUnauthenticated = "system:unauthenticated";
constexpr const char* kAuthenticated = "system:authenticated";
constexpr const char* kMasters = "system:masters";
constexpr size_t kMaxCacheEntries = 4096;

using StorePtr = std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)>;
using StoreCtxPtr = std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)>;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// A store holding every certificate of `pem`; null for an empty bundle. Throws for a bundle
// with none.
StorePtr makeStore(const std::string& pem, const std::string& what) {
  if (pem.empty()) return {nullptr, X509_STORE_free};
  StorePtr store(client::storeFromPem(pem), X509_STORE_free);
  if (!store) throw ReviewError(what + ": no PEM certificate in the bundle");
  return store;
}

// The leaf certificate of `peer`, verified for client use against `store`; null if the peer
// sent none. `error` says why a certificate that was sent does not verify.
X509* verifiedPeer(X509_STORE* store, const SSL* peer, std::string& error) {
  if (peer == nullptr) return nullptr;
  X509* leaf = SSL_get0_peer_certificate(peer);
  if (leaf == nullptr) return nullptr;
  StoreCtxPtr ctx(X509_STORE_CTX_new(), X509_STORE_CTX_free);
  if (!ctx || X509_STORE_CTX_init(ctx.get(), store, leaf, SSL_get_peer_cert_chain(peer)) != 1) {
    error = "cannot verify the client certificate";
    return nullptr;
  }
  X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(ctx.get()) != 1) {
    error = X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx.get()));
    return nullptr;
  }
  return leaf;
}

std::vector<std::string> subjectEntries(X509* cert, int nid) {
  std::vector<std::string> out;
  X509_NAME* name = X509_get_subject_name(cert);
  for (int i = X509_NAME_get_index_by_NID(name, nid, -1); i >= 0;
       i = X509_NAME_get_index_by_NID(name, nid, i)) {
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(name, i));
    unsigned char* utf8 = nullptr;
    const int n = ASN1_STRING_to_UTF8(&utf8, data);
    if (n >= 0) out.emplace_back(reinterpret_cast<char*>(utf8), static_cast<size_t>(n));
    OPENSSL_free(utf8);
  }
  return out;
}

std::string sha256(const std::string& s) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(s.data(), s.size(), md, &n, EVP_sha256(), nullptr);
  return std::string(reinterpret_cast<char*>(md), n);
}

// Adds system:authenticated unless the user is anonymous or has it, as upstream.
UserInfo withAuthenticatedGroup(UserInfo u) {
  if (u.name != kAnonymous &&
      std::find(u.groups.begin(), u.groups.end(), kAuthenticated) == u.groups.end() &&
      std::find(u.groups.begin(), u.groups.end(), kUnauthenticated) == u.groups.end()) {
    u.groups.emplace_back(kAuthenticated);
  }
  return u;
}

// In upstream's field order.
std::string status(int code, const std::string& reason, const std::string& message) {
  nlohmann::ordered_json s;
  s["kind"] = "Status";
  s["apiVersion"] = "v1";
  s["metadata"] = nlohmann::ordered_json::object();
  s["status"] = "Failure";
  s["message"] = message;
  s["reason"] = reason;
  if (code == 403) s["details"] = nlohmann::ordered_json::object();
  s["code"] = code;
  return s.dump();
}

std::vector<std::string> stringList(const json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& v : j) {
    if (v.is_string()) out.push_back(v.get<std::string>());
  }
  return out;
}

class ApiReviewer final : public Reviewer {
 public:
  ApiReviewer(std::shared_ptr<client::RestClient> authn, std::shared_ptr<client::RestClient> authz)
      : authn_(std::move(authn)), authz_(std::move(authz)) {}

  std::optional<UserInfo> reviewToken(const std::string& token, std::string& why) override {
    json body = {{"apiVersion", "authentication.k8s.io/v1"},
                 {"kind", "TokenReview"},
                 {"spec", {{"token", token}}}};
    json answer = send(*authn_, "/apis/authentication.k8s.io/v1/tokenreviews", body);
    const json& st = answer.value("status", json::object());
    if (!st.value("authenticated", false)) {
      why = st.value("error", "");
      return std::nullopt;
    }
    const json& u = st.value("user", json::object());
    UserInfo user;
    user.name = u.value("username", "");
    user.uid = u.value("uid", "");
    user.groups = stringList(u.value("groups", json::array()));
    if (auto it = u.find("extra"); it != u.end() && it->is_object()) {
      for (const auto& [k, v] : it->items()) user.extra[k] = stringList(v);
    }
    return user;
  }

  Decision reviewAccess(const UserInfo& user, const std::string& verb,
                        const std::string& path) override {
    json spec = {{"user", user.name},
                 {"groups", user.groups},
                 {"nonResourceAttributes", {{"path", path}, {"verb", verb}}}};
    if (!user.uid.empty()) spec["uid"] = user.uid;
    if (!user.extra.empty()) spec["extra"] = user.extra;
    json body = {
        {"apiVersion", "authorization.k8s.io/v1"}, {"kind", "SubjectAccessReview"}, {"spec", spec}};
    json answer = send(*authz_, "/apis/authorization.k8s.io/v1/subjectaccessreviews", body);
    const json& st = answer.value("status", json::object());
    Decision d;
    d.allowed = st.value("allowed", false) && !st.value("denied", false);
    d.reason = st.value("reason", "");
    if (!d.allowed && d.reason.empty()) {
      if (auto err = st.value("evaluationError", ""); !err.empty()) d.reason = err;
    }
    return d;
  }

 private:
  static json send(client::RestClient& client, const std::string& path, const json& body) {
    try {
      return client.post(path, body);
    } catch (const std::exception& e) {  // client::ApiError, or an unparsable answer
      throw ReviewError(e.what());
    }
  }
  std::shared_ptr<client::RestClient> authn_;
  std::shared_ptr<client::RestClient> authz_;
};

std::string readFile(const std::string& path, const std::string& flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ReviewError(flag + ": cannot read " + path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

std::unique_ptr<Reviewer> apiReviewer(std::shared_ptr<client::RestClient> authn,
                                      std::shared_ptr<client::RestClient> authz) {
  return std::make_unique<ApiReviewer>(std::move(authn), std::move(authz));
}

std::shared_ptr<AccessControl> makeAccessControl(const config::ServingOptions& options,
                                                 const client::Config& own) {
  client::RestClient::Options o;
  o.maxRetries = 0;
  o.connectTimeout = std::chrono::seconds(5);
  o.requestTimeout = std::chrono::seconds(10);
  auto connect = [&](const std::string& kubeconfig, const char* flag) {
    client::Config c = own;
    if (!kubeconfig.empty()) {
      try {
        c = client::loadKubeconfig(kubeconfig);
      } catch (const client::ConfigError& e) {
        throw ReviewError(std::string(flag) + ": " + e.what());
      }
    }
    c.qps = std::max(c.qps, 50.0);
    c.burst = std::max(c.burst, 100);
    return std::make_shared<client::RestClient>(c, o);
  };
  auto authn = connect(options.authentication.kubeconfig, "--authentication-kubeconfig");
  auto authz = options.authorization.kubeconfig == options.authentication.kubeconfig
                   ? authn
                   : connect(options.authorization.kubeconfig, "--authorization-kubeconfig");
  ClientCertSettings certs = resolveClientCertSettings(options.authentication, authn.get());
  return std::make_shared<AccessControl>(options, std::move(certs), apiReviewer(authn, authz));
}

std::string statusBody(int code, const std::string& reason, const std::string& message) {
  return status(code, reason, message);
}

std::string unauthorizedBody() { return status(401, "Unauthorized", "Unauthorized"); }

std::string forbiddenBody(const std::string& user, const std::string& verb, const std::string& path,
                          const std::string& reason) {
  std::string msg = "forbidden: User \"" + user + "\" cannot " + verb + " path \"" + path + "\"";
  if (!reason.empty()) msg += ": " + reason;
  return status(403, "Forbidden", msg);
}

ClientCertSettings resolveClientCertSettings(const config::AuthenticationOptions& options,
                                             client::RestClient* lookup) {
  ClientCertSettings s;
  s.requestheaderAllowedNames = options.requestheaderAllowedNames;
  s.requestheaderUsernameHeaders = options.requestheaderUsernameHeaders;
  s.requestheaderGroupHeaders = options.requestheaderGroupHeaders;
  s.requestheaderExtraHeadersPrefix = options.requestheaderExtraHeadersPrefix;
  if (!options.clientCAFile.empty()) {
    s.clientCAPem = readFile(options.clientCAFile, "--client-ca-file");
  }
  if (!options.requestheaderClientCAFile.empty()) {
    s.requestheaderCAPem =
        readFile(options.requestheaderClientCAFile, "--requestheader-client-ca-file");
  }
  const bool needClientCA = options.clientCAFile.empty();
  const bool needRequestHeader = options.requestheaderClientCAFile.empty();
  if (options.skipLookup || lookup == nullptr || (!needClientCA && !needRequestHeader)) return s;

  const std::string where = "configmap kube-system/extension-apiserver-authentication";
  json cm;
  try {
    cm =
        lookup->get("/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication");
  } catch (const std::exception& e) {
    if (!options.tolerateLookupFailure) {
      throw ReviewError("unable to load " + where + ": " + e.what() +
                        " (--authentication-tolerate-lookup-failure=false)");
    }
    spdlog::error("error looking up in-cluster authentication configuration ({}): {}", where,
                  e.what());
    spdlog::error(
        "continuing without it: client certificates are not accepted unless --client-ca-file "
        "is given; set --authentication-tolerate-lookup-failure=false to require the lookup");
    return s;
  }
  const json& data = cm.value("data", json::object());
  if (needClientCA) s.clientCAPem = data.value("client-ca-file", "");
  if (needRequestHeader) {
    s.requestheaderCAPem = data.value("requestheader-client-ca-file", "");
    if (!s.requestheaderCAPem.empty()) {
      auto list = [&](const char* key, std::vector<std::string>& dst) {
        if (!data.contains(key)) return;
        json parsed = json::parse(data.value(key, ""), nullptr, false);
        if (parsed.is_discarded() || !parsed.is_array()) {
          spdlog::warn("{}: {} is not a JSON list; ignored", where, key);
          return;
        }
        dst = stringList(parsed);
      };
      list("requestheader-allowed-names", s.requestheaderAllowedNames);
      list("requestheader-username-headers", s.requestheaderUsernameHeaders);
      list("requestheader-group-headers", s.requestheaderGroupHeaders);
      list("requestheader-extra-headers-prefix", s.requestheaderExtraHeadersPrefix);
    }
  }
  spdlog::info("authentication: client CA {}, request-header CA {} (from {})",
               s.clientCAPem.empty() ? "none" : "set",
               s.requestheaderCAPem.empty() ? "none" : "set", where);
  return s;
}

struct AccessControl::Stores {
  StorePtr clientCA{nullptr, X509_STORE_free};
  StorePtr requestheaderCA{nullptr, X509_STORE_free};
};

AccessControl::AccessControl(const config::ServingOptions& options, ClientCertSettings certs,
                             std::shared_ptr<Reviewer> reviewer, Clock clock)
    : authn_(options.authentication),
      authz_(options.authorization),
      certs_(std::move(certs)),
      stores_(std::make_unique<Stores>()),
      reviewer_(std::move(reviewer)),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })) {
  stores_->clientCA = makeStore(certs_.clientCAPem, "client CA");
  stores_->requestheaderCA = makeStore(certs_.requestheaderCAPem, "request-header client CA");
}

AccessControl::~AccessControl() = default;

bool AccessControl::wantsClientCertificates() const {
  return stores_->clientCA != nullptr || stores_->requestheaderCA != nullptr;
}

uint64_t AccessControl::tokenReviews() const {
  std::lock_guard lock(mu_);
  return tokenReviews_;
}

uint64_t AccessControl::accessReviews() const {
  std::lock_guard lock(mu_);
  return accessReviews_;
}

template <typename V>
void AccessControl::prune(std::unordered_map<std::string, Entry<V>>& cache,
                          std::chrono::steady_clock::time_point now) {
  if (cache.size() < kMaxCacheEntries) return;
  std::erase_if(cache, [now](const auto& kv) { return kv.second.expires <= now; });
  if (cache.size() >= kMaxCacheEntries) cache.clear();
}

AccessControl::Authenticated AccessControl::fromRequestHeader(const httplib::Request& request,
                                                              const SSL* peer) {
  if (!stores_->requestheaderCA) return {};
  std::string error;
  X509* cert = verifiedPeer(stores_->requestheaderCA.get(), peer, error);
  if (cert == nullptr) return {std::nullopt, !error.empty()};
  const auto& allowed = certs_.requestheaderAllowedNames;
  if (!allowed.empty()) {
    const auto cn = subjectEntries(cert, NID_commonName);
    if (cn.empty() || std::find(allowed.begin(), allowed.end(), cn.front()) == allowed.end()) {
      spdlog::debug("request header: client certificate CN is not an allowed name");
      return {std::nullopt, true};
    }
  }
  UserInfo user;
  for (const auto& h : certs_.requestheaderUsernameHeaders) {
    user.name = request.get_header_value(h.c_str());
    if (!user.name.empty()) break;
  }
  if (user.name.empty()) return {};
  for (const auto& h : certs_.requestheaderGroupHeaders) {
    const size_t n = request.get_header_value_count(h.c_str());
    for (size_t i = 0; i < n; ++i) user.groups.push_back(request.get_header_value(h.c_str(), i));
  }
  for (const auto& prefix : certs_.requestheaderExtraHeadersPrefix) {
    const std::string p = lower(prefix);
    for (const auto& [k, v] : request.headers) {
      std::string key = lower(k);
      if (key.size() > p.size() && key.compare(0, p.size(), p) == 0) {
        user.extra[httplib::detail::decode_url(key.substr(p.size()), false)].push_back(v);
      }
    }
  }
  return {withAuthenticatedGroup(std::move(user)), false};
}

AccessControl::Authenticated AccessControl::fromClientCert(const SSL* peer) {
  if (!stores_->clientCA) return {};
  std::string error;
  X509* cert = verifiedPeer(stores_->clientCA.get(), peer, error);
  if (cert == nullptr) {
    if (!error.empty()) spdlog::debug("client certificate rejected: {}", error);
    return {std::nullopt, !error.empty()};
  }
  auto cn = subjectEntries(cert, NID_commonName);
  if (cn.empty() || cn.front().empty()) return {};
  UserInfo user;
  user.name = cn.front();
  user.groups = subjectEntries(cert, NID_organizationName);
  return {withAuthenticatedGroup(std::move(user)), false};
}

AccessControl::Authenticated AccessControl::fromToken(const httplib::Request& request) {
  const std::string header = request.get_header_value("Authorization");
  if (header.size() < 7 || lower(header.substr(0, 7)) != "bearer ") return {};
  std::string token = header.substr(7);
  while (!token.empty() && token.front() == ' ') token.erase(0, 1);
  while (!token.empty() && token.back() == ' ') token.pop_back();
  if (token.empty()) return {};
  const std::string key = sha256(token);
  {
    std::lock_guard lock(mu_);
    if (auto it = tokens_.find(key); it != tokens_.end() && it->second.expires > clock_()) {
      if (!it->second.value) return {std::nullopt, true};
      return {it->second.value, false};
    }
    ++tokenReviews_;
  }
  std::string why;
  std::optional<UserInfo> user;
  try {
    user = reviewer_->reviewToken(token, why);
  } catch (const ReviewError& e) {
    spdlog::warn("TokenReview failed, answering 401: {}", e.what());
    return {std::nullopt, true};
  }
  if (user) *user = withAuthenticatedGroup(std::move(*user));
  if (!user) spdlog::debug("token rejected by TokenReview: {}", why);
  std::lock_guard lock(mu_);
  const auto now = clock_();
  prune(tokens_, now);
  tokens_[key] = {user, now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                  authn_.tokenCacheTTL)};
  if (!user) return {std::nullopt, true};
  return {user, false};
}

AccessControl::Authenticated AccessControl::authenticate(const httplib::Request& request,
                                                         const SSL* peer) {
  // The first that recognises the caller wins; a rejected credential counts only if none does.
  bool failed = false;
  for (int step = 0; step < 3; ++step) {
    Authenticated a = step == 0   ? fromRequestHeader(request, peer)
                      : step == 1 ? fromClientCert(peer)
                                  : fromToken(request);
    if (a.user) return a;
    failed = failed || a.failed;
  }
  if (failed) return {std::nullopt, true};
  UserInfo anonymous;
  anonymous.name = kAnonymous;
  anonymous.groups = {kUnauthenticated};
  return {std::move(anonymous), false};
}

bool AccessControl::alwaysAllowed(const std::string& path) const {
  for (const auto& p : authz_.alwaysAllowPaths) {
    if (!p.empty() && p.back() == '*') {
      if (path.compare(0, p.size() - 1, p, 0, p.size() - 1) == 0) return true;
    } else if (p == path) {
      return true;
    }
  }
  return false;
}

AccessControl::Verdict AccessControl::check(const httplib::Request& request, const SSL* peer) {
  Authenticated who = authenticate(request, peer);
  if (!who.user) return {401, unauthorizedBody(), ""};
  const UserInfo& user = *who.user;
  const std::string verb = lower(request.method);
  const std::string& path = request.path;
  if (alwaysAllowed(path)) return {200, "", user.name};
  if (std::find(user.groups.begin(), user.groups.end(), kMasters) != user.groups.end()) {
    return {200, "", user.name};
  }

  std::string key = user.name;
  key.append(1, '\0').append(user.uid);
  for (const auto& g : user.groups) key.append(1, '\0').append(g);
  for (const auto& [k, vs] : user.extra) {
    key.append(1, '\1').append(k);
    for (const auto& v : vs) key.append(1, '\0').append(v);
  }
  key.append(1, '\2').append(verb).append(1, '\0').append(path);
  Reviewer::Decision d;
  bool cached = false;
  {
    std::lock_guard lock(mu_);
    if (auto it = decisions_.find(key); it != decisions_.end() && it->second.expires > clock_()) {
      d = it->second.value;
      cached = true;
    } else {
      ++accessReviews_;
    }
  }
  if (!cached) {
    try {
      d = reviewer_->reviewAccess(user, verb, path);
    } catch (const ReviewError& e) {
      spdlog::warn("SubjectAccessReview for {} {} by \"{}\" failed, answering 503: {}", verb, path,
                   user.name, e.what());
      return {503,
              status(503, "ServiceUnavailable",
                     "the authorization check could not be made: the API server did not answer"),
              user.name};
    }
    std::lock_guard lock(mu_);
    const auto now = clock_();
    prune(decisions_, now);
    const auto ttl = d.allowed ? authz_.allowCacheTTL : authz_.denyCacheTTL;
    decisions_[key] = {d,
                       now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(ttl)};
  }
  if (d.allowed) return {200, "", user.name};
  spdlog::debug("forbidden: {} {} by \"{}\": {}", verb, path, user.name, d.reason);
  return {403, forbiddenBody(user.name, verb, path, d.reason), user.name};
}

}  // namespace ksched::server
