#include "client/url.h"

#include <charconv>

namespace ksched::client {

std::optional<HttpUrl> parseHttpUrl(std::string_view url, std::string& error) {
  HttpUrl u;
  std::string_view rest;
  if (url.starts_with("https://")) {
    u.https = true;
    u.port = 443;
    rest = url.substr(8);
  } else if (url.starts_with("http://")) {
    u.port = 80;
    rest = url.substr(7);
  } else {
    const auto colon = url.find("://");
    error =
        "unsupported protocol scheme \"" +
        std::string(colon == std::string_view::npos ? std::string_view() : url.substr(0, colon)) +
        "\"";
    return std::nullopt;
  }
  const auto slash = rest.find('/');
  std::string_view hostPort = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    u.path = path;
  }
  std::string_view portText;
  if (!hostPort.empty() && hostPort.front() == '[') {
    const auto close = hostPort.find(']');
    if (close == std::string_view::npos) {
      error = "bad IPv6 host";
      return std::nullopt;
    }
    u.host = hostPort.substr(1, close - 1);
    if (close + 1 < hostPort.size() && hostPort[close + 1] == ':') {
      portText = hostPort.substr(close + 2);
    }
  } else if (const auto colon = hostPort.rfind(':'); colon != std::string_view::npos) {
    u.host = hostPort.substr(0, colon);
    portText = hostPort.substr(colon + 1);
  } else {
    u.host = hostPort;
  }
  if (!portText.empty()) {
    int port = 0;
    const auto [end, ec] =
        std::from_chars(portText.data(), portText.data() + portText.size(), port);
    if (ec != std::errc() || end != portText.data() + portText.size() || port <= 0 ||
        port > 65535) {
      error = "bad port \"" + std::string(portText) + "\"";
      return std::nullopt;
    }
    u.port = port;
  }
  if (u.host.empty()) {
    error = "no host";
    return std::nullopt;
  }
  return u;
}

}  // namespace ksched::client
