// The HTTPS port's pure pieces: health check texts, serving certificates, a disabled port.
#include "server/server.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <filesystem>
#include <string>

#include "config/command_line.h"

namespace ksched {
namespace {

TEST(ServerHealth, OkOrUpstreamFailureText) {
  auto ok = server::healthCheck("livez", "");
  EXPECT_EQ(ok.status, 200);
  EXPECT_EQ(ok.body, "ok");
  auto bad = server::healthCheck("livez", "lease not renewed for 30s");
  EXPECT_EQ(bad.status, 500);
  EXPECT_EQ(bad.body,
            "[+]ping ok\n[-]leaderElection failed: reason withheld\nlivez check failed\n");
  EXPECT_EQ(server::healthCheck("healthz", "x").body,
            "[+]ping ok\n[-]leaderElection failed: reason withheld\nhealthz check failed\n");
}

TEST(ServerCert, SelfSignedForLocalhost) {
  const auto pair = server::generateSelfSignedCert("localhost");
  BIO* bio = BIO_new_mem_buf(pair.certPem.data(), static_cast<int>(pair.certPem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(cert, nullptr);
  EXPECT_EQ(X509_check_host(cert, "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_ip_asc(cert, "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_host(cert, "example.com", 0, 0, nullptr), 0);
  bio = BIO_new_mem_buf(pair.keyPem.data(), static_cast<int>(pair.keyPem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  ASSERT_NE(key, nullptr);
  EXPECT_EQ(X509_check_private_key(cert, key), 1);
  EXPECT_EQ(X509_verify(cert, key), 1);  // self-signed
  EVP_PKEY_free(key);
  X509_free(cert);
}

TEST(ServerCert, CertDirPairIsGeneratedOnceThenReused) {
  char tmpl[] = "/tmp/ksched-certdir-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  config::ServingOptions o;
  o.certDir = std::string(tmpl) + "/sub";
  const auto first = server::resolveServingCert(o);
  const auto again = server::resolveServingCert(o);
  EXPECT_EQ(first.certPem, again.certPem);
  EXPECT_EQ(first.keyPem, again.keyPem);
  o.tlsCertFile = o.certDir + "/kube-scheduler.crt";
  EXPECT_THROW((void)server::resolveServingCert(o), server::ServerError);
  o.tlsPrivateKeyFile = o.certDir + "/kube-scheduler.key";
  EXPECT_EQ(server::resolveServingCert(o).certPem, first.certPem);
  std::filesystem::remove_all(tmpl);
}

TEST(ServerStart, PortZeroDisablesServing) {
  config::ServingOptions o;
  o.securePort = 0;
  EXPECT_EQ(server::Server::start(o, {}), nullptr);
  o.securePort = 70000;
  EXPECT_THROW((void)server::Server::start(o, {}), server::ServerError);
}

}  // namespace
}  // namespace ksched
