// The HTTPS port as an operator meets it: ksched run as a daemon against the real apiserver,
// called with no credentials, bad and good ServiceAccount tokens, client certificates signed by
// the cluster CA (looked up in kube-system/extension-apiserver-authentication) and not; reviews
// counted on the apiserver's own metrics.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cluster.h"
#include "daemon.h"
#include "deploy.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const std::string kNs = "secure-serving";

struct Answer {
  int status = -1;
  std::string body;
  [[nodiscard]] std::string message() const {
    auto j = json::parse(body, nullptr, false);
    return j.is_object() ? j.value("message", "") : body;
  }
};

struct Caller {
  std::string token;
  std::string certFile;
  std::string keyFile;
};

Answer get(int port, const std::string& path, const Caller& who = {}) {
  std::unique_ptr<httplib::SSLClient> c;
  if (who.certFile.empty()) {
    c = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
  } else {
    c = std::make_unique<httplib::SSLClient>("127.0.0.1", port, who.certFile, who.keyFile);
  }
  c->enable_server_certificate_verification(false);
  c->set_connection_timeout(5);
  c->set_read_timeout(30);
  if (!who.token.empty()) c->set_bearer_token_auth(who.token.c_str());
  auto res = c->Get(path.c_str());
  if (!res) return {-1, httplib::to_string(res.error())};
  return {res->status, res->body};
}

std::string serviceAccountToken(const std::string& sa) {
  return ksched::testing::serviceAccountToken(kNs, sa);
}

// get on /metrics for the SA `scraper` and the user ksched-test-alice; nothing else.
void grantMetricsReaders() {
  createOrIgnore(
      TestCluster::get().admin(), "/apis/rbac.authorization.k8s.io/v1/clusterroles",
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRole"},
       {"metadata", {{"name", "ksched-test-metrics-reader"}}},
       {"rules", json::array({{{"nonResourceURLs", {"/metrics"}}, {"verbs", {"get"}}}})}});
  createOrIgnore(
      TestCluster::get().admin(), "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
      {{"apiVersion", "rbac.authorization.k8s.io/v1"},
       {"kind", "ClusterRoleBinding"},
       {"metadata", {{"name", "ksched-test-metrics-reader"}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"},
         {"kind", "ClusterRole"},
         {"name", "ksched-test-metrics-reader"}}},
       {"subjects",
        json::array({{{"kind", "ServiceAccount"}, {"name", "scraper"}, {"namespace", kNs}},
                     {{"kind", "ServiceAccount"}, {"name", "counter"}, {"namespace", kNs}},
                     {{"kind", "User"},
                      {"apiGroup", "rbac.authorization.k8s.io"},
                      {"name", "ksched-test-alice"}}})}});
}

// POSTs of `resource` (tokenreviews, subjectaccessreviews) the apiserver has answered.
double reviewsServed(const std::string& resource) {
  auto& cluster = TestCluster::get();
  httplib::SSLClient c("127.0.0.1", cluster.apiserverPort());
  c.set_ca_cert_path((cluster.dir() + "/pki/ca.crt").c_str());
  c.set_bearer_token_auth(cluster.config("admin").token.c_str());
  auto res = c.Get("/metrics");
  if (!res || res->status != 200) return -1;
  double total = 0;
  std::istringstream in(res->body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("apiserver_request_total{", 0) != 0) continue;
    if (line.find("resource=\"" + resource + "\"") == std::string::npos) continue;
    if (line.find("verb=\"POST\"") == std::string::npos) continue;
    total += std::stod(line.substr(line.rfind(' ') + 1));
  }
  return total;
}

class SecureServing : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ensureNamespace(TestCluster::get().admin(), kNs);
    grantMetricsReaders();
  }

  void start(std::vector<std::string> extra = {}) {
    port_ = freeLoopbackPort();
    std::vector<std::string> args = {"--kubeconfig", TestCluster::get().kubeconfig("scheduler"),
                                     "--leader-elect=false", "--bind-address=127.0.0.1",
                                     "--secure-port=" + std::to_string(port_)};
    args.insert(args.end(), extra.begin(), extra.end());
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    daemon_ = std::make_unique<Daemon>(logPath("secure-serving-" + test), args);
    ASSERT_TRUE(daemon_->waitForLog("synced:", 60s)) << daemon_->log();
  }
  void TearDown() override {
    if (daemon_) {
      EXPECT_EQ(daemon_->signalAndWait(SIGTERM), 0) << daemon_->log();
    }
  }

  int port_ = 0;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(SecureServing, NobodyWithoutRightsReadsAnythingButTheHealthChecks) {
  start();
  for (const char* path : {"/metrics", "/configz", "/debug/pprof/", "/debug/explain"}) {
    Answer a = get(port_, path);
    EXPECT_EQ(a.status, 403) << path << ": " << a.body;
    EXPECT_EQ(a.message(),
              std::string("forbidden: User \"system:anonymous\" cannot get path \"") + path + "\"");
  }
  for (const char* path : {"/healthz", "/readyz", "/livez"}) {
    Answer a = get(port_, path);
    EXPECT_EQ(a.status, 200) << path << ": " << a.body;
    EXPECT_EQ(a.body, "ok");
  }

  Answer bad = get(port_, "/metrics", {.token = "not-a-token"});
  EXPECT_EQ(bad.status, 401);
  EXPECT_EQ(bad.message(), "Unauthorized");

  const std::string nobody = serviceAccountToken("nobody");
  Answer forbidden = get(port_, "/metrics", {.token = nobody});
  EXPECT_EQ(forbidden.status, 403);
  EXPECT_EQ(forbidden.message(), "forbidden: User \"system:serviceaccount:" + kNs +
                                     ":nobody\" cannot get path \"/metrics\"");
  EXPECT_EQ(daemon_->log().find(nobody), std::string::npos) << "tokens are never logged";
}

TEST_F(SecureServing, ServiceAccountGrantedMetricsReadsMetricsOnly) {
  start();
  const std::string scraper = serviceAccountToken("scraper");
  Answer m = get(port_, "/metrics", {.token = scraper});
  EXPECT_EQ(m.status, 200) << m.body;
  EXPECT_NE(m.body.find("scheduler_pending_pods"), std::string::npos);
  Answer c = get(port_, "/configz", {.token = scraper});
  EXPECT_EQ(c.status, 403);
  EXPECT_EQ(c.message(), "forbidden: User \"system:serviceaccount:" + kNs +
                             ":scraper\" cannot get path \"/configz\"");
  Answer admin = get(port_, "/configz", {.token = TestCluster::get().config("admin").token});
  EXPECT_EQ(admin.status, 200) << "system:masters reads everything";
  EXPECT_NE(admin.body.find("componentconfig"), std::string::npos);
}

// /configz of a daemon running against the apiserver shows the default profile of 1.37:
// DynamicResources before DefaultPreemption and NodeDeclaredFeatures (its gate is on).
TEST_F(SecureServing, ConfigzShowsTheDefaultProfileOf137) {
  start();
  Answer c = get(port_, "/configz", {.token = TestCluster::get().config("admin").token});
  ASSERT_EQ(c.status, 200) << c.body;
  const json j = json::parse(c.body);
  std::vector<std::string> names;
  for (const auto& p :
       j.at("componentconfig").at("profiles").at(0).at("plugins").at("multiPoint").at("enabled")) {
    names.push_back(p.at("name"));
  }
  auto at = [&names](const std::string& n) { return std::find(names.begin(), names.end(), n); };
  ASSERT_NE(at("NodeDeclaredFeatures"), names.end()) << c.body;
  ASSERT_NE(at("DynamicResources"), names.end()) << c.body;
  EXPECT_EQ(at("DynamicResources") + 1, at("DefaultPreemption")) << c.body;
  EXPECT_EQ(at("EBSLimits"), names.end()) << c.body;
}

TEST_F(SecureServing, ClientCertificatesFromTheClusterCaAuthenticateAsTheirCommonName) {
  auto& cluster = TestCluster::get();
  cluster.ctl("identity ksched-test-alice /O=ksched-test/CN=ksched-test-alice");
  const std::string pki = cluster.dir() + "/pki/";
  start();
  ASSERT_TRUE(daemon_->logHas("client CA set")) << daemon_->log();

  const Caller alice{"", pki + "ksched-test-alice.crt", pki + "ksched-test-alice.key"};
  EXPECT_EQ(get(port_, "/metrics", alice).status, 200);
  Answer c = get(port_, "/configz", alice);
  EXPECT_EQ(c.status, 403);
  EXPECT_EQ(c.message(), "forbidden: User \"ksched-test-alice\" cannot get path \"/configz\"");
  Answer nobody = get(port_, "/metrics", {"", pki + "nobody.crt", pki + "nobody.key"});
  EXPECT_EQ(nobody.message(), "forbidden: User \"ksched:nobody\" cannot get path \"/metrics\"");

  // A certificate no cluster CA signed is a failed credential, not an anonymous caller.
  const fs::path self = fs::path(cluster.dir()) / "self-signed";
  fs::create_directories(self);
  runCommand(
      "openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=ksched-test-alice "
      "-keyout " +
      (self / "k.pem").string() + " -out " + (self / "c.pem").string() + " 2>/dev/null");
  Answer forged =
      get(port_, "/metrics", {"", (self / "c.pem").string(), (self / "k.pem").string()});
  EXPECT_EQ(forged.status, 401) << forged.body;
}

TEST_F(SecureServing, AnAuthenticatingProxyNamesTheUserInRequestHeaders) {
  auto& cluster = TestCluster::get();
  const std::string pki = cluster.dir() + "/pki/";
  cluster.ctl("identity ksched-test-proxy /CN=front-proxy");
  cluster.ctl("identity ksched-test-alice /O=ksched-test/CN=ksched-test-alice");
  start({"--requestheader-client-ca-file=" + pki + "ca.crt",
         "--requestheader-allowed-names=front-proxy"});

  auto viaProxy = [&](const std::string& cert, const std::string& path) {
    httplib::SSLClient c("127.0.0.1", port_, pki + cert + ".crt", pki + cert + ".key");
    c.enable_server_certificate_verification(false);
    auto res = c.Get(path.c_str(), {{"X-Remote-User", "ksched-test-alice"},
                                    {"X-Remote-Group", "proxied"},
                                    {"X-Remote-Extra-Scopes", "metrics"}});
    return res ? Answer{res->status, res->body} : Answer{};
  };
  // The proxy's certificate: the user is whom the headers name (granted /metrics above).
  EXPECT_EQ(viaProxy("ksched-test-proxy", "/metrics").status, 200);
  Answer c = viaProxy("ksched-test-proxy", "/configz");
  EXPECT_EQ(c.message(), "forbidden: User \"ksched-test-alice\" cannot get path \"/configz\"");
  // A certificate with a CN not allowed to proxy cannot set the headers: the headers are not
  // believed, and without a client CA lookup (--requestheader-client-ca-file given, the client
  // CA still comes from the cluster) it is its own user.
  Answer self = viaProxy("nobody", "/metrics");
  EXPECT_EQ(self.message(), "forbidden: User \"ksched:nobody\" cannot get path \"/metrics\"");
}

TEST_F(SecureServing, TenScrapesInARowCostOneTokenReviewAndOneAccessReview) {
  start();
  const std::string token = serviceAccountToken("counter");
  const double tokenReviews = reviewsServed("tokenreviews");
  const double accessReviews = reviewsServed("subjectaccessreviews");
  ASSERT_GE(tokenReviews, 0);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(get(port_, "/metrics", {.token = token}).status, 200);
  EXPECT_EQ(reviewsServed("tokenreviews") - tokenReviews, 1);
  EXPECT_EQ(reviewsServed("subjectaccessreviews") - accessReviews, 1);
}

TEST_F(SecureServing, ApiserverDownAnswers401And503PromptlyAndHealthChecksStillAnswer) {
  start();
  auto& cluster = TestCluster::get();
  const std::string token = serviceAccountToken("scraper");
  cluster.ctl("stop-apiserver");
  struct Restart {
    TestCluster& c;
    ~Restart() { c.ctl("start-apiserver"); }
  } restart{cluster};

  const auto t0 = std::chrono::steady_clock::now();
  Answer a = get(port_, "/metrics", {.token = token});
  EXPECT_EQ(a.status, 401) << a.body;
  Answer anon = get(port_, "/configz");
  EXPECT_EQ(anon.status, 503) << anon.body;
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 25s);
  EXPECT_EQ(get(port_, "/healthz").status, 200);
}

TEST_F(SecureServing, LookupFailureIsFatalOnlyWhenAskedToBe) {
  // A kubeconfig whose user may not read the ConfigMap: tolerated by default ...
  const std::string nobody = TestCluster::get().kubeconfig("nobody");
  start({"--authentication-kubeconfig=" + nobody});
  EXPECT_TRUE(daemon_->logHas("continuing without it")) << daemon_->log();
  EXPECT_EQ(daemon_->signalAndWait(SIGTERM), 0);
  daemon_.reset();

  // ... and the end of start-up with --authentication-tolerate-lookup-failure=false.
  Daemon strict(
      logPath("secure-serving-strict"),
      {"--kubeconfig", TestCluster::get().kubeconfig("scheduler"), "--leader-elect=false",
       "--bind-address=127.0.0.1", "--secure-port=" + std::to_string(freeLoopbackPort()),
       "--authentication-kubeconfig=" + nobody, "--authentication-tolerate-lookup-failure=false"});
  EXPECT_EQ(strict.wait(30s), 1);
  EXPECT_NE(strict.log().find("unable to load configmap kube-system/extension-apiserver-"
                              "authentication"),
            std::string::npos)
      << strict.log();
}

}  // namespace
}  // namespace ksched::testing
