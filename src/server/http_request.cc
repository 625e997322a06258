#include "server/http_request.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include <ksched/api/utf8.h>

namespace ksched::server {
namespace {

ParseOutcome error(int status, std::string text) {
  ParseOutcome o;
  o.kind = ParseOutcome::kError;
  o.errorStatus = status;
  o.errorText = std::move(text);
  return o;
}

// RFC 9110 tchar.
bool isTokenChar(unsigned char c) {
  if (std::isalnum(c)) return true;
  switch (c) {
    case '!':
    case '#':
    case '$':
    case '%':
    case '&':
    case '\'':
    case '*':
    case '+':
    case '-':
    case '.':
    case '^':
    case '_':
    case '`':
    case '|':
    case '~':
      return true;
    default:
      return false;
  }
}

bool isToken(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
    return isTokenChar(static_cast<unsigned char>(c));
  });
}

std::string_view trimSpace(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

using api::equalFold;

// Whether the comma-separated `list` holds `option` (any case).
bool hasOption(std::string_view list, std::string_view option) {
  while (!list.empty()) {
    const size_t comma = list.find(',');
    if (equalFold(trimSpace(list.substr(0, comma)), option)) return true;
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return false;
}

// A field value may hold visible characters, spaces and tabs, and obs-text (bytes >= 0x80).
bool isFieldValue(std::string_view v) {
  return std::none_of(v.begin(), v.end(), [](char ch) {
    const auto c = static_cast<unsigned char>(ch);
    return (c < 0x20 && c != '\t') || c == 0x7F;
  });
}

}  // namespace

ParseOutcome parseRequest(std::string_view input, httplib::Request& out) {
  const size_t end = input.find("\r\n\r\n");
  if (end == std::string_view::npos) {
    if (input.size() >= kMaxHeaderBytes) return error(431, "request header fields too large");
    return {};
  }
  if (end + 4 > kMaxHeaderBytes) return error(431, "request header fields too large");
  std::string_view head = input.substr(0, end);

  // Request line.
  const size_t lineEnd = head.find("\r\n");
  std::string_view line = head.substr(0, lineEnd);
  head = lineEnd == std::string_view::npos ? std::string_view() : head.substr(lineEnd + 2);
  const size_t sp1 = line.find(' ');
  const size_t sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos) {
    return error(400, "malformed request line");
  }
  const std::string_view method = line.substr(0, sp1);
  const std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  const std::string_view version = line.substr(sp2 + 1);
  if (!isToken(method)) return error(400, "malformed method");
  if (target.empty() || target.front() != '/' ||
      std::any_of(target.begin(), target.end(), [](char ch) {
        const auto c = static_cast<unsigned char>(ch);
        return c <= 0x20 || c == 0x7F;
      })) {
    return error(400, "malformed request target");
  }
  bool http11 = false;
  if (version == "HTTP/1.1") {
    http11 = true;
  } else if (version != "HTTP/1.0") {
    return error(version.starts_with("HTTP/") ? 505 : 400, "unsupported HTTP version");
  }

  out = httplib::Request();
  out.method = std::string(method);
  out.version = std::string(version);
  out.target = api::toValidUtf8(target);
  const size_t q = target.find('?');
  out.path = api::toValidUtf8(httplib::detail::decode_url(std::string(target.substr(0, q)), false));
  if (q != std::string_view::npos) {
    httplib::Params raw;
    httplib::detail::parse_query_text(std::string(target.substr(q + 1)), raw);
    for (auto& [k, v] : raw) out.params.emplace(api::toValidUtf8(k), api::toValidUtf8(v));
  }

  // Header fields.
  size_t fields = 0;
  while (!head.empty()) {
    const size_t e = head.find("\r\n");
    const std::string_view field = head.substr(0, e);
    head = e == std::string_view::npos ? std::string_view() : head.substr(e + 2);
    if (++fields > kMaxHeaderFields) return error(431, "too many header fields");
    const size_t colon = field.find(':');
    if (colon == std::string_view::npos || !isToken(field.substr(0, colon))) {
      return error(400, "malformed header field");  // also obsolete line folding
    }
    const std::string_view value = trimSpace(field.substr(colon + 1));
    if (!isFieldValue(value)) return error(400, "malformed header field value");
    out.headers.emplace(std::string(field.substr(0, colon)), api::toValidUtf8(value));
  }

  if (out.has_header("Transfer-Encoding")) {
    return error(501, "request bodies must have a Content-Length");
  }
  size_t bodyLength = 0;
  if (out.get_header_value_count("Content-Length") > 1) {
    return error(400, "more than one Content-Length");
  }
  if (out.has_header("Content-Length")) {
    const std::string v = out.get_header_value("Content-Length");
    const auto [p, ec] = std::from_chars(v.data(), v.data() + v.size(), bodyLength);
    if (ec != std::errc() || p != v.data() + v.size() || v.empty()) {
      return error(400, "malformed Content-Length");
    }
    if (bodyLength > kMaxBodyBytes) return error(413, "request body too large");
  }
  const size_t bodyStart = end + 4;
  if (input.size() - bodyStart < bodyLength) return {};
  out.body = std::string(input.substr(bodyStart, bodyLength));

  ParseOutcome o;
  o.kind = ParseOutcome::kComplete;
  o.consumed = bodyStart + bodyLength;
  const std::string connection = out.get_header_value("Connection");
  o.keepAlive = http11 ? !hasOption(connection, "close") : hasOption(connection, "keep-alive");
  return o;
}

std::string_view reasonPhrase(int status) {
  switch (status) {
    case 200:
      return "OK";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 408:
      return "Request Timeout";
    case 413:
      return "Request Entity Too Large";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 503:
      return "Service Unavailable";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "";
  }
}

std::string serializeResponse(const httplib::Response& res, bool headOnly, bool keepAlive) {
  std::string out = "HTTP/1.1 " + std::to_string(res.status) + " ";
  out += reasonPhrase(res.status);
  out += "\r\n";
  for (const auto& [k, v] : res.headers) {
    if (equalFold(k, "Content-Length") || equalFold(k, "Connection")) continue;
    out += k + ": " + v + "\r\n";
  }
  out += "Content-Length: " + std::to_string(res.body.size()) + "\r\n";
  out += keepAlive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  if (!headOnly) out += res.body;
  return out;
}

}  // namespace ksched::server
