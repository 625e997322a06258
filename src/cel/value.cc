#include "cel/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>

namespace ksched::cel {

// ---- Arena ---------------------------------------------------------------------------------

namespace {
constexpr size_t kBlockSize = 8192;
}  // namespace

Arena::Arena(void* buffer, size_t size)
    : cur_(static_cast<char*>(buffer)),
      end_(static_cast<char*>(buffer) + size),
      initial_(static_cast<char*>(buffer)),
      initialSize_(size) {}

void* Arena::allocate(size_t size, size_t align) {
  auto p = reinterpret_cast<uintptr_t>(cur_);
  uintptr_t aligned = (p + align - 1) & ~(uintptr_t(align) - 1);
  if (cur_ != nullptr && aligned + size <= reinterpret_cast<uintptr_t>(end_)) {
    cur_ = reinterpret_cast<char*>(aligned + size);
    return reinterpret_cast<void*>(aligned);
  }
  const size_t blockSize = std::max(kBlockSize, size + align);
  blocks_.push_back(std::make_unique<char[]>(blockSize));
  char* block = blocks_.back().get();
  p = reinterpret_cast<uintptr_t>(block);
  aligned = (p + align - 1) & ~(uintptr_t(align) - 1);
  cur_ = reinterpret_cast<char*>(aligned + size);
  end_ = block + blockSize;
  return reinterpret_cast<void*>(aligned);
}

std::string_view Arena::copy(std::string_view s) {
  if (s.empty()) return {};
  char* p = allocArray<char>(s.size());
  std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

void Arena::reset() {
  if (initial_ != nullptr) {
    blocks_.clear();
    cur_ = initial_;
    end_ = initial_ + initialSize_;
    return;
  }
  if (blocks_.empty()) return;
  if (blocks_.size() > 1) blocks_.erase(blocks_.begin() + 1, blocks_.end());
  cur_ = blocks_.front().get();
  end_ = cur_ + kBlockSize;
}

// ---- Semver (github.com/blang/semver/v4 Parse and Compare) -----------------------------------

namespace {

bool onlyDigits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool alnumOrHyphen(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
  });
}

bool leadingZero(std::string_view s) { return s.size() > 1 && s[0] == '0'; }

std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// strconv.ParseUint(s, 10, 64) for a string of digits.
bool parseUint(std::string_view s, uint64_t* out, std::string* error) {
  if (s.empty()) {
    *error = "strconv.ParseUint: parsing \"\": invalid syntax";
    return false;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  if (ec != std::errc() || p != s.data() + s.size()) {
    *error = "strconv.ParseUint: parsing " + quoted(s) + ": value out of range";
    return false;
  }
  return true;
}

bool validPrerelease(std::string_view part, std::string* error) {
  if (part.empty()) {
    *error = "Prerelease is empty";
    return false;
  }
  if (onlyDigits(part)) {
    if (leadingZero(part)) {
      *error = "Numeric PreRelease version must not contain leading zeroes " + quoted(part);
      return false;
    }
    uint64_t n = 0;
    return parseUint(part, &n, error);
  }
  if (!alnumOrHyphen(part)) {
    *error = "Invalid character(s) found in prerelease " + quoted(part);
    return false;
  }
  return true;
}

template <class F>
void forEachPart(std::string_view s, F f) {
  size_t start = 0;
  while (true) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) {
      f(s.substr(start));
      return;
    }
    f(s.substr(start, dot - start));
    start = dot + 1;
  }
}

std::string_view nthPart(std::string_view s, size_t n, bool* found) {
  size_t start = 0;
  for (size_t i = 0;; ++i) {
    size_t dot = s.find('.', start);
    if (i == n) {
      *found = true;
      return dot == std::string_view::npos ? s.substr(start) : s.substr(start, dot - start);
    }
    if (dot == std::string_view::npos) {
      *found = false;
      return {};
    }
    start = dot + 1;
  }
}

}  // namespace

bool parseSemver(std::string_view s, Semver* out, std::string* error) {
  if (s.empty()) {
    *error = "Version string empty";
    return false;
  }
  const size_t d1 = s.find('.');
  const size_t d2 = d1 == std::string_view::npos ? d1 : s.find('.', d1 + 1);
  if (d2 == std::string_view::npos) {
    *error = "No Major.Minor.Patch elements found";
    return false;
  }
  const std::string_view majorText = s.substr(0, d1);
  const std::string_view minorText = s.substr(d1 + 1, d2 - d1 - 1);
  std::string_view patchText = s.substr(d2 + 1);
  Semver v;
  if (!onlyDigits(majorText)) {
    *error = "Invalid character(s) found in major number " + quoted(majorText);
    return false;
  }
  if (leadingZero(majorText)) {
    *error = "Major number must not contain leading zeroes " + quoted(majorText);
    return false;
  }
  if (!parseUint(majorText, &v.major, error)) return false;
  if (!onlyDigits(minorText)) {
    *error = "Invalid character(s) found in minor number " + quoted(minorText);
    return false;
  }
  if (leadingZero(minorText)) {
    *error = "Minor number must not contain leading zeroes " + quoted(minorText);
    return false;
  }
  if (!parseUint(minorText, &v.minor, error)) return false;

  bool hasBuild = false, hasPre = false;
  if (size_t plus = patchText.find('+'); plus != std::string_view::npos) {
    v.build = patchText.substr(plus + 1);
    hasBuild = true;
    patchText = patchText.substr(0, plus);
  }
  if (size_t minus = patchText.find('-'); minus != std::string_view::npos) {
    v.pre = patchText.substr(minus + 1);
    hasPre = true;
    patchText = patchText.substr(0, minus);
  }
  if (!onlyDigits(patchText)) {
    *error = "Invalid character(s) found in patch number " + quoted(patchText);
    return false;
  }
  if (leadingZero(patchText)) {
    *error = "Patch number must not contain leading zeroes " + quoted(patchText);
    return false;
  }
  if (!parseUint(patchText, &v.patch, error)) return false;
  if (hasPre) {
    bool ok = true;
    forEachPart(v.pre, [&](std::string_view part) {
      if (ok && !validPrerelease(part, error)) ok = false;
    });
    if (!ok) return false;
  }
  if (hasBuild) {
    bool ok = true;
    forEachPart(v.build, [&](std::string_view part) {
      if (!ok) return;
      if (part.empty()) {
        *error = "Build meta data is empty";
        ok = false;
      } else if (!alnumOrHyphen(part)) {
        *error = "Invalid character(s) found in build meta data " + quoted(part);
        ok = false;
      }
    });
    if (!ok) return false;
  }
  *out = v;
  return true;
}

namespace {

bool isDigitChar(char c) { return c >= '0' && c <= '9'; }
bool isSemverIdentChar(char c) {
  return isDigitChar(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-';
}

// A decimal number that ParseUint takes: no leading zero, at most UINT64_MAX.
bool validNumber(std::string_view s) {
  if (s.empty() || (s.size() > 1 && s[0] == '0') || s.size() > 20) return false;
  for (char c : s) {
    if (!isDigitChar(c)) return false;
  }
  return s.size() < 20 || s <= "18446744073709551615";
}

// Dot-separated identifiers: none empty; with `numeric`, all-digit ones must be numbers.
bool validIdentifiers(std::string_view s, bool numeric) {
  size_t start = 0;
  while (true) {
    const size_t dot = s.find('.', start);
    const std::string_view part =
        s.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start);
    if (part.empty()) return false;
    bool digits = true;
    for (char c : part) {
      if (!isSemverIdentChar(c)) return false;
      digits = digits && isDigitChar(c);
    }
    if (numeric && digits && !validNumber(part)) return false;
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

}  // namespace

bool isValidSemver(std::string_view s) {
  const size_t d1 = s.find('.');
  if (d1 == std::string_view::npos) return false;
  const size_t d2 = s.find('.', d1 + 1);
  if (d2 == std::string_view::npos) return false;
  if (!validNumber(s.substr(0, d1)) || !validNumber(s.substr(d1 + 1, d2 - d1 - 1))) return false;
  std::string_view rest = s.substr(d2 + 1);
  const size_t plus = rest.find('+');
  if (plus != std::string_view::npos) {
    if (!validIdentifiers(rest.substr(plus + 1), false)) return false;
    rest = rest.substr(0, plus);
  }
  const size_t minus = rest.find('-');
  if (minus != std::string_view::npos) {
    if (!validIdentifiers(rest.substr(minus + 1), true)) return false;
    rest = rest.substr(0, minus);
  }
  return validNumber(rest);
}

bool parseSemverNormalized(std::string_view text, Arena& arena, Semver* out, std::string* error) {
  std::string_view s = text;
  if (!s.empty() && s[0] == 'v') s.remove_prefix(1);
  // major.minor.(patch+pre+build), at most three parts.
  std::string_view parts[3];
  size_t n = 0;
  size_t start = 0;
  while (n < 2) {
    size_t dot = s.find('.', start);
    if (dot == std::string_view::npos) break;
    parts[n++] = s.substr(start, dot - start);
    start = dot + 1;
  }
  parts[n++] = s.substr(start);
  std::string normalized;
  for (size_t i = 0; i < n; ++i) {
    std::string_view p = parts[i];
    std::string part(p);
    if (p.size() > 1) {
      size_t z = p.find_first_not_of('0');
      std::string_view trimmed = z == std::string_view::npos ? std::string_view() : p.substr(z);
      part = std::string(trimmed);
      if (trimmed.empty() || !(trimmed[0] >= '0' && trimmed[0] <= '9')) part = "0" + part;
    }
    if (i > 0) normalized += '.';
    normalized += part;
  }
  if (n < 3) {
    if (parts[n - 1].find_first_of("+-") != std::string_view::npos) {
      *error = "short version cannot contain PreRelease/Build meta data";
      return false;
    }
    for (size_t i = n; i < 3; ++i) normalized += ".0";
  }
  const std::string_view stable = normalized == text ? text : arena.copy(normalized);
  return parseSemver(stable, out, error);
}

int compareSemver(const Semver& a, const Semver& b) {
  auto cmp = [](uint64_t x, uint64_t y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (int c = cmp(a.major, b.major)) return c;
  if (int c = cmp(a.minor, b.minor)) return c;
  if (int c = cmp(a.patch, b.patch)) return c;
  if (a.pre.empty() && b.pre.empty()) return 0;
  if (a.pre.empty()) return 1;
  if (b.pre.empty()) return -1;
  for (size_t i = 0;; ++i) {
    bool fa = false, fb = false;
    std::string_view pa = nthPart(a.pre, i, &fa);
    std::string_view pb = nthPart(b.pre, i, &fb);
    if (!fa && !fb) return 0;
    if (!fa) return -1;
    if (!fb) return 1;
    const bool na = onlyDigits(pa), nb = onlyDigits(pb);
    if (na && !nb) return -1;
    if (!na && nb) return 1;
    if (na && nb) {
      uint64_t x = 0, y = 0;
      std::from_chars(pa.data(), pa.data() + pa.size(), x);
      std::from_chars(pb.data(), pb.data() + pb.size(), y);
      if (int c = cmp(x, y)) return c;
    } else if (pa != pb) {
      return pa < pb ? -1 : 1;
    }
  }
}

// ---- Names and text --------------------------------------------------------------------------

std::string_view typeName(const Value& v) {
  switch (v.kind) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
    case Kind::kAttrDomains:
    case Kind::kAttrDomain:
    case Kind::kCapDomains:
    case Kind::kCapDomain:
    case Kind::kDevice:
      return "map";
    case Kind::kSemver:
      return "kubernetes.Semver";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kError:
      return "error";
  }
  return "unknown";
}

std::string_view goTypeName(const Value& v) {
  switch (v.kind) {
    case Kind::kNull:
      return "types.Null";
    case Kind::kBool:
      return "types.Bool";
    case Kind::kInt:
      return "types.Int";
    case Kind::kUint:
      return "types.Uint";
    case Kind::kDouble:
      return "types.Double";
    case Kind::kString:
      return "types.String";
    case Kind::kBytes:
      return "types.Bytes";
    case Kind::kSemver:
      return "cel.Semver";
    case Kind::kQuantity:
      return "cel.Quantity";
    default:
      return "types.Err";
  }
}

size_t codePoints(std::string_view s) {
  size_t n = 0;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    if (i + len > s.size()) len = 1;
    for (size_t k = 1; k < len; ++k) {
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) {
        len = 1;
        break;
      }
    }
    i += len;
    ++n;
  }
  return n;
}

bool validUtf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len;
    uint32_t cp;
    if ((c >> 5) == 6) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c >> 4) == 14) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c >> 3) == 30) {
      len = 4;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + len > s.size()) return false;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
        cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
      return false;
    }
    i += len;
  }
  return true;
}

std::string toValidUtf8(std::string_view s) {
  if (validUtf8(s)) return std::string(s);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len > 0 && i + len <= s.size() && validUtf8(s.substr(i, len))) {
      out += s.substr(i, len);
      i += len;
    } else {
      out += "\xef\xbf\xbd";
      ++i;
    }
  }
  return out;
}

std::string formatDouble(double d) {
  if (d != d) return "NaN";
  if (d == std::numeric_limits<double>::infinity()) return "+Inf";
  if (d == -std::numeric_limits<double>::infinity()) return "-Inf";
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  std::string_view sci(buf, static_cast<size_t>(res.ptr - buf));
  // sci = [-]D[.DDD]e[+-]XX
  bool neg = false;
  if (sci[0] == '-') {
    neg = true;
    sci.remove_prefix(1);
  }
  const size_t e = sci.find('e');
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c != '.') digits += c;
  }
  int exp = 0;
  std::from_chars(sci.data() + e + 1 + (sci[e + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exp);
  std::string out = neg ? "-" : "";
  if (exp < -4 || exp >= 6) {
    // %e with the shortest digits; Go writes at least two exponent digits.
    out += digits[0];
    if (digits.size() > 1) {
      out += '.';
      out += digits.substr(1);
    }
    out += exp < 0 ? "e-" : "e+";
    const int ax = exp < 0 ? -exp : exp;
    if (ax < 10) out += '0';
    out += std::to_string(ax);
    return out;
  }
  if (exp < 0) {
    out += "0.";
    out.append(static_cast<size_t>(-exp - 1), '0');
    out += digits;
  } else if (static_cast<size_t>(exp) + 1 >= digits.size()) {
    out += digits;
    out.append(static_cast<size_t>(exp) + 1 - digits.size(), '0');
  } else {
    out += digits.substr(0, static_cast<size_t>(exp) + 1);
    out += '.';
    out += digits.substr(static_cast<size_t>(exp) + 1);
  }
  return out;
}

std::string formatKey(const Value& v) {
  switch (v.kind) {
    case Kind::kString:
      return std::string(v.sv());
    case Kind::kBytes: {
      // Go's %v of a byte slice: [104 105].
      std::string out = "[";
      for (size_t i = 0; i < v.s.size; ++i) {
        if (i > 0) out += ' ';
        out += std::to_string(static_cast<unsigned char>(v.s.data[i]));
      }
      return out + "]";
    }
    case Kind::kInt:
      return std::to_string(v.i);
    case Kind::kUint:
      return std::to_string(v.u);
    case Kind::kDouble:
      return formatDouble(v.d);
    case Kind::kBool:
      return v.b ? "true" : "false";
    case Kind::kNull:
      return "null";
    default:
      return std::string(typeName(v));
  }
}

}  // namespace ksched::cel
