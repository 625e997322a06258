#include "client/config.h"

#include <spdlog/spdlog.h>
#include <yaml-cpp/yaml.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include <ksched/api/utf8.h>

#include "client/url.h"
#include "util/base64.h"

namespace ksched::client {
namespace {

namespace fs = std::filesystem;

struct ReadResult {
  bool ok = false;
  std::string data;   // contents when ok
  std::string error;  // strerror text when not ok
};

std::string errnoMessage(int err) {
  return std::error_code(err, std::generic_category()).message();
}

ReadResult readFile(const std::string& path) {
  ReadResult r;
  errno = 0;
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    r.error = errnoMessage(errno);
    return r;
  }
  std::array<char, 8192> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) r.data.append(buf.data(), n);
  if (std::ferror(f) != 0) {
    r.error = errno != 0 ? errnoMessage(errno) : "read error";
    std::fclose(f);
    return r;
  }
  std::fclose(f);
  r.ok = true;
  return r;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

std::string trim(std::string_view s) {
  while (!s.empty() && isSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && isSpace(s.back())) s.remove_suffix(1);
  return std::string(s);
}

std::string getEnv(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? std::string() : std::string(v);
}

// Adds a scheme when missing (https if TLS settings are present, like client-go), drops
// trailing slashes. nullopt with `error` set when the apiserver client could not use it
// (parseHttpUrl: not http(s), no host, a bad port).
std::optional<std::string> normalizeServer(std::string_view raw, bool defaultTls,
                                           std::string& error) {
  std::string s = trim(raw);
  if (s.find("://") == std::string::npos) s = (defaultTls ? "https://" : "http://") + s;
  while (!s.empty() && s.back() == '/') s.pop_back();
  if (!parseHttpUrl(s, error)) return std::nullopt;
  return s;
}

bool wantsTls(const Config& c) {
  return !c.caPem.empty() || !c.clientCertPem.empty() || c.insecureSkipTLSVerify;
}

struct Named {
  YAML::Node node;
  std::string path;  // e.g. "clusters[1].cluster"
};

class KubeconfigLoader {
 public:
  explicit KubeconfigLoader(std::string path) : path_(std::move(path)) {
    std::error_code ec;
    fs::path abs = fs::absolute(path_, ec);
    dir_ = ec ? fs::path(path_).parent_path() : abs.parent_path();
  }

  Config load(const std::string& contextFlag) {
    ReadResult r = readFile(path_);
    if (!r.ok) fail("cannot read: " + r.error);
    return load(r.data, contextFlag);
  }

  Config load(std::string_view text, const std::string& contextFlag) {
    parse(text);
    std::string ctxName = contextFlag;
    if (ctxName.empty()) ctxName = scalar(root_, "current-context", "").value_or("");
    if (ctxName.empty()) fail("no context given and current-context is not set");
    auto ctx = findNamed("contexts", "context", ctxName);
    if (!ctx) fail("context \"" + ctxName + "\" not found");

    std::string clusterName = scalar(ctx->node, "cluster", ctx->path).value_or("");
    if (clusterName.empty())
      fail(ctx->path + ".cluster: context \"" + ctxName + "\" has no cluster");
    auto cluster = findNamed("clusters", "cluster", clusterName);
    if (!cluster) {
      fail("cluster \"" + clusterName + "\" not found (used by context \"" + ctxName + "\")");
    }

    Config cfg;
    loadCluster(*cluster, clusterName, cfg);
    std::string userName = scalar(ctx->node, "user", ctx->path).value_or("");
    if (!userName.empty()) {
      auto user = findNamed("users", "user", userName);
      if (!user) fail("user \"" + userName + "\" not found (used by context \"" + ctxName + "\")");
      loadUser(*user, cfg);
    }

    std::string error;
    auto server = normalizeServer(cfg.server, wantsTls(cfg), error);
    if (!server) fail(cluster->path + ".server: \"" + cfg.server + "\": " + error);
    cfg.server = *server;
    if (cfg.insecureSkipTLSVerify && !cfg.caPem.empty()) {
      spdlog::warn(
          "kubeconfig {}: cluster \"{}\" sets both a CA and insecure-skip-tls-verify; "
          "the server certificate will not be verified",
          path_, clusterName);
    }
    return cfg;
  }

 private:
  [[noreturn]] void fail(const std::string& msg) const {
    throw ConfigError("kubeconfig " + path_ + ": " + msg);
  }

  void parse(std::string_view text) {
    try {
      root_ = YAML::Load(std::string(text));
    } catch (const YAML::Exception& e) {
      if (e.mark.is_null()) fail("invalid YAML: " + e.msg);
      fail("invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
           std::to_string(e.mark.column + 1) + ": " + e.msg);
    }
    if (!root_ || root_.IsNull()) root_ = YAML::Node(YAML::NodeType::Map);
    if (!root_.IsMap()) fail("expected a mapping at the top level");
  }

  static std::string join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  std::optional<std::string> scalar(const YAML::Node& node, const std::string& key,
                                    const std::string& path) const {
    const YAML::Node n = node[key];
    if (!n || n.IsNull()) return std::nullopt;
    if (!n.IsScalar()) fail(join(path, key) + ": expected a string");
    if (!api::isValidUtf8(n.Scalar())) fail(join(path, key) + ": invalid UTF-8");
    return n.Scalar();
  }

  bool boolean(const YAML::Node& node, const std::string& key, const std::string& path) const {
    const YAML::Node n = node[key];
    if (!n || n.IsNull()) return false;
    bool v = false;
    if (!n.IsScalar() || !YAML::convert<bool>::decode(n, v)) {
      fail(join(path, key) + ": expected true or false");
    }
    return v;
  }

  std::optional<Named> findNamed(const std::string& listKey, const std::string& itemKey,
                                 const std::string& name) const {
    const YAML::Node list = root_[listKey];
    if (!list || list.IsNull()) return std::nullopt;
    if (!list.IsSequence()) fail(listKey + ": expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const YAML::Node item = list[i];
      std::string itemPath = listKey + "[" + std::to_string(i) + "]";
      if (!item.IsMap()) fail(itemPath + ": expected a mapping");
      if (scalar(item, "name", itemPath).value_or("") != name) continue;
      // Absent or null: an empty mapping. (Assigning to the invalid node yaml-cpp returns for an
      // absent key throws YAML::InvalidNode, so the node is chosen, not assigned.)
      const YAML::Node found = item[itemKey];
      Named out{!found || found.IsNull() ? YAML::Node(YAML::NodeType::Map) : found,
                itemPath + "." + itemKey};
      if (!out.node.IsMap()) fail(out.path + ": expected a mapping");
      return out;
    }
    return std::nullopt;
  }

  std::string resolvePath(const std::string& p) const {
    fs::path q(p);
    if (q.is_relative()) q = dir_ / q;
    return q.lexically_normal().string();
  }

  std::string readReferenced(const std::string& fieldPath, const std::string& file) const {
    std::string resolved = resolvePath(file);
    ReadResult r = readFile(resolved);
    if (!r.ok) fail(fieldPath + ": cannot read " + resolved + ": " + r.error);
    return std::move(r.data);
  }

  // The decoded *-data field if set, else the contents of the file field if set, else "".
  std::string dataOrFile(const Named& n, const std::string& dataKey,
                         const std::string& fileKey) const {
    if (auto data = scalar(n.node, dataKey, n.path); data && !data->empty()) {
      auto decoded = util::base64Decode(*data);
      if (!decoded) fail(join(n.path, dataKey) + ": invalid base64");
      return std::move(*decoded);
    }
    if (auto file = scalar(n.node, fileKey, n.path); file && !file->empty()) {
      return readReferenced(join(n.path, fileKey), *file);
    }
    return {};
  }

  void loadCluster(const Named& cluster, const std::string& name, Config& cfg) const {
    cfg.server = scalar(cluster.node, "server", cluster.path).value_or("");
    if (trim(cfg.server).empty()) fail("cluster \"" + name + "\" has no server");
    cfg.caPem = dataOrFile(cluster, "certificate-authority-data", "certificate-authority");
    cfg.insecureSkipTLSVerify = boolean(cluster.node, "insecure-skip-tls-verify", cluster.path);
    cfg.tlsServerName = scalar(cluster.node, "tls-server-name", cluster.path).value_or("");
  }

  void loadUser(const Named& user, Config& cfg) const {
    cfg.clientCertPem = dataOrFile(user, "client-certificate-data", "client-certificate");
    cfg.clientKeyPem = dataOrFile(user, "client-key-data", "client-key");
    if (cfg.clientCertPem.empty() != cfg.clientKeyPem.empty()) {
      fail(user.path + ": client-certificate and client-key must be set together");
    }
    cfg.token = trim(scalar(user.node, "token", user.path).value_or(""));
    if (auto file = scalar(user.node, "tokenFile", user.path); file && !file->empty()) {
      cfg.tokenFile = resolvePath(*file);
      if (cfg.token.empty()) cfg.token = trim(readReferenced(join(user.path, "tokenFile"), *file));
    }
    bool hasCredentials = !cfg.clientCertPem.empty() || !cfg.token.empty();
    if (!hasCredentials) {
      for (const char* plugin : {"exec", "auth-provider"}) {
        const YAML::Node n = user.node[plugin];
        if (n && !n.IsNull())
          fail(join(user.path, plugin) + ": credential plugins are not supported");
      }
    }
  }

  std::string path_;
  fs::path dir_;
  YAML::Node root_;
};

}  // namespace

std::string defaultKubeconfigPath() {
  std::string list = getEnv("KUBECONFIG");
  size_t start = 0;
  while (start <= list.size() && !list.empty()) {
    size_t end = list.find(':', start);
    if (end == std::string::npos) end = list.size();
    std::string entry = list.substr(start, end - start);
    std::error_code ec;
    if (!entry.empty() && fs::is_regular_file(entry, ec)) return entry;
    start = end + 1;
  }
  std::string home = getEnv("HOME");
  if (home.empty()) return {};
  return (fs::path(home) / ".kube" / "config").string();
}

Config loadKubeconfig(const std::string& path, const std::string& context) {
  std::string file = path.empty() ? defaultKubeconfigPath() : path;
  if (file.empty()) throw ConfigError("no kubeconfig: neither $KUBECONFIG nor $HOME is set");
  return KubeconfigLoader(file).load(context);
}

Config parseKubeconfig(std::string_view text, const std::string& path, const std::string& context) {
  return KubeconfigLoader(path).load(text, context);
}

Config inClusterConfig(const std::string& saDir) {
  std::string host = getEnv("KUBERNETES_SERVICE_HOST");
  std::string port = getEnv("KUBERNETES_SERVICE_PORT");
  if (host.empty() || port.empty()) {
    throw ConfigError(
        "in-cluster config: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set "
        "(not running in a pod)");
  }
  if (host.find(':') != std::string::npos && !host.starts_with('[')) host = "[" + host + "]";

  Config cfg;
  cfg.server = "https://" + host + ":" + port;
  cfg.tokenFile = (fs::path(saDir) / "token").string();
  ReadResult token = readFile(cfg.tokenFile);
  if (!token.ok) {
    throw ConfigError("in-cluster config: cannot read token " + cfg.tokenFile + ": " + token.error);
  }
  cfg.token = trim(token.data);
  std::string caFile = (fs::path(saDir) / "ca.crt").string();
  ReadResult ca = readFile(caFile);
  if (ca.ok) {
    cfg.caPem = std::move(ca.data);
  } else {
    spdlog::error("in-cluster config: cannot read CA {}: {}; using the system roots", caFile,
                  ca.error);
  }
  return cfg;
}

Config resolveConfig(const std::string& kubeconfigFlag, const std::string& masterFlag,
                     const std::string& saDir) {
  if (kubeconfigFlag.empty() && masterFlag.empty()) {
    std::string inClusterError;
    try {
      return inClusterConfig(saDir);
    } catch (const ConfigError& e) {
      inClusterError = e.what();
    }
    spdlog::warn("neither --kubeconfig nor --master given and {}; trying the default kubeconfig",
                 inClusterError);
    try {
      return loadKubeconfig("");
    } catch (const ConfigError& e) {
      throw ConfigError("no usable configuration: " + inClusterError + "; " + e.what());
    }
  }

  Config cfg;
  if (!kubeconfigFlag.empty()) cfg = loadKubeconfig(kubeconfigFlag);
  if (!masterFlag.empty()) {
    std::string error;
    auto server = normalizeServer(masterFlag, wantsTls(cfg), error);
    if (!server) throw ConfigError("--master \"" + masterFlag + "\": " + error);
    cfg.server = *server;
  }
  return cfg;
}

TokenSource::TokenSource(std::string staticToken, std::string tokenFile, Clock clock)
    : clock_(clock ? std::move(clock) : Clock([] { return std::chrono::steady_clock::now(); })),
      tokenFile_(std::move(tokenFile)),
      token_(std::move(staticToken)) {}

TokenSource::TokenSource(const Config& config, Clock clock)
    : TokenSource(config.token, config.tokenFile, std::move(clock)) {}

std::string TokenSource::token() {
  std::lock_guard lock(mu_);
  if (tokenFile_.empty()) return token_;
  auto now = clock_();
  if (!stale_ && now - lastAttempt_ < kRefreshPeriod) return token_;
  stale_ = false;
  lastAttempt_ = now;
  ReadResult r = readFile(tokenFile_);
  std::string fresh = r.ok ? trim(r.data) : std::string();
  if (!fresh.empty()) {
    token_ = std::move(fresh);
  } else {
    spdlog::error("bearer token file {}: {}; keeping the previous token", tokenFile_,
                  r.ok ? "empty" : r.error);
  }
  return token_;
}

void TokenSource::invalidate() {
  std::lock_guard lock(mu_);
  stale_ = true;
}

}  // namespace ksched::client
