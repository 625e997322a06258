#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "client/config.h"
#include "util/base64.h"

namespace ksched::client {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Sets (or unsets, for nullopt) an environment variable for the scope of a test.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      ::setenv(name, value->c_str(), 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::random_device rd;
    dir_ = fs::temp_directory_path() /
           ("ksched-config-test-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string write(const std::string& name, const std::string& contents) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << contents;
    return p.string();
  }

  // Message of the ConfigError that `f` throws, or "" if it does not throw.
  template <typename F>
  static std::string errorOf(F&& f) {
    try {
      f();
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// "CA PEM" and friends in base64.
constexpr const char* kCaData = "Q0EgUEVN";
constexpr const char* kCertData = "Q0VSVCBQRU0=";
constexpr const char* kKeyData = "S0VZIFBFTQ==";

std::string twoContexts() {
  return std::string(R"(apiVersion: v1
kind: Config
current-context: dev
clusters:
- name: dev-cluster
  cluster:
    server: https://dev.example:6443/
    certificate-authority-data: )") +
         kCaData + R"(
- name: prod-cluster
  cluster:
    server: https://prod.example:443
    insecure-skip-tls-verify: true
    tls-server-name: kubernetes.default
contexts:
- name: dev
  context:
    cluster: dev-cluster
    user: dev-user
    namespace: ignored
- name: prod
  context:
    cluster: prod-cluster
    user: prod-user
users:
- name: dev-user
  user:
    client-certificate-data: )" +
         kCertData + R"(
    client-key-data: )" +
         kKeyData + R"(
- name: prod-user
  user:
    token: " static-token "
)";
}

TEST(Base64Test, DecodesPaddedAndUnpadded) {
  EXPECT_EQ(util::base64Decode("").value(), "");
  EXPECT_EQ(util::base64Decode("QQ==").value(), "A");
  EXPECT_EQ(util::base64Decode("QQ").value(), "A");
  EXPECT_EQ(util::base64Decode("QUI=").value(), "AB");
  EXPECT_EQ(util::base64Decode("QUI").value(), "AB");
  EXPECT_EQ(util::base64Decode("QUJD").value(), "ABC");
  EXPECT_EQ(util::base64Decode("/+8=").value(), "\xff\xef");
}

TEST(Base64Test, IgnoresWhitespace) {
  EXPECT_EQ(util::base64Decode("Q0VS\nVCBQ\r\nRU0=\n").value(), "CERT PEM");
}

TEST(Base64Test, RejectsInvalidInput) {
  EXPECT_FALSE(util::base64Decode("Q").has_value());         // 6 bits cannot form a byte
  EXPECT_FALSE(util::base64Decode("QQ=").has_value());       // wrong padding length
  EXPECT_FALSE(util::base64Decode("QQ===").has_value());     // too much padding
  EXPECT_FALSE(util::base64Decode("QQ==QQ==").has_value());  // data after padding
  EXPECT_FALSE(util::base64Decode("QU*D").has_value());      // not in the alphabet
  EXPECT_FALSE(util::base64Decode("QU-_").has_value());      // URL-safe alphabet is not accepted
}

TEST(Base64Test, EncodesWithPaddingAndRoundTrips) {
  EXPECT_EQ(util::base64Encode(""), "");
  EXPECT_EQ(util::base64Encode("A"), "QQ==");
  EXPECT_EQ(util::base64Encode("AB"), "QUI=");
  EXPECT_EQ(util::base64Encode("ABC"), "QUJD");
  const std::string bytes =
      "\xff\xef"
      "CERT PEM";
  EXPECT_EQ(util::base64Decode(util::base64Encode(bytes)).value(), bytes);
}

using KubeconfigTest = TempDirTest;

TEST_F(KubeconfigTest, UsesCurrentContext) {
  auto path = write("config", twoContexts());
  Config c = loadKubeconfig(path);
  EXPECT_EQ(c.server, "https://dev.example:6443");
  EXPECT_EQ(c.caPem, "CA PEM");
  EXPECT_EQ(c.clientCertPem, "CERT PEM");
  EXPECT_EQ(c.clientKeyPem, "KEY PEM");
  EXPECT_FALSE(c.insecureSkipTLSVerify);
  EXPECT_TRUE(c.token.empty());
  EXPECT_TRUE(c.tokenFile.empty());
  EXPECT_EQ(c.qps, 50);
  EXPECT_EQ(c.burst, 100);
  EXPECT_EQ(c.userAgent, "ksched");
}

TEST_F(KubeconfigTest, NamedContextOverridesCurrentContext) {
  auto path = write("config", twoContexts());
  Config c = loadKubeconfig(path, "prod");
  EXPECT_EQ(c.server, "https://prod.example:443");
  EXPECT_TRUE(c.insecureSkipTLSVerify);
  EXPECT_EQ(c.tlsServerName, "kubernetes.default");
  EXPECT_TRUE(c.caPem.empty());
  EXPECT_TRUE(c.clientCertPem.empty());
  EXPECT_EQ(c.token, "static-token");
}

TEST_F(KubeconfigTest, RelativeFilePathsResolveAgainstKubeconfigDirectory) {
  write("kube/pki/ca.crt", "CA FROM FILE");
  write("kube/pki/client.crt", "CERT FROM FILE");
  auto keyPath = write("elsewhere/client.key", "KEY FROM FILE");
  write("kube/token", "file-token\n");
  auto path = write("kube/config", R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://k:6443
    certificate-authority: pki/ca.crt
contexts:
- name: c
  context: {cluster: k, user: u}
users:
- name: u
  user:
    client-certificate: ./pki/client.crt
    client-key: )" + keyPath + R"(
    tokenFile: token
)");
  Config c = loadKubeconfig(path);
  EXPECT_EQ(c.caPem, "CA FROM FILE");
  EXPECT_EQ(c.clientCertPem, "CERT FROM FILE");
  EXPECT_EQ(c.clientKeyPem, "KEY FROM FILE");
  EXPECT_EQ(c.tokenFile, (dir_ / "kube" / "token").string());
  EXPECT_EQ(c.token, "file-token");
}

TEST_F(KubeconfigTest, DataFieldWinsOverFile) {
  auto path = write("config", std::string(R"(
current-context: c
clusters:
- name: k
  cluster:
    server: https://k:6443
    certificate-authority: does-not-exist.crt
    certificate-authority-data: )") +
                                  kCaData + R"(
contexts:
- name: c
  context: {cluster: k}
)");
  Config c = loadKubeconfig(path);
  EXPECT_EQ(c.caPem, "CA PEM");
}

TEST_F(KubeconfigTest, StaticTokenKeptAlongsideTokenFile) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {token: abc, tokenFile: /nonexistent/token}}]
)");
  Config c = loadKubeconfig(path);
  EXPECT_EQ(c.token, "abc");
  EXPECT_EQ(c.tokenFile, "/nonexistent/token");
}

TEST_F(KubeconfigTest, ContextWithoutUserIsAnonymous) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  Config c = loadKubeconfig(path);
  EXPECT_EQ(c.server, "https://k:6443");
  EXPECT_TRUE(c.token.empty());
  EXPECT_TRUE(c.clientCertPem.empty());
}

TEST_F(KubeconfigTest, ServerWithoutSchemeGetsOne) {
  auto path = write("config", std::string(R"(
current-context: tls
clusters:
- {name: plain, cluster: {server: "127.0.0.1:8080"}}
- {name: secure, cluster: {server: "k:6443//", certificate-authority-data: )") +
                                  kCaData + R"(}}
contexts:
- {name: plain, context: {cluster: plain}}
- {name: tls, context: {cluster: secure}}
)");
  EXPECT_EQ(loadKubeconfig(path).server, "https://k:6443");
  EXPECT_EQ(loadKubeconfig(path, "plain").server, "http://127.0.0.1:8080");
}

// A server the apiserver client cannot use is the kubeconfig's error, naming the field, not
// the client's later (found by tests/fuzz/kubeconfig_fuzz: the daemon made its client of it
// outside any catch).
TEST_F(KubeconfigTest, UnusableServerNamesTheField) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:99999"}}, {name: v6, cluster: {server: "[::1"}}]
contexts: [{name: c, context: {cluster: k}}, {name: d, context: {cluster: v6}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path +
                ": clusters[0].cluster.server: \"https://k:99999\": bad port \"99999\"");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path, "d"); }),
            "kubeconfig " + path + ": clusters[1].cluster.server: \"[::1\": bad IPv6 host");
}

// An entry without its context/cluster/user mapping is an empty one (found by
// tests/fuzz/kubeconfig_fuzz: YAML::InvalidNode escaped the loader).
TEST_F(KubeconfigTest, EntryWithoutItsMappingIsEmpty) {
  auto path = write("config", R"(
current-context: c
clusters:
- name: k
contexts:
- name: c
  cuserxt: {cluster: k}
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": contexts[0].context.cluster: context \"c\" has no cluster");
  auto withCluster = write("config2", R"(
current-context: c
clusters: [{name: k}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: null}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(withCluster); }),
            "kubeconfig " + withCluster + ": cluster \"k\" has no server");
}

TEST_F(KubeconfigTest, JsonKubeconfigIsAccepted) {
  auto path = write("config.json", R"({"current-context": "c",
    "clusters": [{"name": "k", "cluster": {"server": "https://k:6443"}}],
    "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
    "users": [{"name": "u", "user": {"token": "t"}}]})");
  EXPECT_EQ(loadKubeconfig(path).token, "t");
}

TEST_F(KubeconfigTest, MissingContextIsNamed) {
  auto path = write("config", twoContexts());
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path, "foo"); }),
            "kubeconfig " + path + ": context \"foo\" not found");
}

TEST_F(KubeconfigTest, NoCurrentContextIsAnError) {
  auto path = write("config", "clusters: []\n");
  EXPECT_THAT(errorOf([&] { (void)loadKubeconfig(path); }),
              HasSubstr("current-context is not set"));
}

TEST_F(KubeconfigTest, MissingClusterIsNamed) {
  auto path = write("config", R"(
current-context: c
contexts: [{name: c, context: {cluster: gone, user: u}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": cluster \"gone\" not found (used by context \"c\")");
}

TEST_F(KubeconfigTest, MissingUserIsNamed) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: nobody}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": user \"nobody\" not found (used by context \"c\")");
}

TEST_F(KubeconfigTest, ClusterWithoutServerIsAnError) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {insecure-skip-tls-verify: true}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": cluster \"k\" has no server");
}

TEST_F(KubeconfigTest, BadBase64NamesTheField) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users:
- name: u
  user:
    client-certificate-data: "not*base64"
    client-key-data: S0VZ
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": users[0].user.client-certificate-data: invalid base64");
}

TEST_F(KubeconfigTest, YamlSyntaxErrorHasLineAndColumn) {
  auto path = write("config", "current-context: c\nclusters: [\n  {name: k\n");
  std::string err = errorOf([&] { (void)loadKubeconfig(path); });
  EXPECT_THAT(err, HasSubstr("kubeconfig " + path + ": invalid YAML at line"));
  EXPECT_THAT(err, HasSubstr("column"));
}

TEST_F(KubeconfigTest, TextThatIsNotUtf8IsNamed) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {token: "t)"
                              "\xFF"
                              R"("}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": users[0].user.token: invalid UTF-8");
}

TEST_F(KubeconfigTest, MissingFileIsAnError) {
  std::string path = (dir_ / "nope").string();
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": cannot read: No such file or directory");
}

TEST_F(KubeconfigTest, UnreadableReferencedFileIsNamed) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443", certificate-authority: ca.crt}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": clusters[0].cluster.certificate-authority: cannot read " +
                (dir_ / "ca.crt").string() + ": No such file or directory");
}

TEST_F(KubeconfigTest, UnreadableTokenFileWithoutTokenIsAnError) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {tokenFile: missing-token}}]
)");
  EXPECT_THAT(errorOf([&] { (void)loadKubeconfig(path); }),
              HasSubstr("users[0].user.tokenFile: cannot read"));
}

TEST_F(KubeconfigTest, CertificateWithoutKeyIsAnError) {
  auto path = write("config", std::string(R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {client-certificate-data: )") +
                                  kCertData + "}}]\n");
  EXPECT_THAT(errorOf([&] { (void)loadKubeconfig(path); }),
              HasSubstr("users[0].user: client-certificate and client-key must be set together"));
}

TEST_F(KubeconfigTest, WrongTypeNamesTheField) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: {host: k}}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  EXPECT_EQ(errorOf([&] { (void)loadKubeconfig(path); }),
            "kubeconfig " + path + ": clusters[0].cluster.server: expected a string");

  auto path2 = write("config2", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k", insecure-skip-tls-verify: maybe}}]
contexts: [{name: c, context: {cluster: k}}]
)");
  EXPECT_THAT(errorOf([&] { (void)loadKubeconfig(path2); }),
              HasSubstr("clusters[0].cluster.insecure-skip-tls-verify: expected true or false"));
}

TEST_F(KubeconfigTest, ExecPluginIsReportedAsUnsupported) {
  auto path = write("config", R"(
current-context: c
clusters: [{name: k, cluster: {server: "https://k:6443"}}]
contexts: [{name: c, context: {cluster: k, user: u}}]
users: [{name: u, user: {exec: {command: aws}}}]
)");
  EXPECT_THAT(errorOf([&] { (void)loadKubeconfig(path); }),
              HasSubstr("users[0].user.exec: credential plugins are not supported"));
}

TEST_F(KubeconfigTest, EmptyPathUsesFirstExistingKubeconfigFromEnv) {
  auto path = write("config", twoContexts());
  ScopedEnv env("KUBECONFIG", (dir_ / "missing").string() + ":" + path);
  EXPECT_EQ(defaultKubeconfigPath(), path);
  EXPECT_EQ(loadKubeconfig("").server, "https://dev.example:6443");
}

TEST_F(KubeconfigTest, DefaultPathFallsBackToHome) {
  ScopedEnv kc("KUBECONFIG", std::nullopt);
  ScopedEnv home("HOME", dir_.string());
  EXPECT_EQ(defaultKubeconfigPath(), (dir_ / ".kube" / "config").string());
  write(".kube/config", twoContexts());
  EXPECT_EQ(loadKubeconfig("", "prod").token, "static-token");
}

class InClusterTest : public TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    write("sa/token", "sa-token\n");
    write("sa/ca.crt", "SA CA");
  }
  std::string saDir() const { return (dir_ / "sa").string(); }
};

TEST_F(InClusterTest, ReadsServiceAccount) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  Config c = inClusterConfig(saDir());
  EXPECT_EQ(c.server, "https://10.96.0.1:443");
  EXPECT_EQ(c.token, "sa-token");
  EXPECT_EQ(c.tokenFile, (dir_ / "sa" / "token").string());
  EXPECT_EQ(c.caPem, "SA CA");
  EXPECT_FALSE(c.insecureSkipTLSVerify);
}

TEST_F(InClusterTest, Ipv6HostGetsBrackets) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "fd00::1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "6443");
  EXPECT_EQ(inClusterConfig(saDir()).server, "https://[fd00::1]:6443");
}

TEST_F(InClusterTest, NotInClusterIsAnError) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  EXPECT_THAT(errorOf([&] { (void)inClusterConfig(saDir()); }),
              HasSubstr("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"));
}

TEST_F(InClusterTest, MissingTokenIsAnError) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  fs::remove(dir_ / "sa" / "token");
  EXPECT_THAT(errorOf([&] { (void)inClusterConfig(saDir()); }),
              HasSubstr("in-cluster config: cannot read token"));
}

TEST_F(InClusterTest, MissingCaIsNotFatal) {
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  fs::remove(dir_ / "sa" / "ca.crt");
  EXPECT_TRUE(inClusterConfig(saDir()).caPem.empty());
}

class ResolveConfigTest : public InClusterTest {};

TEST_F(ResolveConfigTest, KubeconfigFlagWithMasterOverride) {
  auto path = write("config", twoContexts());
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  Config c = resolveConfig(path, "other.example:6443/", saDir());
  EXPECT_EQ(c.server, "https://other.example:6443");
  EXPECT_EQ(c.caPem, "CA PEM");
  EXPECT_EQ(c.clientCertPem, "CERT PEM");
  EXPECT_EQ(resolveConfig(path, "", saDir()).server, "https://dev.example:6443");
}

TEST_F(ResolveConfigTest, MasterOnlyHasNoCredentials) {
  Config c = resolveConfig("", "127.0.0.1:8080", saDir());
  EXPECT_EQ(c.server, "http://127.0.0.1:8080");
  EXPECT_TRUE(c.token.empty());
  EXPECT_TRUE(c.caPem.empty());
  EXPECT_EQ(errorOf([&] { (void)resolveConfig("", "ftp://x", saDir()); }),
            "--master \"ftp://x\": unsupported protocol scheme \"ftp\"");
  EXPECT_EQ(errorOf([&] { (void)resolveConfig("", "http://h:0", saDir()); }),
            "--master \"http://h:0\": bad port \"0\"");
}

TEST_F(ResolveConfigTest, NoFlagsPrefersInCluster) {
  ScopedEnv kc("KUBECONFIG", write("config", twoContexts()));
  ScopedEnv host("KUBERNETES_SERVICE_HOST", "10.96.0.1");
  ScopedEnv port("KUBERNETES_SERVICE_PORT", "443");
  EXPECT_EQ(resolveConfig("", "", saDir()).server, "https://10.96.0.1:443");
}

TEST_F(ResolveConfigTest, NoFlagsFallsBackToDefaultKubeconfig) {
  ScopedEnv kc("KUBECONFIG", write("config", twoContexts()));
  ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
  EXPECT_EQ(resolveConfig("", "", saDir()).server, "https://dev.example:6443");
}

TEST_F(ResolveConfigTest, NoFlagsAndNothingUsableGivesBothReasons) {
  ScopedEnv kc("KUBECONFIG", std::nullopt);
  ScopedEnv home("HOME", dir_.string());
  ScopedEnv host("KUBERNETES_SERVICE_HOST", std::nullopt);
  std::string err = errorOf([&] { (void)resolveConfig("", "", saDir()); });
  EXPECT_THAT(err, HasSubstr("KUBERNETES_SERVICE_HOST"));
  EXPECT_THAT(err, HasSubstr((dir_ / ".kube" / "config").string() + ": cannot read"));
}

class TokenSourceTest : public TempDirTest {
 protected:
  std::chrono::steady_clock::time_point now_{std::chrono::hours(1)};
  TokenSource::Clock clock() {
    return [this] { return now_; };
  }
};

TEST_F(TokenSourceTest, StaticTokenWithoutFile) {
  TokenSource ts("static", "", clock());
  EXPECT_EQ(ts.token(), "static");
  ts.invalidate();
  EXPECT_EQ(ts.token(), "static");
}

TEST_F(TokenSourceTest, RereadsFileAfterInvalidate) {
  auto file = write("token", "  first\n");
  Config config;
  config.token = "initial";
  config.tokenFile = file;
  TokenSource ts(config, clock());
  EXPECT_EQ(ts.token(), "first");
  write("token", "second\n");
  EXPECT_EQ(ts.token(), "first");  // cached until a minute passes or invalidate()
  ts.invalidate();
  EXPECT_EQ(ts.token(), "second");
}

TEST_F(TokenSourceTest, RereadsFileAfterRefreshPeriod) {
  auto file = write("token", "first");
  TokenSource ts("", file, clock());
  EXPECT_EQ(ts.token(), "first");
  write("token", "second");
  now_ += TokenSource::kRefreshPeriod - std::chrono::seconds(1);
  EXPECT_EQ(ts.token(), "first");
  now_ += std::chrono::seconds(1);
  EXPECT_EQ(ts.token(), "second");
}

TEST_F(TokenSourceTest, KeepsLastGoodTokenWhenFileBreaks) {
  auto file = write("token", "good");
  TokenSource ts("static", file, clock());
  EXPECT_EQ(ts.token(), "good");
  fs::remove(file);
  ts.invalidate();
  EXPECT_EQ(ts.token(), "good");
  write("token", "  \n");
  ts.invalidate();
  EXPECT_EQ(ts.token(), "good");
  write("token", "better");
  EXPECT_EQ(ts.token(), "good");  // a failed attempt also waits for the next period
  now_ += TokenSource::kRefreshPeriod;
  EXPECT_EQ(ts.token(), "better");
}

TEST_F(TokenSourceTest, FallsBackToStaticTokenWhenFileNeverReadable) {
  TokenSource ts("static", (dir_ / "missing").string(), clock());
  EXPECT_EQ(ts.token(), "static");
}

TEST_F(TokenSourceTest, ConcurrentReadersSeeAValidToken) {
  auto file = write("token", "tok");
  TokenSource ts("tok", file);
  std::atomic<int> bad{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = 0; i < 200; ++i) {
          if (i % 50 == 0) ts.invalidate();
          if (ts.token() != "tok") ++bad;
        }
      });
    }
  }
  EXPECT_EQ(bad.load(), 0);
}

}  // namespace
}  // namespace ksched::client
