// The transport of the apiserver client's unary requests (GET, LIST pages, POST, PUT, PATCH,
// DELETE): one keep-alive HTTP/1.1 connection over TCP or TLS (OpenSSL), one request at a
// time. A request is one write (headers and body together) and its answer is read in
// buffered blocks, with no poll before each read or write; the socket's own timeouts bound
// every read and write. A watch holds a connection of its own and streams its answer's body
// (stream()).
//
// Thread-safety: a connection is used by one thread at a time; shutdown() may be called from
// any thread to cut a blocked request off. A TlsContext is shared by all connections of a
// client and is immutable after construction.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

struct ssl_ctx_st;
struct ssl_st;

namespace ksched::client {

struct HttpAnswer {
  int status = 0;
  std::string body;
  std::string retryAfter;   // the Retry-After header, as sent
  bool closeAfter = false;  // the server closes the connection after this answer
};

// Incremental parser of one HTTP/1.1 response: status line, headers, then a body delimited by
// Content-Length, chunked transfer coding, or the end of the connection. Interim 1xx answers
// are skipped. Pure logic, no I/O.
class ResponseParser {
 public:
  enum class State { kMore, kDone, kError };
  // Takes the body of a 2xx answer piece by piece as it arrives; false ends the answer there
  // (the connection is then not reusable).
  using BodySink = std::function<bool(std::string_view)>;

  // `noBody`: the answer to a HEAD request (headers only, whatever they announce).
  explicit ResponseParser(bool noBody = false) : noBody_(noBody) {}
  // A 2xx answer's body goes to `sink` instead of answer().body; any other answer's body is
  // kept as usual (the error it describes).
  explicit ResponseParser(BodySink sink) : noBody_(false), sink_(std::move(sink)) {}

  // Consumes `data`; bytes after the end of the answer make the connection not reusable.
  State feed(std::string_view data);
  // The connection ended: completes an answer delimited by the end of the connection.
  State finish();

  [[nodiscard]] State state() const { return state_; }
  // Whether any byte of the answer has arrived.
  [[nodiscard]] bool started() const { return started_; }
  [[nodiscard]] const std::string& error() const { return error_; }
  [[nodiscard]] HttpAnswer& answer() { return answer_; }

 private:
  enum class Phase {
    kStatusLine,
    kHeaders,
    kBody,
    kChunkSize,
    kChunkData,
    kChunkEnd,
    kTrailers,
    kUntilClose,
    kDone
  };
  State fail(std::string message);
  bool takeLine(std::string_view& data, std::string_view& line);
  State onStatusLine(std::string_view line);
  State onHeader(std::string_view line);
  State headersDone();
  // Body bytes: to the sink or into the answer.
  void body(std::string_view data);

  bool noBody_;
  BodySink sink_;
  Phase phase_ = Phase::kStatusLine;
  State state_ = State::kMore;
  bool started_ = false;
  bool chunked_ = false;
  bool haveLength_ = false;
  size_t remaining_ = 0;
  size_t headerBytes_ = 0;
  std::string line_;  // a line split across reads
  std::string error_;
  HttpAnswer answer_;
};

// Client TLS settings shared by every connection of one client: trusted CAs, optional client
// certificate, verification mode. Built once; making one per connection or request would parse
// the certificates each time.
class TlsContext {
 public:
  // Throws ConfigError for a CA bundle without a certificate, a client certificate or key that
  // is not valid PEM, or a certificate that does not match its key. An empty `caPem` trusts the
  // system's CA bundle.
  TlsContext(const std::string& caPem, const std::string& certPem, const std::string& keyPem,
             bool insecureSkipVerify);
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  [[nodiscard]] ssl_ctx_st* get() const { return ctx_; }
  [[nodiscard]] bool verifies() const { return verify_; }
  // Held during a handshake: OpenSSL 3.0 fills caches in the shared certificate store while it
  // verifies a peer, and two handshakes at once race on them. Handshakes happen only when a
  // connection is opened.
  [[nodiscard]] std::unique_lock<std::mutex> handshake() const {
    return std::unique_lock(handshakeMu_);
  }

 private:
  ssl_ctx_st* ctx_ = nullptr;
  bool verify_ = true;
  mutable std::mutex handshakeMu_;
};

class HttpConnection {
 public:
  struct Endpoint {
    std::string host;  // name or IP, IPv6 without brackets
    int port = 443;
    const TlsContext* tls = nullptr;  // null: plain HTTP
  };

  // Connects (TCP, then the TLS handshake with the server's certificate verified against the
  // host name or IP). nullptr with `error` set on failure.
  static std::unique_ptr<HttpConnection> open(const Endpoint& endpoint,
                                              std::chrono::milliseconds connectTimeout,
                                              std::chrono::milliseconds ioTimeout,
                                              std::string& error);
  ~HttpConnection();
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

  // Sends `request` (a complete HTTP/1.1 request) and reads the answer. False with `error` set
  // when the connection failed; `answerStarted` says whether any byte of an answer had arrived
  // (if none had, the server may never have seen the request). After a failure, or an answer
  // after which the server closes, the connection is not reusable.
  bool roundTrip(std::string_view request, bool head, HttpAnswer& answer, std::string& error,
                 bool& answerStarted);
  // Sends `request` and hands a 2xx answer's body to `sink` as it arrives, until the answer
  // ends or `sink` returns false (a watch). True then, with the status (and any other
  // answer's body) in `answer`; false with `error` set when the connection failed, timed out
  // or was shut down, `answer.status` telling whether the header had arrived. The connection
  // is not reusable afterwards.
  bool stream(std::string_view request, const ResponseParser::BodySink& sink, HttpAnswer& answer,
              std::string& error);

  // False once the connection failed or the server announced it closes; for a connection idle
  // longer than `idleCheck`, also when the server has closed it meanwhile (one poll).
  [[nodiscard]] bool reusable(std::chrono::milliseconds idleCheck);
  // Any thread: ends a blocked roundTrip() or stream() at once. The connection is not reusable
  // afterwards.
  void shutdown();
  // How long one read may wait from now on (a watch waits longer than a request).
  void setReadTimeout(std::chrono::milliseconds timeout);

 private:
  HttpConnection(int fd, ssl_st* ssl) : fd_(fd), ssl_(ssl) {}
  bool writeAll(std::string_view data, std::string& error);
  // Writes `request` and feeds what arrives to `parser` until it is done or fails; false with
  // `error` set unless the answer is complete.
  bool exchange(std::string_view request, ResponseParser& parser, std::string& error);
  // Reads one block; 0 = the connection ended cleanly; -1 = error (set).
  long readSome(char* buf, size_t size, std::string& error);

  const int fd_;
  ssl_st* const ssl_;
  bool broken_ = false;
  std::chrono::steady_clock::time_point lastUsed_ = std::chrono::steady_clock::now();
};

}  // namespace ksched::client
