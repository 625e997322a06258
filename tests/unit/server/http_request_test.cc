#include "server/http_request.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace ksched::server {
namespace {

TEST(HttpRequestTest, ParsesRequestLineHeadersQueryAndBody) {
  httplib::Request r;
  const std::string in =
      "POST /debug/explain?namespace=a%20b&name=p HTTP/1.1\r\nHost: x\r\n"
      "Authorization:  Bearer t \r\nX-Remote-Group: g1\r\nx-remote-group: g2\r\n"
      "Content-Length: 3\r\n\r\nabcGET /next";
  const ParseOutcome o = parseRequest(in, r);
  ASSERT_EQ(o.kind, ParseOutcome::kComplete);
  EXPECT_EQ(o.consumed, in.size() - std::string("GET /next").size());
  EXPECT_TRUE(o.keepAlive);
  EXPECT_EQ(r.method, "POST");
  EXPECT_EQ(r.path, "/debug/explain");
  EXPECT_EQ(r.get_param_value("namespace"), "a b");
  EXPECT_EQ(r.get_param_value("name"), "p");
  EXPECT_EQ(r.get_header_value("authorization"), "Bearer t");
  EXPECT_EQ(r.get_header_value_count("X-Remote-Group"), 2u);
  EXPECT_EQ(r.body, "abc");
}

TEST(HttpRequestTest, WaitsForTheWholeRequest) {
  httplib::Request r;
  EXPECT_EQ(parseRequest("", r).kind, ParseOutcome::kIncomplete);
  EXPECT_EQ(parseRequest("GET / HTTP/1.1\r\nHost: x\r\n", r).kind, ParseOutcome::kIncomplete);
  EXPECT_EQ(parseRequest("GET / HTTP/1.1\r\nContent-Length: 5\r\n\r\nab", r).kind,
            ParseOutcome::kIncomplete);
}

TEST(HttpRequestTest, KeepAliveFollowsTheVersionAndConnection) {
  httplib::Request r;
  EXPECT_FALSE(parseRequest("GET / HTTP/1.1\r\nConnection: Close\r\n\r\n", r).keepAlive);
  EXPECT_FALSE(parseRequest("GET / HTTP/1.0\r\n\r\n", r).keepAlive);
  EXPECT_TRUE(parseRequest("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n", r).keepAlive);
  EXPECT_FALSE(parseRequest("GET / HTTP/1.1\r\nConnection: te, close\r\n\r\n", r).keepAlive);
}

TEST(HttpRequestTest, RejectsMalformedInputWithItsStatus) {
  struct Case {
    std::string in;
    int status;
  };
  const Case cases[] = {
      {"\r\n\r\n", 400},
      {"GET\r\n\r\n", 400},
      {"GET  / HTTP/1.1\r\n\r\n", 400},
      {"G(T / HTTP/1.1\r\n\r\n", 400},
      {"GET x HTTP/1.1\r\n\r\n", 400},
      {"GET /a\x01 HTTP/1.1\r\n\r\n", 400},
      {"GET / HTTP/3\r\n\r\n", 505},
      {"GET / FTP/1.0\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nNoColon\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nBad Name: b\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nA: b\x01\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\nx", 400},
      {"GET / HTTP/1.1\r\nContent-Length: 2097152\r\n\r\n", 413},
      {"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", 501},
      {"GET / HTTP/1.1\r\nA: " + std::string(kMaxHeaderBytes, 'x') + "\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nA: " + std::string(kMaxHeaderBytes, 'x'), 431},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.in.substr(0, 60));
    httplib::Request r;
    const ParseOutcome o = parseRequest(c.in, r);
    EXPECT_EQ(o.kind, ParseOutcome::kError);
    EXPECT_EQ(o.errorStatus, c.status);
    EXPECT_FALSE(o.errorText.empty());
  }
  std::string many = "GET / HTTP/1.1\r\n";
  for (size_t i = 0; i <= kMaxHeaderFields; ++i) many += "A: b\r\n";
  httplib::Request r;
  EXPECT_EQ(parseRequest(many + "\r\n", r).errorStatus, 431);
}

// Bytes that are not UTF-8 (raw or percent-encoded) come out valid: they end up in JSON.
TEST(HttpRequestTest, TextThatIsNotUtf8IsMadeValid) {
  httplib::Request r;
  const ParseOutcome o =
      parseRequest("GET /a%FF\xFE?name=%C0x HTTP/1.1\r\nX-Remote-User: u\xFF\r\n\r\n", r);
  ASSERT_EQ(o.kind, ParseOutcome::kComplete);
  EXPECT_EQ(r.path, "/a\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(r.get_param_value("name"), "\xEF\xBF\xBDx");
  EXPECT_EQ(r.get_header_value("X-Remote-User"), "u\xEF\xBF\xBD");
  EXPECT_NO_THROW((void)nlohmann::json({{"p", r.path}, {"t", r.target}}).dump());
}

TEST(HttpRequestTest, SerializesAnswers) {
  httplib::Response res;
  res.status = 503;
  res.set_content("busy", "text/plain");
  EXPECT_EQ(serializeResponse(res, false, false),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: "
            "4\r\nConnection: close\r\n\r\nbusy");
  EXPECT_EQ(serializeResponse(res, true, true),
            "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: "
            "4\r\nConnection: keep-alive\r\n\r\n");
}

}  // namespace
}  // namespace ksched::server
