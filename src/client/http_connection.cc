#include "client/http_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>

#include "client/config.h"
#include "client/tls.h"

namespace ksched::client {
namespace {

// Headers of one answer above this are refused (Go's server sends a few hundred bytes).
constexpr size_t kMaxHeaderBytes = 256 * 1024;
// At most this much of a body is allocated ahead on the word of its Content-Length; the rest
// as it arrives.
constexpr size_t kMaxBodyReserve = 16 * 1024 * 1024;

char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return lower(x) == y; });
}

bool containsToken(std::string_view value, std::string_view token) {
  // Comma-separated, case-insensitive: "keep-alive, Close".
  while (!value.empty()) {
    const size_t comma = value.find(',');
    std::string_view item = value.substr(0, comma);
    while (!item.empty() && (item.front() == ' ' || item.front() == '\t')) item.remove_prefix(1);
    while (!item.empty() && (item.back() == ' ' || item.back() == '\t')) item.remove_suffix(1);
    if (equalsIgnoreCase(item, token)) return true;
    if (comma == std::string_view::npos) break;
    value.remove_prefix(comma + 1);
  }
  return false;
}

std::string_view trimSpaceAndTab(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

std::string sslErrorText() {
  const unsigned long e = ERR_peek_last_error();
  std::string text;
  if (e != 0) {
    char buf[256];
    ERR_error_string_n(e, buf, sizeof buf);
    text = buf;
  }
  ERR_clear_error();
  return text;
}

bool isIpLiteral(const std::string& host) {
  in6_addr v6{};
  in_addr v4{};
  return inet_pton(AF_INET, host.c_str(), &v4) == 1 || inet_pton(AF_INET6, host.c_str(), &v6) == 1;
}

// SO_RCVTIMEO or SO_SNDTIMEO.
void setSocketTimeout(int fd, int option, std::chrono::milliseconds t) {
  timeval tv{};
  tv.tv_sec = static_cast<time_t>(t.count() / 1000);
  tv.tv_usec = static_cast<suseconds_t>((t.count() % 1000) * 1000);
  setsockopt(fd, SOL_SOCKET, option, &tv, sizeof tv);
}

std::string timeoutText(std::chrono::milliseconds t) {
  return t.count() % 1000 == 0 ? std::to_string(t.count() / 1000) + " s"
                               : std::to_string(t.count()) + " ms";
}

}  // namespace

// ---- ResponseParser ----

ResponseParser::State ResponseParser::fail(std::string message) {
  error_ = std::move(message);
  state_ = State::kError;
  return state_;
}

bool ResponseParser::takeLine(std::string_view& data, std::string_view& line) {
  const size_t nl = data.find('\n');
  const size_t take = nl == std::string_view::npos ? data.size() : nl;
  headerBytes_ += take + (nl == std::string_view::npos ? 0 : 1);
  if (headerBytes_ > kMaxHeaderBytes) {
    fail("the answer's header is larger than 256 KiB");
    data = {};
    return false;
  }
  if (nl == std::string_view::npos) {
    line_.append(data);
    data = {};
    return false;
  }
  if (line_.empty()) {
    line = data.substr(0, nl);
  } else {
    line_.append(data.substr(0, nl));
    line = line_;
  }
  data.remove_prefix(nl + 1);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return true;
}

ResponseParser::State ResponseParser::onStatusLine(std::string_view line) {
  // HTTP/1.1 200 OK
  if (line.empty()) return state_;  // tolerated before the status line
  if (line.size() < 12 || !line.starts_with("HTTP/1.") || line[8] != ' ') {
    return fail("not an HTTP/1.x status line: \"" + std::string(line.substr(0, 64)) + "\"");
  }
  int status = 0;
  const auto [end, ec] = std::from_chars(line.data() + 9, line.data() + 12, status);
  if (ec != std::errc() || end != line.data() + 12 || status < 100 || status > 999 ||
      (line.size() > 12 && line[12] != ' ')) {
    return fail("bad status code in \"" + std::string(line.substr(0, 64)) + "\"");
  }
  if (status == 101) return fail("unexpected protocol switch (101)");
  answer_.status = status;
  answer_.closeAfter = line[7] == '0';  // HTTP/1.0: the server closes
  phase_ = Phase::kHeaders;
  return state_;
}

ResponseParser::State ResponseParser::onHeader(std::string_view line) {
  if (line.empty()) return headersDone();
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) {
    return fail("malformed header line \"" + std::string(line.substr(0, 64)) + "\"");
  }
  const std::string_view name = line.substr(0, colon);
  const std::string_view value = trimSpaceAndTab(line.substr(colon + 1));
  if (equalsIgnoreCase(name, "content-length")) {
    size_t length = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), length);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
        (haveLength_ && length != remaining_)) {
      return fail("bad Content-Length \"" + std::string(value) + "\"");
    }
    haveLength_ = true;
    remaining_ = length;
  } else if (equalsIgnoreCase(name, "transfer-encoding")) {
    chunked_ = containsToken(value, "chunked");
    if (!chunked_) return fail("unsupported Transfer-Encoding \"" + std::string(value) + "\"");
  } else if (equalsIgnoreCase(name, "connection")) {
    if (containsToken(value, "close")) answer_.closeAfter = true;
  } else if (equalsIgnoreCase(name, "retry-after")) {
    answer_.retryAfter = value;
  }
  return state_;
}

ResponseParser::State ResponseParser::headersDone() {
  if (answer_.status < 200) {  // interim answer (100 Continue, 103 Early Hints): skip it
    answer_ = {};
    chunked_ = haveLength_ = false;
    remaining_ = 0;
    phase_ = Phase::kStatusLine;
    return state_;
  }
  if (noBody_ || answer_.status == 204 || answer_.status == 304) {
    phase_ = Phase::kDone;
  } else if (chunked_) {
    phase_ = Phase::kChunkSize;
  } else if (haveLength_) {
    if (!sink_) answer_.body.reserve(std::min(remaining_, kMaxBodyReserve));
    phase_ = remaining_ == 0 ? Phase::kDone : Phase::kBody;
  } else {
    answer_.closeAfter = true;
    phase_ = Phase::kUntilClose;
  }
  if (phase_ == Phase::kDone) state_ = State::kDone;
  return state_;
}

void ResponseParser::body(std::string_view data) {
  if (!sink_ || answer_.status < 200 || answer_.status > 299) {
    answer_.body.append(data);
  } else if (!sink_(data)) {
    phase_ = Phase::kDone;
    state_ = State::kDone;
    answer_.closeAfter = true;
  }
}

ResponseParser::State ResponseParser::feed(std::string_view data) {
  if (!data.empty()) started_ = true;
  while (!data.empty() && state_ == State::kMore) {
    switch (phase_) {
      case Phase::kBody:
      case Phase::kChunkData: {
        const size_t n = std::min(remaining_, data.size());
        body(data.substr(0, n));
        data.remove_prefix(n);
        remaining_ -= n;
        if (state_ == State::kMore && remaining_ == 0) {
          if (phase_ == Phase::kChunkData) {
            phase_ = Phase::kChunkEnd;
          } else {
            phase_ = Phase::kDone;
            state_ = State::kDone;
          }
        }
        break;
      }
      case Phase::kUntilClose:
        body(data);
        data = {};
        break;
      case Phase::kDone:
        break;
      default: {
        std::string_view line;
        if (!takeLine(data, line)) break;
        switch (phase_) {
          case Phase::kStatusLine:
            onStatusLine(line);
            break;
          case Phase::kHeaders:
            onHeader(line);
            break;
          case Phase::kChunkSize: {
            std::string_view size = trimSpaceAndTab(line.substr(0, line.find(';')));
            size_t n = 0;
            const auto [end, ec] = std::from_chars(size.data(), size.data() + size.size(), n, 16);
            if (size.empty() || ec != std::errc() || end != size.data() + size.size()) {
              fail("bad chunk size \"" + std::string(line.substr(0, 64)) + "\"");
              break;
            }
            remaining_ = n;
            phase_ = n == 0 ? Phase::kTrailers : Phase::kChunkData;
            break;
          }
          case Phase::kChunkEnd:
            if (!line.empty()) {
              fail("chunk not followed by CRLF");
              break;
            }
            phase_ = Phase::kChunkSize;
            break;
          case Phase::kTrailers:
            if (line.empty()) {
              phase_ = Phase::kDone;
              state_ = State::kDone;
            }
            break;
          default:
            break;
        }
        line_.clear();
        break;
      }
    }
  }
  // Bytes past the end of the answer: nothing a request asked for; do not reuse the connection.
  if (state_ == State::kDone && !data.empty()) answer_.closeAfter = true;
  return state_;
}

ResponseParser::State ResponseParser::finish() {
  if (state_ != State::kMore) return state_;
  if (phase_ == Phase::kUntilClose) {
    phase_ = Phase::kDone;
    state_ = State::kDone;
    return state_;
  }
  return fail(started_ ? "the connection closed before the answer was complete"
                       : "the server closed the connection without answering");
}

// ---- TlsContext ----

TlsContext::TlsContext(const std::string& caPem, const std::string& certPem,
                       const std::string& keyPem, bool insecureSkipVerify) {
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                        &SSL_CTX_free);
  if (!ctx) throw ConfigError("cannot create a TLS context: " + sslErrorText());
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  // A peer that closes without close_notify ends the stream like one that sends it; every
  // answer is delimited by its length or its chunks, so a cut answer is still detected.
  SSL_CTX_set_options(ctx.get(), SSL_OP_IGNORE_UNEXPECTED_EOF);
  // Read whatever has arrived in one read() rather than a record header, then its body.
  SSL_CTX_set_read_ahead(ctx.get(), 1);
  verify_ = !insecureSkipVerify;
  if (verify_) {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_PEER, nullptr);
    if (!caPem.empty()) {
      X509_STORE* store = storeFromPem(caPem);
      if (store == nullptr)
        throw ConfigError("certificate authority data holds no PEM certificate");
      SSL_CTX_set_cert_store(ctx.get(), store);  // the context owns it now
    } else {
      SSL_CTX_set_default_verify_paths(ctx.get());
    }
  } else {
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
  }
  if (!certPem.empty()) {
    std::unique_ptr<BIO, decltype(&BIO_free)> certBio(
        BIO_new_mem_buf(certPem.data(), static_cast<int>(certPem.size())), &BIO_free);
    std::unique_ptr<BIO, decltype(&BIO_free)> keyBio(
        BIO_new_mem_buf(keyPem.data(), static_cast<int>(keyPem.size())), &BIO_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(
        PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr), &X509_free);
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
        PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
    if (!cert || !key) {
      ERR_clear_error();
      throw ConfigError("client certificate or key is not valid PEM");
    }
    if (SSL_CTX_use_certificate(ctx.get(), cert.get()) != 1 ||
        SSL_CTX_use_PrivateKey(ctx.get(), key.get()) != 1 ||
        SSL_CTX_check_private_key(ctx.get()) != 1) {
      ERR_clear_error();
      throw ConfigError("client certificate does not match its key");
    }
    // Intermediates after the leaf are sent along with it.
    while (X509* extra = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr)) {
      SSL_CTX_add0_chain_cert(ctx.get(), extra);  // the context owns it now
    }
    ERR_clear_error();
  }
  ctx_ = ctx.release();
}

TlsContext::~TlsContext() { SSL_CTX_free(ctx_); }

// ---- HttpConnection ----

std::unique_ptr<HttpConnection> HttpConnection::open(const Endpoint& endpoint,
                                                     std::chrono::milliseconds connectTimeout,
                                                     std::chrono::milliseconds ioTimeout,
                                                     std::string& error) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string port = std::to_string(endpoint.port);
  if (int rc = getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found); rc != 0) {
    error = "cannot resolve host \"" + endpoint.host + "\": " + gai_strerror(rc);
    return nullptr;
  }
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> addrs(found, &freeaddrinfo);
  int fd = -1;
  bool timedOut = false;
  for (const addrinfo* a = addrs.get(); a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
    if (fd < 0) continue;
    int rc = connect(fd, a->ai_addr, a->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      rc = poll(&p, 1, static_cast<int>(connectTimeout.count()));
      int soError = 0;
      socklen_t len = sizeof soError;
      if (rc == 0) timedOut = true;
      rc = rc == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &len) == 0 && soError == 0
               ? 0
               : -1;
    }
    if (rc != 0) {
      close(fd);
      fd = -1;
    }
  }
  if (fd < 0) {
    error = timedOut ? "connection timed out after " + timeoutText(connectTimeout)
                     : "connection refused or unreachable";
    return nullptr;
  }
  // From here on, blocking reads and writes bounded by the socket's timeouts: no poll per call.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  setSocketTimeout(fd, SO_RCVTIMEO, ioTimeout);
  setSocketTimeout(fd, SO_SNDTIMEO, ioTimeout);
  if (endpoint.tls == nullptr)
    return std::unique_ptr<HttpConnection>(new HttpConnection(fd, nullptr));

  SSL* ssl = SSL_new(endpoint.tls->get());
  if (ssl == nullptr || SSL_set_fd(ssl, fd) != 1) {
    error = "cannot set up TLS: " + sslErrorText();
    SSL_free(ssl);
    close(fd);
    return nullptr;
  }
  if (isIpLiteral(endpoint.host)) {
    if (endpoint.tls->verifies())
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), endpoint.host.c_str());
  } else {
    SSL_set_tlsext_host_name(ssl, endpoint.host.c_str());
    if (endpoint.tls->verifies()) SSL_set1_host(ssl, endpoint.host.c_str());
  }
  auto handshake = endpoint.tls->handshake();
  if (SSL_connect(ssl) != 1) {
    const long verify = SSL_get_verify_result(ssl);
    if (endpoint.tls->verifies() && verify != X509_V_OK) {
      error = "TLS server certificate verification failed: ";
      error += verify == X509_V_ERR_HOSTNAME_MISMATCH || verify == X509_V_ERR_IP_ADDRESS_MISMATCH
                   ? "the certificate does not name the server's host or IP"
                   : X509_verify_cert_error_string(verify);
    } else {
      error = "TLS handshake failed";
    }
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    return nullptr;
  }
  return std::unique_ptr<HttpConnection>(new HttpConnection(fd, ssl));
}

HttpConnection::~HttpConnection() {
  if (ssl_ != nullptr) {
    if (!broken_) SSL_shutdown(ssl_);  // close_notify; the answer to it is not awaited
    SSL_free(ssl_);
    ERR_clear_error();
  }
  close(fd_);
}

void HttpConnection::shutdown() { ::shutdown(fd_, SHUT_RDWR); }

void HttpConnection::setReadTimeout(std::chrono::milliseconds timeout) {
  setSocketTimeout(fd_, SO_RCVTIMEO, timeout);
}

bool HttpConnection::reusable(std::chrono::milliseconds idleCheck) {
  if (broken_) return false;
  if (std::chrono::steady_clock::now() - lastUsed_ < idleCheck) return true;
  // Idle for a while: the server may have closed it (idle timeout, restart). Between answers
  // nothing may arrive, so anything readable (end of stream, close_notify) ends it.
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, 0) != 0 || (ssl_ != nullptr && SSL_pending(ssl_) > 0)) broken_ = true;
  return !broken_;
}

bool HttpConnection::writeAll(std::string_view data, std::string& error) {
  while (!data.empty()) {
    long n = 0;
    if (ssl_ != nullptr) {
      n = SSL_write(ssl_, data.data(), static_cast<int>(std::min<size_t>(data.size(), 1 << 30)));
    } else {
      n = send(fd_, data.data(), data.size(), MSG_NOSIGNAL);
      if (n < 0 && errno == EINTR) continue;
    }
    if (n <= 0) {
      const int err = errno;
      ERR_clear_error();
      error = err == EAGAIN || err == EWOULDBLOCK
                  ? "timed out sending the request"
                  : std::string("the connection broke while sending the request") +
                        (err != 0 ? std::string(": ") + std::strerror(err) : std::string());
      return false;
    }
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

long HttpConnection::readSome(char* buf, size_t size, std::string& error) {
  for (;;) {
    errno = 0;
    if (ssl_ != nullptr) {
      const int n = SSL_read(ssl_, buf, static_cast<int>(size));
      if (n > 0) return n;
      const int why = SSL_get_error(ssl_, n);
      const int err = errno;
      if (why == SSL_ERROR_ZERO_RETURN) return 0;
      if (why == SSL_ERROR_SYSCALL && err == EINTR) continue;
      const std::string text = sslErrorText();
      if (err == EAGAIN || err == EWOULDBLOCK) {
        error = "timed out waiting for the answer";
      } else if (why == SSL_ERROR_SYSCALL && err == 0) {
        return 0;
      } else {
        error = "the connection broke while reading the answer";
        if (err != 0)
          error += std::string(": ") + std::strerror(err);
        else if (!text.empty())
          error += ": " + text;
      }
      return -1;
    }
    const long n = recv(fd_, buf, size, 0);
    if (n >= 0) return n;
    if (errno == EINTR) continue;
    error =
        errno == EAGAIN || errno == EWOULDBLOCK
            ? "timed out waiting for the answer"
            : std::string("the connection broke while reading the answer: ") + std::strerror(errno);
    return -1;
  }
}

bool HttpConnection::exchange(std::string_view request, ResponseParser& parser,
                              std::string& error) {
  if (!writeAll(request, error)) {
    broken_ = true;
    return false;
  }
  char buf[16384];
  bool ended = false;
  while (parser.state() == ResponseParser::State::kMore) {
    const long n = readSome(buf, sizeof buf, error);
    if (n < 0) break;
    if (n == 0) {
      ended = true;
      parser.finish();
      break;
    }
    parser.feed(std::string_view(buf, static_cast<size_t>(n)));
  }
  lastUsed_ = std::chrono::steady_clock::now();
  if (parser.state() != ResponseParser::State::kDone) {
    broken_ = true;
    if (parser.state() == ResponseParser::State::kError) {
      error = ended ? parser.error() : "malformed answer: " + parser.error();
    }
    return false;
  }
  return true;
}

bool HttpConnection::roundTrip(std::string_view request, bool head, HttpAnswer& answer,
                               std::string& error, bool& answerStarted) {
  ResponseParser parser(head);
  const bool ok = exchange(request, parser, error);
  answerStarted = parser.started();
  if (!ok) return false;
  answer = std::move(parser.answer());
  if (answer.closeAfter) broken_ = true;
  return true;
}

bool HttpConnection::stream(std::string_view request, const ResponseParser::BodySink& sink,
                            HttpAnswer& answer, std::string& error) {
  ResponseParser parser(sink);
  const bool ok = exchange(request, parser, error);
  broken_ = true;
  answer = std::move(parser.answer());
  return ok;
}

}  // namespace ksched::client
