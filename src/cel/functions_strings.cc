// The strings extension (cel-go ext/strings.go) as the Kubernetes environment declares it.
// Positions count code points, as Go's []rune conversion does (invalid bytes become U+FFFD).
#include <algorithm>
#include <string>
#include <vector>

#include <ksched/api/utf8.h>

#include "cel/functions_internal.h"

namespace ksched::cel::builtin {

namespace {

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

}  // namespace

size_t runeLength(std::string_view s, size_t at) {
  const auto c = static_cast<unsigned char>(s[at]);
  size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
  if (at + len > s.size() || !validUtf8(s.substr(at, len))) return 1;
  return len;
}

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

}  // namespace ksched::cel::builtin
