#include "cel/functions.h"

#include <re2/re2.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/utf8.h>

namespace ksched::cel {

namespace {

constexpr double kStringTraversalCostFactor = 0.1;
constexpr double kRegexStringLengthCostFactor = 0.25;

uint64_t ceilCost(double x) { return static_cast<uint64_t>(std::ceil(x)); }

Value noSuchOverload() { return Value::error(kNoSuchOverload); }

Value makeString(EvalContext& c, std::string_view s) { return Value::str(c.arena.copy(s)); }

Value makeList(EvalContext& c, const std::vector<Value>& items) {
  auto* l = c.arena.make<ListData>();
  Value* data = c.arena.allocArray<Value>(items.size());
  for (size_t i = 0; i < items.size(); ++i) data[i] = items[i];
  l->items = data;
  l->size = items.size();
  return Value::ofList(l);
}

Value makeQuantity(EvalContext& c, const api::Quantity& q) {
  return Value::ofQuantity(c.arena.make<api::Quantity>(q));
}

// ---- Unicode helpers (Go's []rune conversion: invalid bytes become U+FFFD) ------------------

std::u32string toRunes(std::string_view s) {
  std::u32string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size() || !validUtf8(s.substr(i, len))) {
      out += U'\uFFFD';
      ++i;
      continue;
    }
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    out += static_cast<char32_t>(cp);
    i += len;
  }
  return out;
}

std::string fromRunes(std::u32string_view r) {
  std::string out;
  out.reserve(r.size());
  for (char32_t cp : r) api::appendUtf8(out, cp);
  return out;
}

bool isUnicodeSpace(char32_t r) {
  switch (r) {
    case U'\t':
    case U'\n':
    case U'\v':
    case U'\f':
    case U'\r':
    case U' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

size_t runeLength(std::string_view s, size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (at + len > s.size() || !validUtf8(s.substr(at, len))) return 1;
  return len;
}

// ---- Arithmetic and comparison --------------------------------------------------------------

Value arith(Fn fn, const Value& a, const Value& b, EvalContext& c) {
  if (a.kind != b.kind) return noSuchOverload();
  switch (a.kind) {
    case Kind::kInt: {
      int64_t r = 0;
      const int64_t x = a.i, y = b.i;
      switch (fn) {
        case Fn::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kDiv:
          if (y == 0) return Value::error("division by zero");
          if (x == INT64_MIN && y == -1) return Value::error("integer overflow");
          return Value::integer(x / y);
        case Fn::kMod:
          if (y == 0) return Value::error("modulus by zero");
          if (x == INT64_MIN && y == -1) return Value::error("integer overflow");
          return Value::integer(x % y);
        default:
          return noSuchOverload();
      }
    }
    case Kind::kUint: {
      uint64_t r = 0;
      const uint64_t x = a.u, y = b.u;
      switch (fn) {
        case Fn::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kDiv:
          if (y == 0) return Value::error("division by zero");
          return Value::uinteger(x / y);
        case Fn::kMod:
          if (y == 0) return Value::error("modulus by zero");
          return Value::uinteger(x % y);
        default:
          return noSuchOverload();
      }
    }
    case Kind::kDouble:
      switch (fn) {
        case Fn::kAdd:
          return Value::dbl(a.d + b.d);
        case Fn::kSub:
          return Value::dbl(a.d - b.d);
        case Fn::kMul:
          return Value::dbl(a.d * b.d);
        case Fn::kDiv:
          return Value::dbl(a.d / b.d);
        default:
          return noSuchOverload();
      }
    case Kind::kString:
    case Kind::kBytes: {
      if (fn != Fn::kAdd) return noSuchOverload();
      const size_t n = a.s.size + b.s.size;
      char* p = c.arena.allocArray<char>(n);
      if (a.s.size) std::memcpy(p, a.s.data, a.s.size);
      if (b.s.size) std::memcpy(p + a.s.size, b.s.data, b.s.size);
      return Value::str(std::string_view(p, n), a.kind);
    }
    case Kind::kList: {
      if (fn != Fn::kAdd) return noSuchOverload();
      if (a.list->size == 0) return b;
      if (b.list->size == 0) return a;
      const size_t n = a.list->size + b.list->size;
      Value* items = c.arena.allocArray<Value>(n);
      std::copy(a.list->items, a.list->items + a.list->size, items);
      std::copy(b.list->items, b.list->items + b.list->size, items + a.list->size);
      return Value::ofList(c.arena.make<ListData>(ListData{items, n}));
    }
    default:
      return noSuchOverload();
  }
}

bool isNumber(const Value& v) {
  return v.kind == Kind::kInt || v.kind == Kind::kUint || v.kind == Kind::kDouble;
}

// -1, 0, 1, or an error value in *err.
int compareValues(const Value& a, const Value& b, Value* err) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (isNumber(a) && isNumber(b)) {
    const int r = compareNumbers(a, b);
    if (r == 2) {
      *err = Value::error("NaN values cannot be ordered");
      return 0;
    }
    return r;
  }
  if (a.kind != b.kind) {
    *err = noSuchOverload();
    return 0;
  }
  switch (a.kind) {
    case Kind::kBool:
      return cmp(a.b, b.b);
    case Kind::kString:
    case Kind::kBytes: {
      const int r = a.sv().compare(b.sv());
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    default:
      *err = noSuchOverload();
      return 0;
  }
}

// ---- Index and membership -------------------------------------------------------------------

Value indexValue(const Value& obj, const Value& key, EvalContext& c) {
  if (obj.kind == Kind::kList) {
    int64_t i = 0;
    switch (key.kind) {
      case Kind::kInt:
        i = key.i;
        break;
      case Kind::kUint:
        if (key.u > uint64_t(INT64_MAX)) return c.error("index out of bounds: " + formatKey(key));
        i = static_cast<int64_t>(key.u);
        break;
      case Kind::kDouble: {
        const double t = std::trunc(key.d);
        if (t != key.d || std::isnan(key.d) || std::abs(key.d) >= 9.2e18) {
          return c.error("unsupported index value " + formatDouble(key.d) + " in list");
        }
        i = static_cast<int64_t>(t);
        break;
      }
      default:
        return c.error("unsupported index type '" + std::string(typeName(key)) + "' in list");
    }
    if (i < 0 || static_cast<uint64_t>(i) >= obj.list->size) {
      return c.error("index out of bounds: " + formatKey(key));
    }
    return obj.list->items[i];
  }
  if (obj.isMapLike()) {
    if (obj.kind == Kind::kMap &&
        !(key.kind == Kind::kString || key.kind == Kind::kBool || isNumber(key))) {
      return c.error("unsupported key type");
    }
    Value out;
    if (mapFind(obj, key, c, &out)) return out;
  }
  return c.error("no such key: " + formatKey(key));
}

Value inValue(const Value& elem, const Value& container, EvalContext& c) {
  if (container.kind == Kind::kList) {
    Value firstErr;
    bool sawErr = false;
    for (size_t i = 0; i < container.list->size; ++i) {
      Value e = equals(container.list->items[i], elem, c);
      if (e.kind == Kind::kBool) {
        if (e.b) return e;
      } else if (!sawErr) {
        sawErr = true;
        firstErr = e.isError() ? e : noSuchOverload();
      }
    }
    return sawErr ? firstErr : Value::boolean(false);
  }
  if (container.isMapLike()) return Value::boolean(mapContains(container, elem, c));
  return noSuchOverload();
}

// ---- Conversions ----------------------------------------------------------------------------

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

// ---- Regular expressions ----------------------------------------------------------------------

std::unique_ptr<re2::RE2> compileRegex(std::string_view pattern, std::string* error) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  auto re = std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
  if (!re->ok()) {
    *error = "error parsing regexp: " + re->error();
    return nullptr;
  }
  return re;
}

Value regexCall(Fn fn, const Value* args, size_t n, const re2::RE2* pre, EvalContext& c) {
  std::unique_ptr<re2::RE2> owned;
  const re2::RE2* re = pre;
  if (re == nullptr) {
    std::string error;
    owned = compileRegex(args[1].sv(), &error);
    if (!owned) return c.error(error);
    re = owned.get();
  }
  const std::string_view text = args[0].sv();
  const re2::StringPiece input(text.data(), text.size());
  if (fn == Fn::kMatches) {
    return Value::boolean(re2::RE2::PartialMatch(input, *re));
  }
  re2::StringPiece m;
  if (fn == Fn::kFind) {
    if (!re->Match(input, 0, input.size(), re2::RE2::UNANCHORED, &m, 1)) return Value::str("");
    return Value::str(std::string_view(m.data(), m.size()));
  }
  // findAll: successive non-overlapping matches; an empty match right after the previous
  // match is skipped (Go's FindAllString).
  int64_t limit = -1;
  if (n == 3) limit = args[2].i;
  std::vector<Value> out;
  size_t pos = 0;
  size_t prevEnd = std::string_view::npos;
  while (pos <= text.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit)) {
    if (!re->Match(input, pos, input.size(), re2::RE2::UNANCHORED, &m, 1)) break;
    const size_t start = static_cast<size_t>(m.data() - text.data());
    const size_t end = start + m.size();
    if (!(m.empty() && start == prevEnd))
      out.push_back(Value::str(std::string_view(m.data(), m.size())));
    prevEnd = end;
    if (end > pos) {
      pos = end;
    } else {
      if (pos >= text.size()) break;
      pos += runeLength(text, pos);
    }
  }
  return makeList(c, out);
}

// ---- Strings extension (cel-go ext/strings.go) ------------------------------------------------

Value stringsCall(Fn fn, const Value* args, size_t n, EvalContext& c) {
  const std::string_view s = args[0].sv();
  auto outOfRange = [&](int64_t i) { return c.error("index out of range: " + std::to_string(i)); };
  switch (fn) {
    case Fn::kCharAt: {
      const std::u32string r = toRunes(s);
      const int64_t i = args[1].i;
      if (i < 0 || static_cast<uint64_t>(i) > r.size()) return outOfRange(i);
      if (static_cast<uint64_t>(i) == r.size()) return Value::str("");
      return makeString(c, fromRunes(std::u32string_view(r).substr(static_cast<size_t>(i), 1)));
    }
    case Fn::kIndexOf:
    case Fn::kLastIndexOf: {
      const std::u32string r = toRunes(s);
      const std::u32string sub = toRunes(args[1].sv());
      const bool last = fn == Fn::kLastIndexOf;
      int64_t off = 0;
      if (n == 3) {
        off = args[2].i;
      } else if (last) {
        if (sub.empty()) return Value::integer(static_cast<int64_t>(r.size()));
        if (s.size() < args[1].s.size) return Value::integer(-1);
        off = static_cast<int64_t>(r.size()) - 1;
      }
      if (sub.empty()) return Value::integer(off);
      if (off < 0) return outOfRange(off);
      if (static_cast<uint64_t>(off) >= r.size()) return Value::integer(-1);
      const int64_t len = static_cast<int64_t>(r.size()), sl = static_cast<int64_t>(sub.size());
      if (!last) {
        for (int64_t i = off; i < len - (sl - 1); ++i) {
          if (r.compare(static_cast<size_t>(i), sub.size(), sub) == 0) return Value::integer(i);
        }
        return Value::integer(-1);
      }
      if (off > len - sl) off = len - sl;
      for (int64_t i = off; i >= 0; --i) {
        if (r.compare(static_cast<size_t>(i), sub.size(), sub) == 0) return Value::integer(i);
      }
      return Value::integer(-1);
    }
    case Fn::kLowerAscii:
    case Fn::kUpperAscii: {
      std::u32string r = toRunes(s);
      for (char32_t& ch : r) {
        if (fn == Fn::kLowerAscii && ch >= U'A' && ch <= U'Z') ch += 32;
        if (fn == Fn::kUpperAscii && ch >= U'a' && ch <= U'z') ch -= 32;
      }
      return makeString(c, fromRunes(r));
    }
    case Fn::kReplace: {
      const std::string_view from = args[1].sv(), to = args[2].sv();
      int64_t limit = n == 4 ? args[3].i : -1;
      std::string out;
      size_t pos = 0;
      int64_t done = 0;
      if (from.empty()) {
        // Go inserts the replacement before each rune and at the end.
        while (limit < 0 || done < limit) {
          out += to;
          ++done;
          if (pos >= s.size()) break;
          const size_t w = runeLength(s, pos);
          out += s.substr(pos, w);
          pos += w;
        }
        out += s.substr(std::min(pos, s.size()));
        return makeString(c, out);
      }
      while (limit < 0 || done < limit) {
        const size_t at = s.find(from, pos);
        if (at == std::string_view::npos) break;
        out += s.substr(pos, at - pos);
        out += to;
        pos = at + from.size();
        ++done;
      }
      out += s.substr(pos);
      return makeString(c, out);
    }
    case Fn::kSplit: {
      const std::string_view sep = args[1].sv();
      const int64_t limit = n == 3 ? args[2].i : -1;
      std::vector<Value> parts;
      if (limit == 0) return makeList(c, parts);
      if (sep.empty()) {
        size_t pos = 0;
        while (pos < s.size()) {
          if (limit > 0 && static_cast<int64_t>(parts.size()) == limit - 1) {
            parts.push_back(Value::str(s.substr(pos)));
            return makeList(c, parts);
          }
          const size_t w = runeLength(s, pos);
          parts.push_back(Value::str(s.substr(pos, w)));
          pos += w;
        }
        return makeList(c, parts);
      }
      size_t pos = 0;
      while (limit < 0 || static_cast<int64_t>(parts.size()) < limit - 1) {
        const size_t at = s.find(sep, pos);
        if (at == std::string_view::npos) break;
        parts.push_back(Value::str(s.substr(pos, at - pos)));
        pos = at + sep.size();
      }
      parts.push_back(Value::str(s.substr(pos)));
      return makeList(c, parts);
    }
    case Fn::kSubstring: {
      const std::u32string r = toRunes(s);
      const int64_t l = static_cast<int64_t>(r.size());
      const int64_t start = args[1].i;
      int64_t end = l;
      if (n == 3) {
        end = args[2].i;
        if (start > end) {
          return c.error("invalid substring range. start: " + std::to_string(start) +
                         ", end: " + std::to_string(end));
        }
      }
      if (start < 0 || start > l) return outOfRange(start);
      if (end < 0 || end > l) return outOfRange(end);
      return makeString(c, fromRunes(std::u32string_view(r).substr(
                               static_cast<size_t>(start), static_cast<size_t>(end - start))));
    }
    case Fn::kTrim: {
      const std::u32string r = toRunes(s);
      size_t b = 0, e = r.size();
      while (b < e && isUnicodeSpace(r[b])) ++b;
      while (e > b && isUnicodeSpace(r[e - 1])) --e;
      return makeString(c, fromRunes(std::u32string_view(r).substr(b, e - b)));
    }
    default:
      return noSuchOverload();
  }
}

Value joinCall(const Value* args, size_t n, EvalContext& c) {
  const ListData& l = *args[0].list;
  const std::string_view sep = n == 2 ? args[1].sv() : std::string_view();
  std::string out;
  for (size_t i = 0; i < l.size; ++i) {
    if (l.items[i].kind != Kind::kString) {
      return c.error("join: invalid input: " + formatKey(l.items[i]));
    }
    if (i > 0) out += sep;
    out += l.items[i].sv();
  }
  return makeString(c, out);
}

// ---- Semver and quantity ------------------------------------------------------------------------

Value semverCall(Fn fn, const Value* args, size_t n, EvalContext& c) {
  if (args[0].kind != Kind::kString || (n == 2 && args[1].kind != Kind::kBool)) {
    return noSuchOverload();
  }
  auto* v = c.arena.make<Semver>();
  std::string err;
  const bool normalize = n == 2 && args[1].b;
  const bool ok = normalize ? parseSemverNormalized(args[0].sv(), c.arena, v, &err)
                            : parseSemver(args[0].sv(), v, &err);
  if (fn == Fn::kIsSemver) return Value::boolean(ok);
  if (!ok) return c.error(err);
  return Value::ofSemver(v);
}

constexpr std::string_view kQuantityFormatError =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// resource.ParseQuantity's first check: ^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$
bool quantityShape(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  const size_t numStart = i;
  while (i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.')) ++i;
  if (i == numStart) return false;
  static constexpr std::string_view kSuffix = "eEinumkKMGTP";
  while (i < s.size() && kSuffix.find(s[i]) != std::string_view::npos) ++i;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  return i == s.size();
}

// Quantity.AsApproximateFloat64 from the canonical text.
double quantityToDouble(const api::Quantity& q) {
  const std::string text = q.toString();
  size_t i = 0;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
  while (i < text.size() && ((text[i] >= '0' && text[i] <= '9') || text[i] == '.')) ++i;
  const double base = std::strtod(text.substr(0, i).c_str(), nullptr);
  const std::string_view suffix = std::string_view(text).substr(i);
  if (suffix.empty()) return base;
  if (suffix[0] == 'e' || suffix[0] == 'E') {
    return base * std::pow(10.0, std::strtod(std::string(suffix.substr(1)).c_str(), nullptr));
  }
  static constexpr std::pair<std::string_view, double> kSuffixes[] = {
      {"n", 1e-9},    {"u", 1e-6},    {"m", 1e-3},    {"k", 1e3},     {"M", 1e6},
      {"G", 1e9},     {"T", 1e12},    {"P", 1e15},    {"E", 1e18},    {"Ki", 0x1p10},
      {"Mi", 0x1p20}, {"Gi", 0x1p30}, {"Ti", 0x1p40}, {"Pi", 0x1p50}, {"Ei", 0x1p60}};
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) return base * factor;
  }
  return base;
}

bool quantityAsInt(const api::Quantity& q, int64_t* out) {
  const int64_t v = q.value();
  if (api::Quantity::fromValue(v) != q) return false;
  *out = v;
  return true;
}

Value quantityCall(Fn fn, const Value* args, size_t n, EvalContext& c) {
  if (fn == Fn::kQuantity || fn == Fn::kIsQuantity) {
    if (args[0].kind != Kind::kString) return noSuchOverload();
    const std::string_view s = args[0].sv();
    std::optional<api::Quantity> q;
    if (quantityShape(s)) q = api::Quantity::tryParse(s);
    if (fn == Fn::kIsQuantity) return Value::boolean(q.has_value());
    if (!quantityShape(s)) return Value::error(kQuantityFormatError);
    if (!q) return Value::error("unable to parse quantity's suffix");
    return makeQuantity(c, *q);
  }
  if (args[0].kind != Kind::kQuantity) return noSuchOverload();
  const api::Quantity& q = *args[0].quantity;
  switch (fn) {
    case Fn::kSign:
      return Value::integer(q.sign());
    case Fn::kAsApproximateFloat:
      return Value::dbl(quantityToDouble(q));
    case Fn::kAsInteger: {
      int64_t v = 0;
      if (!quantityAsInt(q, &v)) return Value::error("cannot convert value to integer");
      return Value::integer(v);
    }
    case Fn::kIsInteger: {
      int64_t v = 0;
      return Value::boolean(quantityAsInt(q, &v));
    }
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub: {
      if (n != 2) return noSuchOverload();
      api::Quantity other;
      if (args[1].kind == Kind::kQuantity) {
        other = *args[1].quantity;
      } else if (args[1].kind == Kind::kInt) {
        other = api::Quantity::fromValue(args[1].i, api::QuantityFormat::kDecimalExponent);
      } else {
        return noSuchOverload();
      }
      return makeQuantity(c, fn == Fn::kQuantityAdd ? q + other : q - other);
    }
    default:
      return noSuchOverload();
  }
}

Value compareCall(Fn fn, const Value* args, EvalContext&) {
  int r = 0;
  if (args[0].kind == Kind::kSemver && args[1].kind == Kind::kSemver) {
    r = compareSemver(*args[0].semver, *args[1].semver);
  } else if (args[0].kind == Kind::kQuantity && args[1].kind == Kind::kQuantity) {
    const auto o = *args[0].quantity <=> *args[1].quantity;
    r = o < 0 ? -1 : (o > 0 ? 1 : 0);
  } else {
    return noSuchOverload();
  }
  if (fn == Fn::kIsGreaterThan) return Value::boolean(r == 1);
  if (fn == Fn::kIsLessThan) return Value::boolean(r == -1);
  return Value::integer(r);
}

bool allStrings(const Value* args, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (args[i].kind != Kind::kString) return false;
  }
  return true;
}

Value dispatch(Fn fn, const Value* args, size_t n, const re2::RE2* regex, EvalContext& c) {
  switch (fn) {
    case Fn::kAdd:
    case Fn::kSub:
    case Fn::kMul:
    case Fn::kDiv:
    case Fn::kMod:
      return arith(fn, args[0], args[1], c);
    case Fn::kNeg:
      if (args[0].kind == Kind::kInt) {
        if (args[0].i == INT64_MIN) return Value::error("integer overflow");
        return Value::integer(-args[0].i);
      }
      if (args[0].kind == Kind::kDouble) return Value::dbl(-args[0].d);
      return noSuchOverload();
    case Fn::kNot:
      if (args[0].kind != Kind::kBool) return noSuchOverload();
      return Value::boolean(!args[0].b);
    case Fn::kEq:
      return equals(args[0], args[1], c);
    case Fn::kNe: {
      Value e = equals(args[0], args[1], c);
      if (e.kind == Kind::kBool) e.b = !e.b;
      return e;
    }
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe: {
      Value err;
      const int r = compareValues(args[0], args[1], &err);
      if (err.isError()) return err;
      switch (fn) {
        case Fn::kLt:
          return Value::boolean(r < 0);
        case Fn::kLe:
          return Value::boolean(r <= 0);
        case Fn::kGt:
          return Value::boolean(r > 0);
        default:
          return Value::boolean(r >= 0);
      }
    }
    case Fn::kIndex:
      return indexValue(args[0], args[1], c);
    case Fn::kIn:
      return inValue(args[0], args[1], c);
    case Fn::kSize:
      switch (args[0].kind) {
        case Kind::kString:
          return Value::integer(static_cast<int64_t>(codePoints(args[0].sv())));
        case Kind::kBytes:
          return Value::integer(static_cast<int64_t>(args[0].s.size));
        case Kind::kList:
          return Value::integer(static_cast<int64_t>(args[0].list->size));
        default:
          if (args[0].isMapLike()) return Value::integer(static_cast<int64_t>(mapSize(args[0], c)));
          return noSuchOverload();
      }
    case Fn::kContains:
    case Fn::kStartsWith:
    case Fn::kEndsWith: {
      if (!allStrings(args, 2)) return noSuchOverload();
      const std::string_view s = args[0].sv(), t = args[1].sv();
      if (fn == Fn::kContains) return Value::boolean(s.find(t) != std::string_view::npos);
      if (fn == Fn::kStartsWith) return Value::boolean(s.substr(0, t.size()) == t);
      return Value::boolean(s.size() >= t.size() && s.substr(s.size() - t.size()) == t);
    }
    case Fn::kMatches:
    case Fn::kFind:
    case Fn::kFindAll:
      if (!allStrings(args, 2) || (n == 3 && args[2].kind != Kind::kInt)) return noSuchOverload();
      return regexCall(fn, args, n, regex, c);
    case Fn::kToInt:
    case Fn::kToUint:
    case Fn::kToDouble:
    case Fn::kToString:
    case Fn::kToBytes:
    case Fn::kToBool:
      return convert(fn, args[0], c);
    case Fn::kDyn:
      return args[0];
    case Fn::kCharAt:
    case Fn::kSubstring:
      if (args[0].kind != Kind::kString) return noSuchOverload();
      for (size_t i = 1; i < n; ++i) {
        if (args[i].kind != Kind::kInt) return noSuchOverload();
      }
      return stringsCall(fn, args, n, c);
    case Fn::kIndexOf:
    case Fn::kLastIndexOf:
    case Fn::kSplit:
      if (!allStrings(args, 2) || (n == 3 && args[2].kind != Kind::kInt)) return noSuchOverload();
      return stringsCall(fn, args, n, c);
    case Fn::kReplace:
      if (!allStrings(args, 3) || (n == 4 && args[3].kind != Kind::kInt)) return noSuchOverload();
      return stringsCall(fn, args, n, c);
    case Fn::kLowerAscii:
    case Fn::kUpperAscii:
    case Fn::kTrim:
      if (args[0].kind != Kind::kString) return noSuchOverload();
      return stringsCall(fn, args, n, c);
    case Fn::kJoin:
      if (args[0].kind != Kind::kList || (n == 2 && args[1].kind != Kind::kString)) {
        return noSuchOverload();
      }
      return joinCall(args, n, c);
    case Fn::kSemver:
    case Fn::kIsSemver:
      return semverCall(fn, args, n, c);
    case Fn::kMajor:
    case Fn::kMinor:
    case Fn::kPatch: {
      if (args[0].kind != Kind::kSemver) return noSuchOverload();
      const Semver& v = *args[0].semver;
      const uint64_t x = fn == Fn::kMajor ? v.major : fn == Fn::kMinor ? v.minor : v.patch;
      return Value::integer(static_cast<int64_t>(x));
    }
    case Fn::kQuantity:
    case Fn::kIsQuantity:
    case Fn::kSign:
    case Fn::kAsApproximateFloat:
    case Fn::kAsInteger:
    case Fn::kIsInteger:
    case Fn::kQuantityAdd:
    case Fn::kQuantitySub:
      return quantityCall(fn, args, n, c);
    case Fn::kIsGreaterThan:
    case Fn::kIsLessThan:
    case Fn::kCompareTo:
      return compareCall(fn, args, c);
    case Fn::kUnknown:
      break;
  }
  return noSuchOverload();
}

// The runtime cost cel-go's tracker (with the Kubernetes library's estimator) charges a call.
uint64_t callCost(Fn fn, const Value* args, size_t n, const Value& result, EvalContext& c) {
  auto size = [&](size_t i) -> double {
    return i < n ? static_cast<double>(actualSize(args[i], c)) : 1.0;
  };
  switch (fn) {
    case Fn::kStartsWith:
    case Fn::kEndsWith:
      return ceilCost(size(0) * kStringTraversalCostFactor);
    case Fn::kToBytes:
    case Fn::kToString:
      if ((fn == Fn::kToBytes && args[0].kind == Kind::kString) ||
          (fn == Fn::kToString && args[0].kind == Kind::kBytes)) {
        return ceilCost(size(0) * kStringTraversalCostFactor);
      }
      return 1;
    case Fn::kIn:
      return args[1].kind == Kind::kList ? args[1].list->size : 1;
    case Fn::kLt:
    case Fn::kLe:
    case Fn::kGt:
    case Fn::kGe:
      if ((args[0].kind == Kind::kString || args[0].kind == Kind::kBytes) &&
          args[1].kind == args[0].kind) {
        return ceilCost(std::min(size(0), size(1)) * kStringTraversalCostFactor);
      }
      return 1;
    case Fn::kEq:
      if (args[0].kind == Kind::kQuantity || args[0].kind == Kind::kSemver) return 1;
      [[fallthrough]];
    case Fn::kNe:
      return ceilCost(std::min(size(0), size(1)) * kStringTraversalCostFactor);
    case Fn::kAdd:
      if (args[0].kind == Kind::kString || args[0].kind == Kind::kBytes) {
        return ceilCost((size(0) + size(1)) * kStringTraversalCostFactor);
      }
      return 1;
    case Fn::kMatches:
    case Fn::kFind:
    case Fn::kFindAll:
      return ceilCost((1.0 + size(0)) * kStringTraversalCostFactor) *
             ceilCost(size(1) * kRegexStringLengthCostFactor);
    case Fn::kContains:
      return ceilCost(size(0) * kStringTraversalCostFactor) *
             ceilCost(size(1) * kStringTraversalCostFactor);
    case Fn::kLowerAscii:
    case Fn::kUpperAscii:
    case Fn::kSubstring:
    case Fn::kTrim:
    case Fn::kIndexOf:
    case Fn::kLastIndexOf:
    case Fn::kQuantity:
    case Fn::kIsQuantity:
    case Fn::kSemver:
    case Fn::kIsSemver:
      return ceilCost(size(0) * kStringTraversalCostFactor);
    case Fn::kReplace:
    case Fn::kSplit:
      return ceilCost(size(0) * 2 * kStringTraversalCostFactor);
    case Fn::kJoin:
      return ceilCost(static_cast<double>(actualSize(result, c)) * 2 * kStringTraversalCostFactor);
    default:
      return 1;
  }
}

}  // namespace

Fn resolveFunction(std::string_view name, bool member, size_t n) {
  struct Entry {
    std::string_view name;
    Fn fn;
    int8_t member;             // 1 member, 0 global, -1 either
    uint8_t minArgs, maxArgs;  // counting the target
  };
  static constexpr Entry kTable[] = {
      {"_+_", Fn::kAdd, 0, 2, 2},
      {"_-_", Fn::kSub, 0, 2, 2},
      {"_*_", Fn::kMul, 0, 2, 2},
      {"_/_", Fn::kDiv, 0, 2, 2},
      {"_%_", Fn::kMod, 0, 2, 2},
      {"-_", Fn::kNeg, 0, 1, 1},
      {"!_", Fn::kNot, 0, 1, 1},
      {"_==_", Fn::kEq, 0, 2, 2},
      {"_!=_", Fn::kNe, 0, 2, 2},
      {"_<_", Fn::kLt, 0, 2, 2},
      {"_<=_", Fn::kLe, 0, 2, 2},
      {"_>_", Fn::kGt, 0, 2, 2},
      {"_>=_", Fn::kGe, 0, 2, 2},
      {"_[_]", Fn::kIndex, 0, 2, 2},
      {"@in", Fn::kIn, 0, 2, 2},
      {"size", Fn::kSize, -1, 1, 1},
      {"contains", Fn::kContains, 1, 2, 2},
      {"startsWith", Fn::kStartsWith, 1, 2, 2},
      {"endsWith", Fn::kEndsWith, 1, 2, 2},
      {"matches", Fn::kMatches, -1, 2, 2},
      {"int", Fn::kToInt, 0, 1, 1},
      {"uint", Fn::kToUint, 0, 1, 1},
      {"double", Fn::kToDouble, 0, 1, 1},
      {"string", Fn::kToString, 0, 1, 1},
      {"bytes", Fn::kToBytes, 0, 1, 1},
      {"bool", Fn::kToBool, 0, 1, 1},
      {"dyn", Fn::kDyn, 0, 1, 1},
      {"charAt", Fn::kCharAt, 1, 2, 2},
      {"indexOf", Fn::kIndexOf, 1, 2, 3},
      {"lastIndexOf", Fn::kLastIndexOf, 1, 2, 3},
      {"lowerAscii", Fn::kLowerAscii, 1, 1, 1},
      {"upperAscii", Fn::kUpperAscii, 1, 1, 1},
      {"replace", Fn::kReplace, 1, 3, 4},
      {"split", Fn::kSplit, 1, 2, 3},
      {"substring", Fn::kSubstring, 1, 2, 3},
      {"trim", Fn::kTrim, 1, 1, 1},
      {"join", Fn::kJoin, 1, 1, 2},
      {"find", Fn::kFind, 1, 2, 2},
      {"findAll", Fn::kFindAll, 1, 2, 3},
      {"semver", Fn::kSemver, 0, 1, 2},
      {"isSemver", Fn::kIsSemver, 0, 1, 2},
      {"major", Fn::kMajor, 1, 1, 1},
      {"minor", Fn::kMinor, 1, 1, 1},
      {"patch", Fn::kPatch, 1, 1, 1},
      {"quantity", Fn::kQuantity, 0, 1, 1},
      {"isQuantity", Fn::kIsQuantity, 0, 1, 1},
      {"sign", Fn::kSign, 0, 1, 1},
      {"asApproximateFloat", Fn::kAsApproximateFloat, 1, 1, 1},
      {"asInteger", Fn::kAsInteger, 1, 1, 1},
      {"isInteger", Fn::kIsInteger, 1, 1, 1},
      {"add", Fn::kQuantityAdd, 1, 2, 2},
      {"sub", Fn::kQuantitySub, 1, 2, 2},
      {"isGreaterThan", Fn::kIsGreaterThan, 1, 2, 2},
      {"isLessThan", Fn::kIsLessThan, 1, 2, 2},
      {"compareTo", Fn::kCompareTo, 1, 2, 2},
  };
  for (const Entry& e : kTable) {
    if (e.name != name) continue;
    if (e.member != -1 && (e.member == 1) != member) return Fn::kUnknown;
    if (n < e.minArgs || n > e.maxArgs) return Fn::kUnknown;
    return e.fn;
  }
  return Fn::kUnknown;
}

bool takesRegex(Fn fn, size_t i) {
  return i == 1 && (fn == Fn::kMatches || fn == Fn::kFind || fn == Fn::kFindAll);
}

std::unique_ptr<re2::RE2> compilePattern(std::string_view pattern, std::string* error) {
  return compileRegex(pattern, error);
}

Value callFunction(Fn fn, const Value* args, size_t n, const re2::RE2* regex, EvalContext& c) {
  Value result = dispatch(fn, args, n, regex, c);
  c.addCost(static_cast<int64_t>(callCost(fn, args, n, result, c)));
  return result;
}

}  // namespace ksched::cel
