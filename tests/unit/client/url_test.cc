#include "client/url.h"

#include <gtest/gtest.h>

namespace ksched::client {
namespace {

TEST(ParseHttpUrlTest, Table) {
  struct Case {
    std::string url;
    bool ok;
    bool https;
    std::string host;
    int port;
    std::string path;
    std::string error;
  };
  const Case cases[] = {
      {"https://10.0.0.1:6443", true, true, "10.0.0.1", 6443, "", ""},
      {"https://kubernetes.default.svc", true, true, "kubernetes.default.svc", 443, "", ""},
      {"http://127.0.0.1:8080/", true, false, "127.0.0.1", 8080, "", ""},
      {"http://ext.example/scheduler/", true, false, "ext.example", 80, "/scheduler", ""},
      {"https://[::1]:16443/a/b//", true, true, "::1", 16443, "/a/b", ""},
      {"https://[fd00::1]", true, true, "fd00::1", 443, "", ""},
      {"ftp://e/x", false, false, "", 0, "", "unsupported protocol scheme \"ftp\""},
      {"10.0.0.1:6443", false, false, "", 0, "", "unsupported protocol scheme \"\""},
      {"https://[::1:6443", false, false, "", 0, "", "bad IPv6 host"},
      {"https://h:http", false, false, "", 0, "", "bad port \"http\""},
      {"https://h:0", false, false, "", 0, "", "bad port \"0\""},
      {"https://h:65536", false, false, "", 0, "", "bad port \"65536\""},
      {"https://:443/x", false, false, "", 0, "", "no host"},
      {"http://", false, false, "", 0, "", "no host"},
  };
  for (const auto& c : cases) {
    std::string error;
    auto u = parseHttpUrl(c.url, error);
    ASSERT_EQ(u.has_value(), c.ok) << c.url << ": " << error;
    if (!c.ok) {
      EXPECT_EQ(error, c.error) << c.url;
      continue;
    }
    EXPECT_EQ(u->https, c.https) << c.url;
    EXPECT_EQ(u->host, c.host) << c.url;
    EXPECT_EQ(u->port, c.port) << c.url;
    EXPECT_EQ(u->path, c.path) << c.url;
  }
}

}  // namespace
}  // namespace ksched::client
