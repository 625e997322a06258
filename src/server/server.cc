#include "server/server.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace ksched::server {
namespace {

template <typename T, void (*F)(T*)>
struct Deleter {
  void operator()(T* p) const { F(p); }
};
using PKeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY, EVP_PKEY_free>>;
using X509Ptr = std::unique_ptr<X509, Deleter<X509, X509_free>>;
using BioPtr = std::unique_ptr<BIO, Deleter<BIO, BIO_free_all>>;

[[noreturn]] void fail(const std::string& what) { throw ServerError(what); }

std::string bioString(BIO* bio) {
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  return std::string(data, static_cast<size_t>(n));
}

void addExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) fail("certificate extension");
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("reading " + path + ": " + std::strerror(errno));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void writeFile(const std::string& path, const std::string& data, mode_t mode) {
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) fail("writing " + path + ": " + std::strerror(errno));
    out << data;
  }
  ::chmod(path.c_str(), mode);
}

// The first certificate of `pem` serves; the ones after it are sent as its chain.
void useCertificateChain(SSL_CTX* ctx, const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr leaf(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!leaf || SSL_CTX_use_certificate(ctx, leaf.get()) != 1) fail("invalid PEM certificate");
  while (X509* extra = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    SSL_CTX_add0_chain_cert(ctx, extra);  // takes ownership
  }
  ERR_clear_error();  // the end of the PEM data
}

PKeyPtr parseKey(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PKeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail("invalid PEM private key");
  return key;
}

// IANA cipher suite name -> OpenSSL's, for every suite this OpenSSL knows; TLS 1.3 suites
// keep their IANA name (OpenSSL configures them by it).
const std::map<std::string, std::pair<std::string, bool>>& cipherNames() {
  static const auto names = [] {
    std::map<std::string, std::pair<std::string, bool>> m;
    std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>> ctx(SSL_CTX_new(TLS_method()));
    SSL_CTX_set_security_level(ctx.get(), 0);
    SSL_CTX_set_cipher_list(ctx.get(), "ALL:COMPLEMENTOFALL");
    STACK_OF(SSL_CIPHER)* ciphers = SSL_CTX_get_ciphers(ctx.get());
    for (int i = 0; i < sk_SSL_CIPHER_num(ciphers); ++i) {
      const SSL_CIPHER* c = sk_SSL_CIPHER_value(ciphers, i);
      const char* iana = SSL_CIPHER_standard_name(c);
      if (iana == nullptr) continue;
      const bool tls13 = SSL_CIPHER_get_kx_nid(c) == NID_kx_any;
      m[iana] = {tls13 ? iana : SSL_CIPHER_get_name(c), tls13};
    }
    return m;
  }();
  return names;
}

int tlsVersion(const std::string& name) {
  if (name == "VersionTLS10") return TLS1_VERSION;
  if (name == "VersionTLS11") return TLS1_1_VERSION;
  if (name == "VersionTLS13") return TLS1_3_VERSION;
  return TLS1_2_VERSION;
}

// Applies the TLS flags to `ctx`; "" or what is wrong.
std::string configureTls(SSL_CTX* ctx, const config::ServingOptions& options) {
  SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  const int minVersion = tlsVersion(options.tlsMinVersion);
  if (minVersion < TLS1_2_VERSION) SSL_CTX_set_security_level(ctx, 0);
  if (SSL_CTX_set_min_proto_version(ctx, minVersion) != 1) {
    return "--tls-min-version: " + options.tlsMinVersion + " is not supported here";
  }
  if (options.tlsCipherSuites.empty()) return "";
  std::string tls12;
  std::string tls13;
  for (const auto& name : options.tlsCipherSuites) {
    auto it = cipherNames().find(name);
    if (it == cipherNames().end()) {
      return "--tls-cipher-suites: \"" + name + "\" is not a supported cipher suite";
    }
    std::string& list = it->second.second ? tls13 : tls12;
    list += (list.empty() ? "" : ":") + it->second.first;
  }
  if (!tls12.empty() && SSL_CTX_set_cipher_list(ctx, tls12.c_str()) != 1) {
    return "--tls-cipher-suites: none of the TLS 1.2 suites can be used";
  }
  if (tls12.empty() && minVersion < TLS1_3_VERSION) {
    return "--tls-cipher-suites: no TLS 1.2 suite given; add one or set "
           "--tls-min-version=VersionTLS13";
  }
  if (!tls13.empty() && SSL_CTX_set_ciphersuites(ctx, tls13.c_str()) != 1) {
    return "--tls-cipher-suites: none of the TLS 1.3 suites can be used";
  }
  return "";
}

// Asks for a client certificate without requiring one; AccessControl verifies it against the
// CA in force (a certificate that does not verify is a 401, not a failed handshake).
int acceptAnyPeer(int /*preverified*/, X509_STORE_CTX* /*ctx*/) { return 1; }

}  // namespace

std::string checkTlsOptions(const config::ServingOptions& options) {
  std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>> ctx(SSL_CTX_new(TLS_server_method()));
  return configureTls(ctx.get(), options);
}

CertKeyPair generateSelfSignedCert(const std::string& host) {
  PKeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("generating a private key");
  X509Ptr cert(X509_new());
  X509_set_version(cert.get(), 2);
  const auto now = std::chrono::duration_cast<std::chrono::seconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  ASN1_INTEGER_set_int64(X509_get_serialNumber(cert.get()), now);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 365L * 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* name = X509_get_subject_name(cert.get());
  const std::string cn = host + "@" + std::to_string(now);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  addExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE");
  addExtension(cert.get(), NID_key_usage, "critical,digitalSignature,keyCertSign");
  addExtension(cert.get(), NID_ext_key_usage, "serverAuth");
  const std::string san = "DNS:" + host + ",IP:127.0.0.1";
  addExtension(cert.get(), NID_subject_alt_name, san.c_str());
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) fail("signing the certificate");

  CertKeyPair pair;
  BioPtr certBio(BIO_new(BIO_s_mem()));
  PEM_write_bio_X509(certBio.get(), cert.get());
  pair.certPem = bioString(certBio.get());
  BioPtr keyBio(BIO_new(BIO_s_mem()));
  PEM_write_bio_PrivateKey(keyBio.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  pair.keyPem = bioString(keyBio.get());
  return pair;
}

CertKeyPair resolveServingCert(const config::ServingOptions& options) {
  if (!options.tlsCertFile.empty() || !options.tlsPrivateKeyFile.empty()) {
    if (options.tlsCertFile.empty() || options.tlsPrivateKeyFile.empty()) {
      fail("--tls-cert-file and --tls-private-key-file must be given together");
    }
    return {readFile(options.tlsCertFile), readFile(options.tlsPrivateKeyFile)};
  }
  if (options.certDir.empty()) return generateSelfSignedCert("localhost");
  const std::filesystem::path dir(options.certDir);
  const std::string certPath = (dir / "kube-scheduler.crt").string();
  const std::string keyPath = (dir / "kube-scheduler.key").string();
  if (std::filesystem::exists(certPath) && std::filesystem::exists(keyPath)) {
    return {readFile(certPath), readFile(keyPath)};
  }
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) fail("creating " + options.certDir + ": " + ec.message());
  CertKeyPair pair = generateSelfSignedCert("localhost");
  writeFile(certPath, pair.certPem, 0644);
  writeFile(keyPath, pair.keyPem, 0600);
  spdlog::info("generated self-signed cert ({}, {})", certPath, keyPath);
  return pair;
}

HealthResult healthCheck(std::string_view endpoint, const std::string& leaderError) {
  if (leaderError.empty()) return {200, "ok"};
  spdlog::info("{} check failed: leaderElection: {}", endpoint, leaderError);
  return {500, "[+]ping ok\n[-]leaderElection failed: reason withheld\n" + std::string(endpoint) +
                   " check failed\n"};
}

std::unique_ptr<Server> Server::start(const config::ServingOptions& options, Hooks hooks) {
  if (options.securePort == 0) return nullptr;
  if (options.securePort < 0 || options.securePort > 65535) {
    fail("--secure-port " + std::to_string(options.securePort) +
         " must be between 0 and 65535, inclusive");
  }
  if (!hooks.access) fail("secure serving needs an access control");
  const CertKeyPair pair = resolveServingCert(options);
  std::unique_ptr<SSL_CTX, Deleter<SSL_CTX, SSL_CTX_free>> ctx(SSL_CTX_new(TLS_server_method()));
  if (!ctx) fail("creating the TLS context");
  useCertificateChain(ctx.get(), pair.certPem);
  PKeyPtr key = parseKey(pair.keyPem);
  if (SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 ||
      SSL_CTX_check_private_key(ctx.get()) != 1) {
    fail("the serving certificate and key do not match");
  }
  if (auto err = configureTls(ctx.get(), options); !err.empty()) fail(err);
  if (hooks.access->wantsClientCertificates()) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, acceptAnyPeer);
  }
  std::unique_ptr<Server> s(new Server(std::move(hooks)));
  Server* raw = s.get();
  ListenerLimits limits;
  // Probes carry no token: answering them needs no review, so nothing waits on the apiserver.
  limits.urgent = [](const httplib::Request& req) {
    return (req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz") &&
           !req.has_header("Authorization");
  };
  try {
    s->listener_ = HttpsListener::start(
        ctx.get(), options.bindAddress, options.securePort,
        [raw](const httplib::Request& req, httplib::Response& res) { raw->serve(req, res); },
        std::move(limits));
  } catch (const std::runtime_error& e) {
    fail(e.what());
  }
  s->port_ = s->listener_->port();
  spdlog::info("serving securely on {}:{}", options.bindAddress, s->port_);
  return s;
}

Server::Server(Hooks hooks) : hooks_(std::move(hooks)) {}

Server::~Server() { stop(); }

void Server::stop() {
  if (listener_) listener_->stop();
}

HttpsListener::Stats Server::stats() const { return listener_->stats(); }

void Server::serve(const httplib::Request& req, httplib::Response& res) {
  AccessControl::Verdict v = hooks_.access->check(req, req.ssl);
  if (v.status != 200) {
    res.status = v.status;
    res.set_content(v.body, "application/json");
    return;
  }
  const std::string& path = req.path;
  const bool known = path == "/healthz" || path == "/livez" || path == "/readyz" ||
                     path == "/metrics" || path == "/debug/explain" || path == "/configz";
  if (!known) {
    res.status = 404;
    res.set_content("404 page not found\n", "text/plain; charset=utf-8");
    return;
  }
  if (req.method != "GET" && req.method != "HEAD") {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("method not allowed\n", "text/plain; charset=utf-8");
    return;
  }
  if (path == "/healthz" || path == "/livez") {
    const std::string err = hooks_.livezLeaderCheck ? hooks_.livezLeaderCheck() : "";
    HealthResult r = healthCheck(path.substr(1), err);
    res.status = r.status;
    res.set_content(r.body, "text/plain; charset=utf-8");
  } else if (path == "/readyz") {
    if (hooks_.ready && !hooks_.ready()) {
      res.status = 503;
      res.set_content("[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n",
                      "text/plain; charset=utf-8");
      return;
    }
    res.set_content("ok", "text/plain; charset=utf-8");
  } else if (path == "/metrics") {
    if (!hooks_.metrics) {
      res.status = 404;
      return;
    }
    res.set_content(hooks_.metrics(), "text/plain; version=0.0.4; charset=utf-8");
  } else if (path == "/debug/explain") {
    if (!hooks_.explain) {
      res.status = 404;
      return;
    }
    const std::string ns =
        req.has_param("namespace") ? req.get_param_value("namespace") : "default";
    const std::string name = req.get_param_value("name");
    if (name.empty()) {
      res.status = 400;
      res.set_content(statusBody(400, "BadRequest", "the query needs name=<pod> (and namespace=)"),
                      "application/json");
      return;
    }
    auto [status, body] = hooks_.explain(ns, name, req.get_param_value("node"));
    res.status = status;
    res.set_content(body, "application/json");
  } else if (path == "/configz") {
    if (!hooks_.configz) {
      res.status = 404;
      return;
    }
    res.set_content(hooks_.configz(), "application/json");
  }
}

}  // namespace ksched::server
