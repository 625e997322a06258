#include <cstdio>

#include <ksched/api/names.h>
#include <ksched/helper/field_error.h>
#include <ksched/registry.h>

namespace ksched::plugins::helper {
namespace {

constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr size_t kQualifiedNameMaxLength = 63;
constexpr std::string_view kDNS1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDNS1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr size_t kDNS1123SubdomainMaxLength = 253;

// Upstream validation.RegexError.
std::string regexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  out += " (e.g. ";
  bool first = true;
  for (std::string_view e : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'";
    out += e;
    out += "', ";
  }
  out += "regex used for validation is '";
  out += fmt;
  out += "')";
  return out;
}

std::string maxLenError(size_t n) {
  return "must be no more than " + std::to_string(n) + " characters";
}

// Upstream validation.IsQualifiedName: the messages, without the field path.
std::vector<std::string> qualifiedNameErrors(std::string_view value) {
  std::vector<std::string> errs;
  const size_t slash = value.find('/');
  std::string_view name = value;
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back(
          "a qualified name " +
          regexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.emplace_back("prefix part must be non-empty");
    } else {
      if (prefix.size() > kDNS1123SubdomainMaxLength) {
        errs.push_back("prefix part " + maxLenError(kDNS1123SubdomainMaxLength));
      }
      if (!api::isDNS1123SubdomainFormat(prefix)) {
        errs.push_back("prefix part " +
                       regexError(kDNS1123SubdomainErrMsg, kDNS1123SubdomainFmt, {"example.com"}));
      }
    }
  }
  if (name.empty()) {
    errs.emplace_back("name part must be non-empty");
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back("name part " + maxLenError(kQualifiedNameMaxLength));
  }
  if (!api::isQualifiedNameFormat(name)) {
    errs.push_back("name part " + regexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

}  // namespace

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        // Printable ASCII and UTF-8 bytes pass through (Go prints valid runes as they are).
        if ((c >= 0x20 && c < 0x7f) || c >= 0x80) {
          out += static_cast<char>(c);
        } else {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        }
    }
  }
  out += "\"";
  return out;
}

FieldError invalid(std::string field, std::string_view value, std::string_view detail) {
  return {std::move(field), "Invalid value: " + quote(value) + ": " + std::string(detail)};
}

FieldError invalid(std::string field, int64_t value, std::string_view detail) {
  return {std::move(field), "Invalid value: " + std::to_string(value) + ": " + std::string(detail)};
}

FieldError notSupported(std::string field, std::string_view value,
                        const std::vector<std::string>& supported) {
  std::string body = "Unsupported value: " + quote(value);
  if (!supported.empty()) {
    body += ": supported values: ";
    for (size_t i = 0; i < supported.size(); ++i) {
      if (i > 0) body += ", ";
      body += quote(supported[i]);
    }
  }
  return {std::move(field), std::move(body)};
}

FieldError required(std::string field, std::string_view detail) {
  std::string body = "Required value";
  if (!detail.empty()) body += ": " + std::string(detail);
  return {std::move(field), std::move(body)};
}

std::vector<std::string> labelValueErrors(std::string_view value) {
  constexpr size_t kMaxLen = 63;
  std::vector<std::string> errs;
  if (value.size() > kMaxLen) errs.push_back(maxLenError(kMaxLen));
  if (!value.empty() && !api::isQualifiedNameFormat(value)) {
    errs.emplace_back(
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
        "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
        "'my_value',  or '12345', regex used for validation is "
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
  }
  return errs;
}

std::vector<FieldError> validateLabelName(std::string_view value, const std::string& field) {
  std::vector<FieldError> out;
  for (const std::string& msg : qualifiedNameErrors(value))
    out.push_back(invalid(field, value, msg));
  return out;
}

void throwIfAny(const std::vector<FieldError>& errors) {
  if (!errors.empty()) throw PluginArgsError(errors.front().toString());
}

}  // namespace ksched::plugins::helper
