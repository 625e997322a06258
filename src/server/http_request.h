// HTTP/1.1 on the secure port as bytes: reading one request out of what a connection sent,
// writing one answer. Pure functions (no I/O), so the event loop that serves the port and the
// fuzz target exercise the same code.
//
// What is accepted (the port serves GETs of a few paths; Go's net/http is the reference):
//   - request line "METHOD SP request-target SP HTTP/1.x" with a token method and an
//     origin-form target; header fields "name: value" (token names, no obsolete line folding);
//   - at most kMaxHeaderBytes up to the blank line and kMaxHeaderFields fields (Go's
//     DefaultMaxHeaderBytes is 1 MiB);
//   - a body only with Content-Length, at most kMaxBodyBytes; Transfer-Encoding is refused.
// Anything else is an error with the status to answer before closing (400, 413, 431, 501, 505).
//
// Text that came in is made valid UTF-8 where it enters (path, query parameters, header values):
// it may end up in JSON (SubjectAccessReviews, explain answers), and JSON cannot carry other
// bytes.
#pragma once

#include <httplib.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace ksched::server {

inline constexpr size_t kMaxHeaderBytes = 1 << 20;
inline constexpr size_t kMaxHeaderFields = 256;
inline constexpr size_t kMaxBodyBytes = 1 << 20;

struct ParseOutcome {
  enum Kind { kIncomplete, kComplete, kError } kind = kIncomplete;
  size_t consumed = 0;     // kComplete: bytes of `input` the request took (pipelining)
  int errorStatus = 0;     // kError: the status to answer with, then close
  std::string errorText;   // kError: why, for the answer's body and the log
  bool keepAlive = false;  // kComplete: the connection stays open after the answer
};

// Reads the request at the start of `input` into `out` (method, target, path decoded, params,
// headers, body). kIncomplete: more bytes are needed (and may come: `input` is below the
// limits).
[[nodiscard]] ParseOutcome parseRequest(std::string_view input, httplib::Request& out);

// "Not Found" for 404, ...; "" for a status it does not know.
[[nodiscard]] std::string_view reasonPhrase(int status);

// The bytes of an HTTP/1.1 answer: status line, `res`'s headers, Content-Length, Connection;
// no body for HEAD (`headOnly`), the length still that of the body.
[[nodiscard]] std::string serializeResponse(const httplib::Response& res, bool headOnly,
                                            bool keepAlive);

}  // namespace ksched::server
