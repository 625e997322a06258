// The type conversions int(), uint(), double(), string(), bytes() and bool(), with Go's strconv
// rules for parsing strings.
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "cel/functions_internal.h"

namespace ksched::cel::builtin {

namespace {

std::string_view conversionTarget(Fn fn) {
  switch (fn) {
    case Fn::kToInt:
      return "int";
    case Fn::kToUint:
      return "uint";
    case Fn::kToDouble:
      return "double";
    case Fn::kToBool:
      return "bool";
    default:
      return "";
  }
}

bool parseGoInt(std::string_view s, int64_t* out) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  if (s.empty() || (s.size() > 1 && s[0] == '-' && s[1] == '+')) return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parseGoUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s[0] == '-' || s[0] == '+') return false;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 10);
  return ec == std::errc() && p == s.data() + s.size();
}

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// strconv.ParseFloat(s, 64) without underscores: decimal or hexadecimal (with a p exponent)
// mantissa, inf/infinity/nan in any case; out of range is an error.
bool parseGoFloat(std::string_view s, double* out) {
  std::string_view body = s;
  bool neg = false;
  if (!body.empty() && (body[0] == '+' || body[0] == '-')) {
    neg = body[0] == '-';
    body.remove_prefix(1);
  }
  if (iequals(body, "inf") || iequals(body, "infinity")) {
    *out = neg ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
    return true;
  }
  if (iequals(body, "nan")) {
    if (s.size() != body.size()) return false;
    *out = std::numeric_limits<double>::quiet_NaN();
    return true;
  }
  if (body.empty()) return false;
  const bool hex = body.size() > 2 && body[0] == '0' && (body[1] == 'x' || body[1] == 'X');
  size_t i = hex ? 2 : 0;
  auto isDig = [&](char ch) {
    return hex ? std::isxdigit(static_cast<unsigned char>(ch)) != 0 : (ch >= '0' && ch <= '9');
  };
  size_t digits = 0;
  while (i < body.size() && isDig(body[i])) ++i, ++digits;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && isDig(body[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  const char expChar = hex ? 'p' : 'e';
  if (i < body.size() && std::tolower(static_cast<unsigned char>(body[i])) == expChar) {
    ++i;
    if (i < body.size() && (body[i] == '+' || body[i] == '-')) ++i;
    size_t expDigits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') ++i, ++expDigits;
    if (expDigits == 0) return false;
  } else if (hex) {
    return false;
  }
  if (i != body.size()) return false;
  const std::string text(s);
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size()) return false;
  if (errno == ERANGE && std::isinf(v)) return false;
  *out = v;
  return true;
}

}  // namespace

Value convert(Fn fn, const Value& v, EvalContext& c) {
  auto conversionError = [&]() {
    return c.error("type conversion error from '" + std::string(typeName(v)) + "' to '" +
                   std::string(conversionTarget(fn)) + "'");
  };
  switch (fn) {
    case Fn::kToInt:
      switch (v.kind) {
        case Kind::kInt:
          return v;
        case Kind::kUint:
          if (v.u > uint64_t(INT64_MAX)) return Value::error("integer overflow");
          return Value::integer(static_cast<int64_t>(v.u));
        case Kind::kDouble:
          if (!std::isfinite(v.d) || v.d <= -9223372036854775808.0 ||
              v.d >= 9223372036854775807.0) {
            return Value::error("integer overflow");
          }
          return Value::integer(static_cast<int64_t>(v.d));
        case Kind::kString: {
          int64_t r = 0;
          if (!parseGoInt(v.sv(), &r)) return conversionError();
          return Value::integer(r);
        }
        default:
          return noSuchOverload();
      }
    case Fn::kToUint:
      switch (v.kind) {
        case Kind::kUint:
          return v;
        case Kind::kInt:
          if (v.i < 0) return Value::error("unsigned integer overflow");
          return Value::uinteger(static_cast<uint64_t>(v.i));
        case Kind::kDouble:
          if (!std::isfinite(v.d) || v.d < 0 || v.d >= 18446744073709551616.0) {
            return Value::error("unsigned integer overflow");
          }
          return Value::uinteger(static_cast<uint64_t>(v.d));
        case Kind::kString: {
          uint64_t r = 0;
          if (!parseGoUint(v.sv(), &r)) return conversionError();
          return Value::uinteger(r);
        }
        default:
          return noSuchOverload();
      }
    case Fn::kToDouble:
      switch (v.kind) {
        case Kind::kDouble:
          return v;
        case Kind::kInt:
          return Value::dbl(static_cast<double>(v.i));
        case Kind::kUint:
          return Value::dbl(static_cast<double>(v.u));
        case Kind::kString: {
          double r = 0;
          if (!parseGoFloat(v.sv(), &r)) return conversionError();
          return Value::dbl(r);
        }
        default:
          return noSuchOverload();
      }
    case Fn::kToString:
      switch (v.kind) {
        case Kind::kString:
          return v;
        case Kind::kInt:
          return makeString(c, std::to_string(v.i));
        case Kind::kUint:
          return makeString(c, std::to_string(v.u));
        case Kind::kDouble:
          return makeString(c, formatDouble(v.d));
        case Kind::kBool:
          return Value::str(v.b ? "true" : "false");
        case Kind::kBytes:
          if (!validUtf8(v.sv())) {
            return Value::error("invalid UTF-8 in bytes, cannot convert to string");
          }
          return Value::str(v.sv());
        default:
          return noSuchOverload();
      }
    case Fn::kToBytes:
      if (v.kind == Kind::kBytes) return v;
      if (v.kind == Kind::kString) return Value::bytes(v.sv());
      return noSuchOverload();
    case Fn::kToBool:
      if (v.kind == Kind::kBool) return v;
      if (v.kind == Kind::kString) {
        const std::string_view s = v.sv();
        if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") {
          return Value::boolean(true);
        }
        if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
          return Value::boolean(false);
        }
        return conversionError();
      }
      return noSuchOverload();
    default:
      return noSuchOverload();
  }
}

}  // namespace ksched::cel::builtin
