// The HTTPS port's access control as pure logic: which reviews are asked, what is cached for how
// long, and what each caller is answered. The reviews themselves are counted by a fake; the
// real TokenReview/SubjectAccessReview path runs in tests/integration/secure_serving_test.cc.
#include "server/access.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>

#include "config/command_line.h"
#include "server/server.h"

namespace ksched::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Review {
  std::string user;
  std::vector<std::string> groups;
  std::string verb;
  std::string path;
};

class CountingReviewer : public Reviewer {
 public:
  std::map<std::string, UserInfo> tokens;  // valid tokens
  std::set<std::string> allowedUsers;
  bool down = false;
  int tokenCalls = 0;
  std::vector<Review> accessCalls;

  std::optional<UserInfo> reviewToken(const std::string& token, std::string& why) override {
    ++tokenCalls;
    if (down) throw ReviewError("connection refused");
    auto it = tokens.find(token);
    if (it == tokens.end()) {
      why = "invalid bearer token";
      return std::nullopt;
    }
    return it->second;
  }
  Decision reviewAccess(const UserInfo& user, const std::string& verb,
                        const std::string& path) override {
    accessCalls.push_back({user.name, user.groups, verb, path});
    if (down) throw ReviewError("connection refused");
    return {allowedUsers.count(user.name) > 0, ""};
  }
};

struct Fixture {
  std::shared_ptr<CountingReviewer> reviewer = std::make_shared<CountingReviewer>();
  std::chrono::steady_clock::time_point now{std::chrono::seconds(1000)};
  config::ServingOptions options;
  std::unique_ptr<AccessControl> access;

  Fixture() {
    reviewer->tokens["alice-token"] = UserInfo{"alice", "u-1", {"team-a"}, {}};
    reviewer->tokens["root-token"] = UserInfo{"root", "", {"system:masters"}, {}};
    reviewer->tokens["bob-token"] = UserInfo{"bob", "", {}, {}};
    reviewer->allowedUsers = {"alice"};
  }
  AccessControl& make() {
    access = std::make_unique<AccessControl>(options, ClientCertSettings{}, reviewer,
                                             [this] { return now; });
    return *access;
  }
  AccessControl::Verdict get(const std::string& path, const std::string& token = "") {
    httplib::Request req;
    req.method = "GET";
    req.path = path;
    if (!token.empty()) req.headers.emplace("Authorization", "Bearer " + token);
    return access->check(req, nullptr);
  }
};

TEST(AccessControl, AnonymousCallerIsAskedAboutAndForbiddenAsUpstreamWords) {
  Fixture f;
  f.make();
  auto v = f.get("/metrics");
  EXPECT_EQ(v.status, 403);
  EXPECT_EQ(v.user, "system:anonymous");
  auto body = nlohmann::json::parse(v.body);
  EXPECT_EQ(body["message"], R"(forbidden: User "system:anonymous" cannot get path "/metrics")");
  EXPECT_EQ(body["reason"], "Forbidden");
  EXPECT_EQ(body["code"], 403);
  ASSERT_EQ(f.reviewer->accessCalls.size(), 1u);
  EXPECT_EQ(f.reviewer->accessCalls[0].user, "system:anonymous");
  EXPECT_THAT(f.reviewer->accessCalls[0].groups, ElementsAre("system:unauthenticated"));
  EXPECT_EQ(f.reviewer->accessCalls[0].verb, "get");
  EXPECT_EQ(f.reviewer->tokenCalls, 0);
}

TEST(AccessControl, HealthPathsAnswerAnyoneWithoutAReview) {
  Fixture f;
  f.make();
  for (const char* p : {"/healthz", "/readyz", "/livez"}) EXPECT_EQ(f.get(p).status, 200) << p;
  EXPECT_EQ(f.get("/healthz/extra").status, 403) << "exact match only";
  EXPECT_EQ(f.reviewer->accessCalls.size(), 1u);
}

TEST(AccessControl, AlwaysAllowPathsWithTrailingStarMatchAPrefix) {
  Fixture f;
  f.options.authorization.alwaysAllowPaths = {"/debug/*", "/metrics"};
  f.make();
  EXPECT_EQ(f.get("/debug/explain").status, 200);
  EXPECT_EQ(f.get("/metrics").status, 200);
  EXPECT_EQ(f.get("/healthz").status, 403) << "the default list was replaced";
}

TEST(AccessControl, ValidTokenWithRightsIsServedAndBothReviewsAreCachedForTenSeconds) {
  Fixture f;
  f.make();
  for (int i = 0; i < 10; ++i) EXPECT_EQ(f.get("/metrics", "alice-token").status, 200);
  EXPECT_EQ(f.reviewer->tokenCalls, 1);
  ASSERT_EQ(f.reviewer->accessCalls.size(), 1u);
  EXPECT_EQ(f.reviewer->accessCalls[0].user, "alice");
  EXPECT_THAT(f.reviewer->accessCalls[0].groups, ElementsAre("team-a", "system:authenticated"));
  EXPECT_EQ(f.access->tokenReviews(), 1u);
  EXPECT_EQ(f.access->accessReviews(), 1u);

  f.now += std::chrono::seconds(9);
  EXPECT_EQ(f.get("/metrics", "alice-token").status, 200);
  EXPECT_EQ(f.reviewer->tokenCalls, 1);
  f.now += std::chrono::seconds(2);
  EXPECT_EQ(f.get("/metrics", "alice-token").status, 200);
  EXPECT_EQ(f.reviewer->tokenCalls, 2);
  EXPECT_EQ(f.reviewer->accessCalls.size(), 2u);

  EXPECT_EQ(f.get("/configz", "alice-token").status, 200);
  EXPECT_EQ(f.reviewer->accessCalls.size(), 3u) << "each path is its own review";
}

TEST(AccessControl, TokenWithoutRightsIsForbiddenByName) {
  Fixture f;
  f.make();
  auto v = f.get("/configz", "bob-token");
  EXPECT_EQ(v.status, 403);
  EXPECT_THAT(v.body, HasSubstr(R"(User \"bob\" cannot get path \"/configz\")"));
}

TEST(AccessControl, DeniedAnswersAreCachedForTheirOwnTtl) {
  Fixture f;
  f.options.authorization.denyCacheTTL = std::chrono::seconds(2);
  f.make();
  EXPECT_EQ(f.get("/metrics", "bob-token").status, 403);
  EXPECT_EQ(f.get("/metrics", "bob-token").status, 403);
  EXPECT_EQ(f.reviewer->accessCalls.size(), 1u);
  f.now += std::chrono::seconds(3);
  f.reviewer->allowedUsers.insert("bob");
  EXPECT_EQ(f.get("/metrics", "bob-token").status, 200) << "a new grant counts after the TTL";
  EXPECT_EQ(f.reviewer->accessCalls.size(), 2u);
}

TEST(AccessControl, InvalidTokenIs401EvenOnHealthPathsAndTheRejectionIsCached) {
  Fixture f;
  f.make();
  auto v = f.get("/metrics", "stolen");
  EXPECT_EQ(v.status, 401);
  EXPECT_EQ(nlohmann::json::parse(v.body)["message"], "Unauthorized");
  EXPECT_EQ(f.get("/healthz", "stolen").status, 401);
  EXPECT_EQ(f.reviewer->tokenCalls, 1);
  EXPECT_TRUE(f.reviewer->accessCalls.empty());
}

TEST(AccessControl, MastersNeedNoAccessReview) {
  Fixture f;
  f.make();
  EXPECT_EQ(f.get("/configz", "root-token").status, 200);
  EXPECT_TRUE(f.reviewer->accessCalls.empty());
}

TEST(AccessControl, ApiserverDownMeans401ForTokensAnd503ForAuthorizationAndNothingCached) {
  Fixture f;
  f.make();
  f.reviewer->down = true;
  EXPECT_EQ(f.get("/metrics", "alice-token").status, 401);
  EXPECT_EQ(f.get("/metrics", "alice-token").status, 401);
  EXPECT_EQ(f.reviewer->tokenCalls, 2) << "failures are not cached";
  auto v = f.get("/metrics");
  EXPECT_EQ(v.status, 503);
  EXPECT_EQ(nlohmann::json::parse(v.body)["reason"], "ServiceUnavailable");
  EXPECT_EQ(f.get("/healthz").status, 200) << "health checks do not depend on the apiserver";
  f.reviewer->down = false;
  EXPECT_EQ(f.get("/metrics", "alice-token").status, 200);
}

TEST(AccessControl, CaBundleWithoutCertificatesIsAnError) {
  Fixture f;
  ClientCertSettings certs;
  certs.clientCAPem = "not a certificate";
  EXPECT_THROW(AccessControl(f.options, certs, f.reviewer), ReviewError);
  EXPECT_FALSE(f.make().wantsClientCertificates());
}

TEST(ServingFlags, AuthenticationAndAuthorizationFlagsAsKubeScheduler) {
  auto p = config::parseCommandLine(
      {"--authentication-kubeconfig=/a.kubeconfig", "--authorization-kubeconfig", "/z.kubeconfig",
       "--client-ca-file=/ca.crt", "--authentication-skip-lookup",
       "--authentication-tolerate-lookup-failure=false",
       "--authorization-always-allow-paths=/healthz,/debug/*",
       "--authorization-always-allow-paths=/metrics", "--requestheader-allowed-names=front-proxy",
       "--authentication-token-webhook-cache-ttl=30s",
       "--authorization-webhook-cache-unauthorized-ttl=1s", "--tls-min-version=VersionTLS13",
       "--tls-cipher-suites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384"});
  ASSERT_TRUE(p.errors.empty()) << p.errors[0];
  const auto& s = p.flags.serving;
  EXPECT_EQ(s.authentication.kubeconfig, "/a.kubeconfig");
  EXPECT_EQ(s.authorization.kubeconfig, "/z.kubeconfig");
  EXPECT_EQ(s.authentication.clientCAFile, "/ca.crt");
  EXPECT_TRUE(s.authentication.skipLookup);
  EXPECT_FALSE(s.authentication.tolerateLookupFailure);
  EXPECT_THAT(s.authorization.alwaysAllowPaths, ElementsAre("/healthz", "/debug/*", "/metrics"));
  EXPECT_THAT(s.authentication.requestheaderAllowedNames, ElementsAre("front-proxy"));
  EXPECT_THAT(s.authentication.requestheaderUsernameHeaders, ElementsAre("x-remote-user"));
  EXPECT_EQ(s.authentication.tokenCacheTTL, std::chrono::seconds(30));
  EXPECT_EQ(s.authorization.denyCacheTTL, std::chrono::seconds(1));
  EXPECT_EQ(s.authorization.allowCacheTTL, std::chrono::seconds(10));
  EXPECT_EQ(s.tlsMinVersion, "VersionTLS13");
  EXPECT_EQ(checkTlsOptions(s), "");

  config::ServingOptions defaults;
  EXPECT_THAT(defaults.authorization.alwaysAllowPaths,
              ElementsAre("/healthz", "/readyz", "/livez"));
  EXPECT_TRUE(defaults.authentication.tolerateLookupFailure);
}

TEST(ServingFlags, BadValuesNameTheFlag) {
  auto p = config::parseCommandLine(
      {"--tls-min-version=VersionSSL3", "--authorization-always-allow-paths=/a*b",
       "--authentication-skip-lookup=maybe", "--authorization-webhook-cache-authorized-ttl=soon"});
  EXPECT_THAT(p.errors,
              ElementsAre("--tls-min-version: unknown TLS version \"VersionSSL3\" (allowed: "
                          "VersionTLS10, VersionTLS11, VersionTLS12, VersionTLS13)",
                          "--authentication-skip-lookup: \"maybe\" is not a boolean",
                          "--authorization-webhook-cache-authorized-ttl: invalid duration \"soon\"",
                          "--authorization-always-allow-paths: \"/a*b\": only a trailing * is "
                          "allowed"));
}

TEST(ServingFlags, CipherSuitesByIanaName) {
  config::ServingOptions o;
  o.tlsCipherSuites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                       "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"};
  EXPECT_EQ(checkTlsOptions(o), "");
  o.tlsCipherSuites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_FANCY_WITH_NOTHING"};
  EXPECT_EQ(checkTlsOptions(o),
            "--tls-cipher-suites: \"TLS_FANCY_WITH_NOTHING\" is not a supported cipher suite");
  o.tlsCipherSuites = {"TLS_AES_128_GCM_SHA256"};
  EXPECT_THAT(checkTlsOptions(o), HasSubstr("no TLS 1.2 suite given"));
}

}  // namespace
}  // namespace ksched::server
