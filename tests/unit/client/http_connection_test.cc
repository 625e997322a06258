#include "client/http_connection.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace ksched::client {
namespace {

using State = ResponseParser::State;

// Feeds `wire` in pieces of `step` bytes (0: all at once), then the end of the connection if
// `thenClose`.
State feedInPieces(ResponseParser& p, std::string_view wire, size_t step, bool thenClose = false) {
  if (step == 0) step = wire.size();
  for (size_t at = 0; at < wire.size() && p.state() == State::kMore; at += step) {
    p.feed(wire.substr(at, step));
  }
  if (thenClose) p.finish();
  return p.state();
}

// A Content-Length is not an allocation: memory follows the bytes that arrive (found by
// tests/fuzz/http_response_fuzz: a length of 144 GB was reserved at once).
TEST(ResponseParserTest, HugeContentLengthAllocatesAsBytesArrive) {
  ResponseParser p;
  EXPECT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 144444444444\r\n\r\n{}", 0),
            State::kMore);
  EXPECT_EQ(p.answer().body, "{}");
  EXPECT_LE(p.answer().body.capacity(), size_t{16} << 20);
  EXPECT_EQ(p.finish(), State::kError);
  EXPECT_EQ(p.error(), "the connection closed before the answer was complete");
}

TEST(ResponseParserTest, ContentLengthBodyInAnySplit) {
  const std::string wire =
      "HTTP/1.1 201 Created\r\nContent-Type: application/json\r\ncontent-length: 11\r\n"
      "Audit-Id: x\r\n\r\n{\"kind\":1}\n";
  for (size_t step : {0, 1, 2, 7, 40}) {
    ResponseParser p;
    ASSERT_EQ(feedInPieces(p, wire, step), State::kDone) << step << ": " << p.error();
    EXPECT_EQ(p.answer().status, 201);
    EXPECT_EQ(p.answer().body, "{\"kind\":1}\n");
    EXPECT_FALSE(p.answer().closeAfter);
  }
}

TEST(ResponseParserTest, ChunkedBodyWithExtensionsAndTrailersInAnySplit) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5\r\n{\"a\":\r\n"
      "A;ext=1\r\n1234567890\r\n"
      "2 \r\n}\n\r\n"
      "0\r\nX-Trailer: t\r\n\r\n";
  for (size_t step : {0, 1, 3, 16}) {
    ResponseParser p;
    ASSERT_EQ(feedInPieces(p, wire, step), State::kDone) << step << ": " << p.error();
    EXPECT_EQ(p.answer().body, "{\"a\":1234567890}\n");
  }
}

TEST(ResponseParserTest, AnswersWithoutBody) {
  {
    ResponseParser p;
    EXPECT_EQ(feedInPieces(p, "HTTP/1.1 204 No Content\r\n\r\n", 0), State::kDone);
    EXPECT_EQ(p.answer().status, 204);
  }
  {
    ResponseParser p(/*noBody=*/true);  // HEAD: the length describes a body not sent
    EXPECT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 99\r\n\r\n", 0), State::kDone);
    EXPECT_TRUE(p.answer().body.empty());
  }
  {
    ResponseParser p;
    EXPECT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", 0), State::kDone);
  }
}

TEST(ResponseParserTest, BodyUntilTheConnectionEnds) {
  ResponseParser p;
  EXPECT_EQ(feedInPieces(p, "HTTP/1.1 500 Internal Server Error\r\n\r\nboom", 3), State::kMore);
  EXPECT_EQ(p.finish(), State::kDone);
  EXPECT_EQ(p.answer().status, 500);
  EXPECT_EQ(p.answer().body, "boom");
  EXPECT_TRUE(p.answer().closeAfter);
}

TEST(ResponseParserTest, ConnectionCloseRetryAfterAndHttp10) {
  {
    ResponseParser p;
    ASSERT_EQ(feedInPieces(p,
                           "HTTP/1.1 429 Too Many Requests\r\nRETRY-AFTER:  3 \r\n"
                           "Connection: keep-alive, Close\r\nContent-Length: 2\r\n\r\n{}",
                           0),
              State::kDone);
    EXPECT_EQ(p.answer().retryAfter, "3");
    EXPECT_TRUE(p.answer().closeAfter);
  }
  {
    ResponseParser p;
    ASSERT_EQ(feedInPieces(p, "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\n{}", 0), State::kDone);
    EXPECT_TRUE(p.answer().closeAfter);
  }
}

TEST(ResponseParserTest, InterimAnswersAreSkipped) {
  ResponseParser p;
  ASSERT_EQ(
      feedInPieces(p, "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
                   5),
      State::kDone);
  EXPECT_EQ(p.answer().status, 200);
  EXPECT_EQ(p.answer().body, "ok");
}

TEST(ResponseParserTest, BytesAfterTheAnswerEndReuse) {
  ResponseParser p;
  ASSERT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokHTTP/1.1", 0),
            State::kDone);
  EXPECT_EQ(p.answer().body, "ok");
  EXPECT_TRUE(p.answer().closeAfter);
}

TEST(ResponseParserTest, MalformedAnswersSayWhat) {
  const struct {
    std::string wire;
    std::string error;
  } cases[] = {
      {"SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP/1.x status line: \"SSH-2.0-OpenSSH_9.2\""},
      {"HTTP/1.1 2x0 OK\r\n", "bad status code in \"HTTP/1.1 2x0 OK\""},
      {"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n", "bad Content-Length \"-1\""},
      {"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n", "bad Content-Length \"3\""},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n", "unsupported Transfer-Encoding \"gzip\""},
      {"HTTP/1.1 200 OK\r\nno colon here\r\n", "malformed header line \"no colon here\""},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size \"zz\""},
      {"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\nab\r\n",
       "chunk not followed by CRLF"},
      {"HTTP/1.1 101 Switching Protocols\r\n", "unexpected protocol switch (101)"},
      {"HTTP/1.1 200 OK\r\nX: " + std::string(300 * 1024, 'a'),
       "the answer's header is larger than 256 KiB"},
  };
  for (const auto& c : cases) {
    ResponseParser p;
    EXPECT_EQ(feedInPieces(p, c.wire, 0), State::kError) << c.wire.substr(0, 60);
    EXPECT_EQ(p.error(), c.error);
  }
}

TEST(ResponseParserTest, ConnectionEndingEarly) {
  {
    ResponseParser p;
    EXPECT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort", 0, true),
              State::kError);
    EXPECT_EQ(p.error(), "the connection closed before the answer was complete");
    EXPECT_TRUE(p.started());
  }
  {
    ResponseParser p;
    EXPECT_EQ(p.finish(), State::kError);
    EXPECT_EQ(p.error(), "the server closed the connection without answering");
    EXPECT_FALSE(p.started());
  }
}

TEST(ResponseParserTest, SinkTakesA2xxBodyAsItArrivesInAnySplit) {
  const std::string wire =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
      "6\r\n{\"a\":1\r\n"
      "3\r\n}\n{\r\n"
      "7\r\n\"b\":2}\n\r\n"
      "0\r\n\r\n";
  for (size_t step : {0, 1, 3, 16}) {
    std::string got;
    ResponseParser p([&got](std::string_view data) {
      got.append(data);
      return true;
    });
    ASSERT_EQ(feedInPieces(p, wire, step), State::kDone) << step << ": " << p.error();
    EXPECT_EQ(got, "{\"a\":1}\n{\"b\":2}\n") << step;
    EXPECT_EQ(p.answer().body, "");
    EXPECT_EQ(p.answer().status, 200);
  }
}

TEST(ResponseParserTest, SinkSaysStopAndIsNotGivenOtherAnswersBodies) {
  {
    int calls = 0;
    ResponseParser p([&calls](std::string_view) { return ++calls < 2; });
    EXPECT_EQ(feedInPieces(p, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789", 2),
              State::kDone);
    EXPECT_EQ(calls, 2);  // no byte after the sink said stop
    EXPECT_TRUE(p.answer().closeAfter);
  }
  {
    bool called = false;
    ResponseParser p([&called](std::string_view) { return called = true; });
    const std::string body = R"({"kind":"Status","code":403})";
    EXPECT_EQ(feedInPieces(p,
                           "HTTP/1.1 403 Forbidden\r\nContent-Length: " +
                               std::to_string(body.size()) + "\r\n\r\n" + body,
                           0),
              State::kDone);
    EXPECT_FALSE(called);
    EXPECT_EQ(p.answer().body, body);
  }
}

// A plain-TCP peer on loopback that reads requests and answers with what the test says: it
// checks the connection's own behaviour (one write per request, keep-alive, noticing a close,
// being cut off), not the apiserver's (tests/integration/client_test.cc).
class Peer {
 public:
  Peer() {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listener_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    socklen_t len = sizeof addr;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    listen(listener_, 4);
  }
  ~Peer() {
    if (conn_ >= 0) close(conn_);
    close(listener_);
  }
  [[nodiscard]] int port() const { return port_; }
  void accept() { conn_ = ::accept(listener_, nullptr, nullptr); }
  // Reads until the end of a request's header (the requests here have no body).
  std::string readRequest() {
    std::string got;
    char buf[4096];
    while (got.find("\r\n\r\n") == std::string::npos) {
      const long n = recv(conn_, buf, sizeof buf, 0);
      if (n <= 0) break;
      got.append(buf, static_cast<size_t>(n));
    }
    return got;
  }
  void answer(const std::string& wire) { (void)send(conn_, wire.data(), wire.size(), 0); }
  // A connection to this peer, accepted; nullptr (with the reason printed) when that failed.
  std::unique_ptr<HttpConnection> connect(std::chrono::seconds ioTimeout) {
    std::string error;
    auto conn = HttpConnection::open({"127.0.0.1", port_, nullptr}, std::chrono::seconds(2),
                                     ioTimeout, error);
    EXPECT_NE(conn, nullptr) << error;
    if (conn) accept();
    return conn;
  }
  void hangUp() {
    close(conn_);
    conn_ = -1;
  }

 private:
  int listener_ = -1;
  int conn_ = -1;
  int port_ = 0;
};

TEST(HttpConnectionTest, KeepsTheConnectionAndNoticesWhenThePeerClosesIt) {
  Peer peer;
  auto conn = peer.connect(std::chrono::seconds(5));
  ASSERT_NE(conn, nullptr);
  std::string error;
  for (int i = 0; i < 2; ++i) {
    std::thread server([&] {
      EXPECT_EQ(peer.readRequest(), "GET /api HTTP/1.1\r\nHost: x\r\n\r\n");
      peer.answer("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\n{}\r\n");
    });
    HttpAnswer answer;
    bool started = false;
    ASSERT_TRUE(
        conn->roundTrip("GET /api HTTP/1.1\r\nHost: x\r\n\r\n", false, answer, error, started))
        << error;
    server.join();
    EXPECT_EQ(answer.status, 200);
    EXPECT_EQ(answer.body, "{}\r\n");
    EXPECT_TRUE(conn->reusable(std::chrono::milliseconds(0)));  // the same socket, both times
  }
  peer.hangUp();
  for (int i = 0; i < 100 && conn->reusable(std::chrono::milliseconds(0)); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_FALSE(conn->reusable(std::chrono::milliseconds(0)));
}

TEST(HttpConnectionTest, ShutdownCutsOffAWaitingRequest) {
  Peer peer;
  auto conn = peer.connect(std::chrono::seconds(30));
  ASSERT_NE(conn, nullptr);
  std::string error;
  std::thread cutter([&] {
    peer.readRequest();  // the request arrived; the peer never answers
    conn->shutdown();
  });
  HttpAnswer answer;
  bool started = true;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(
      conn->roundTrip("GET /hang HTTP/1.1\r\nHost: x\r\n\r\n", false, answer, error, started));
  cutter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_FALSE(started);
  EXPECT_EQ(error, "the server closed the connection without answering");
  EXPECT_FALSE(conn->reusable(std::chrono::milliseconds(0)));
}

TEST(HttpConnectionTest, StreamsABodyUntilShutDown) {
  Peer peer;
  auto conn = peer.connect(std::chrono::seconds(30));
  ASSERT_NE(conn, nullptr);
  std::string got;
  std::atomic<bool> arrived{false};
  std::thread server([&] {
    peer.readRequest();
    peer.answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nab\n\n\r\n");
  });
  std::thread cutter([&] {
    server.join();
    for (int i = 0; i < 500 && !arrived.load(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    conn->shutdown();  // the stream stays open; stopping the watch cuts it off
  });
  HttpAnswer answer;
  std::string error;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(conn->stream(
      "GET /w HTTP/1.1\r\nHost: x\r\n\r\n",
      [&](std::string_view data) {
        got.append(data);
        arrived.store(true);
        return true;
      },
      answer, error));
  cutter.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(got, "ab\n\n");
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(error, "the connection closed before the answer was complete");
  EXPECT_FALSE(conn->reusable(std::chrono::milliseconds(0)));
}

TEST(HttpConnectionTest, ConnectingToAClosedPortSaysSo) {
  int port = 0;
  {
    Peer closed;  // a port that was just free; nothing listens once it is destroyed
    port = closed.port();
  }
  std::string error;
  EXPECT_EQ(HttpConnection::open({"127.0.0.1", port, nullptr}, std::chrono::seconds(2),
                                 std::chrono::seconds(2), error),
            nullptr);
  EXPECT_EQ(error, "connection refused or unreachable");
}

}  // namespace
}  // namespace ksched::client
