// http(s) URLs as the apiserver client and the extender client use them: one parser.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ksched::client {

struct HttpUrl {
  bool https = false;
  std::string host;  // without brackets for IPv6
  int port = 0;      // 443 / 80 when the URL has none
  std::string path;  // "" or "/..." without trailing '/'
};

// Parses "http(s)://host[:port][/path]" ("[v6]:port" for IPv6 hosts). On failure returns
// nullopt with `error` set to Go's wording where Go has one:
//   unsupported protocol scheme "ftp"     (anything but http and https, or none)
//   bad IPv6 host                         (an unclosed '[')
//   bad port "x"                          (not an integer in 1..65535)
//   no host
[[nodiscard]] std::optional<HttpUrl> parseHttpUrl(std::string_view url, std::string& error);

}  // namespace ksched::client
