#include <algorithm>

#include <ksched/api/names.h>

namespace ksched::api {
namespace {

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool isAlnum(char c) { return isLowerAlnum(c) || (c >= 'A' && c <= 'Z'); }

}  // namespace

bool isDNS1123SubdomainFormat(std::string_view s) noexcept {
  if (s.empty()) return false;
  size_t start = 0;
  while (start <= s.size()) {
    const size_t dot = std::min(s.find('.', start), s.size());
    const std::string_view label = s.substr(start, dot - start);
    if (label.empty() || !isLowerAlnum(label.front()) || !isLowerAlnum(label.back())) return false;
    for (char c : label) {
      if (!isLowerAlnum(c) && c != '-') return false;
    }
    start = dot + 1;
  }
  return true;
}

bool isDNS1123Subdomain(std::string_view s, size_t maxLen) noexcept {
  return !s.empty() && s.size() <= maxLen && isDNS1123SubdomainFormat(s);
}

bool isQualifiedNameFormat(std::string_view s) noexcept {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

bool isQualifiedNamePart(std::string_view s) noexcept {
  return s.size() <= 63 && isQualifiedNameFormat(s);
}

bool isLabelValue(std::string_view s) noexcept { return s.empty() || isQualifiedNamePart(s); }

}  // namespace ksched::api
