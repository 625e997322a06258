#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

#include <ksched/api/quantity.h>

namespace ksched::api {
namespace {

using detail::Int128;
__extension__ typedef unsigned __int128 UInt128;

constexpr Int128 kMaxNano = static_cast<Int128>(~static_cast<UInt128>(0) >> 1);
constexpr Int128 kNanoPerUnit = 1'000'000'000;
constexpr Int128 kNanoPerMilli = 1'000'000;
constexpr int64_t kExponentLimit = 1'000'000;
constexpr int64_t kMaxNanoDigits = 39;

struct Suffix {
  int base2Exp = 0;
  int64_t base10Exp = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

// Decimal SI suffixes by power of 1000, from n (10^-9) to E (10^18); '-' marks no suffix.
constexpr std::string_view kDecimalSuffixes = "num-kMGTPE";
// Binary SI prefixes by power of 1024 from Ki (2^10) to Ei (2^60).
constexpr std::string_view kBinaryPrefixes = "KMGTPE";

std::optional<Suffix> parseSuffix(std::string_view s) {
  using F = QuantityFormat;
  if (s.empty()) return Suffix{0, 0, F::kDecimalSI};
  if (s.size() == 1 && s[0] != '-') {
    const size_t i = kDecimalSuffixes.find(s[0]);
    if (i == std::string_view::npos) return std::nullopt;
    return Suffix{0, (static_cast<int64_t>(i) - 3) * 3, F::kDecimalSI};
  }
  if (s.size() == 2 && s[1] == 'i') {
    const size_t i = kBinaryPrefixes.find(s[0]);
    if (i == std::string_view::npos) return std::nullopt;
    return Suffix{10 * (static_cast<int>(i) + 1), 0, F::kBinarySI};
  }
  if (s[0] != 'e' && s[0] != 'E') return std::nullopt;
  std::string_view rest = s.substr(1);
  bool negative = false;
  if (!rest.empty() && (rest[0] == '+' || rest[0] == '-')) {
    negative = rest[0] == '-';
    rest.remove_prefix(1);
  }
  if (rest.empty()) return std::nullopt;
  int64_t e = 0;
  for (char c : rest) {
    if (c < '0' || c > '9') return std::nullopt;
    e = std::min<int64_t>(e * 10 + (c - '0'), kExponentLimit);
  }
  return Suffix{0, negative ? -e : e, F::kDecimalExponent};
}

// digits (no leading zeros) *= 2^k, in decimal.
void multiplyByPowerOfTwo(std::string& digits, int k) {
  while (k > 0) {
    const int step = std::min(k, 32);
    k -= step;
    uint64_t carry = 0;
    for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
      const uint64_t v = (static_cast<uint64_t>(*it - '0') << step) + carry;
      *it = static_cast<char>('0' + v % 10);
      carry = v / 10;
    }
    std::string head;
    for (; carry > 0; carry /= 10) head.push_back(static_cast<char>('0' + carry % 10));
    std::reverse(head.begin(), head.end());
    digits.insert(0, head);
  }
}

// ceil(digits * 10^exp10) for a non-empty digit string without leading zeros, saturated.
Int128 roundUpToInteger(const std::string& digits, int64_t exp10) {
  const auto n = static_cast<int64_t>(digits.size());
  const int64_t intLen = n + exp10;
  if (intLen > kMaxNanoDigits) return kMaxNano;
  if (intLen <= 0) return 1;
  UInt128 acc = 0;
  const UInt128 limit = static_cast<UInt128>(kMaxNano);
  auto push = [&](int d) {
    if (acc > (limit - static_cast<UInt128>(d)) / 10) {
      acc = limit;
      return;
    }
    acc = acc * 10 + static_cast<UInt128>(d);
  };
  for (int64_t i = 0; i < intLen; ++i) push(i < n ? digits[i] - '0' : 0);
  bool fraction = false;
  for (int64_t i = intLen; i < n; ++i) fraction = fraction || digits[i] != '0';
  if (fraction && acc < limit) ++acc;
  return static_cast<Int128>(acc);
}

enum class ParseStatus { kOk, kEmpty, kNoDigits, kBadSuffix };

struct ParseOutcome {
  ParseStatus status = ParseStatus::kOk;
  std::string_view badSuffix;
  Int128 nano = 0;
  QuantityFormat format = QuantityFormat::kDecimalSI;
};

bool isDigit(char c) { return c >= '0' && c <= '9'; }

ParseOutcome parseQuantity(std::string_view s) {
  ParseOutcome out;
  if (s.empty()) {
    out.status = ParseStatus::kEmpty;
    return out;
  }
  size_t pos = 0;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    pos = 1;
  }
  const size_t intStart = pos;
  while (pos < s.size() && isDigit(s[pos])) ++pos;
  const std::string_view intDigits = s.substr(intStart, pos - intStart);
  std::string_view fracDigits;
  if (pos < s.size() && s[pos] == '.') {
    const size_t fracStart = ++pos;
    while (pos < s.size() && isDigit(s[pos])) ++pos;
    fracDigits = s.substr(fracStart, pos - fracStart);
  }
  if (intDigits.empty() && fracDigits.empty()) {
    out.status = ParseStatus::kNoDigits;
    return out;
  }
  const auto suffix = parseSuffix(s.substr(pos));
  if (!suffix) {
    out.status = ParseStatus::kBadSuffix;
    out.badSuffix = s.substr(pos);
    return out;
  }
  out.format = suffix->format;

  std::string digits;
  digits.reserve(intDigits.size() + fracDigits.size() + 20);
  digits.append(intDigits).append(fracDigits);
  digits.erase(0, std::min(digits.find_first_not_of('0'), digits.size()));
  if (digits.empty()) return out;
  if (suffix->base2Exp > 0) multiplyByPowerOfTwo(digits, suffix->base2Exp);
  const int64_t exp10 = suffix->base10Exp + 9 - static_cast<int64_t>(fracDigits.size());
  out.nano = roundUpToInteger(digits, exp10);
  if (negative) out.nano = -out.nano;
  return out;
}

Int128 saturate(Int128 v) { return std::clamp(v, -kMaxNano, kMaxNano); }

int64_t scaleDownRoundingUp(Int128 v, Int128 divisor) {
  Int128 q = v / divisor;
  const Int128 r = v % divisor;
  if (r > 0) ++q;
  if (r < 0) --q;
  return static_cast<int64_t>(std::clamp<Int128>(q, std::numeric_limits<int64_t>::min(),
                                                 std::numeric_limits<int64_t>::max()));
}

std::string toDecimal(Int128 v) {
  if (v == 0) return "0";
  std::array<char, 48> buf{};
  size_t i = buf.size();
  for (; v > 0; v /= 10) buf[--i] = static_cast<char>('0' + static_cast<int>(v % 10));
  return {buf.data() + i, buf.size() - i};
}

}  // namespace

Quantity Quantity::parse(std::string_view s) {
  const ParseOutcome p = parseQuantity(s);
  const std::string quoted = "quantity \"" + std::string(s) + "\": ";
  switch (p.status) {
    case ParseStatus::kOk:
      return Quantity(p.nano, p.format);
    case ParseStatus::kEmpty:
      throw QuantityError(quoted + "empty string");
    case ParseStatus::kNoDigits:
      throw QuantityError(quoted + "expected an optionally signed decimal number");
    case ParseStatus::kBadSuffix:
      throw QuantityError(quoted + "unknown suffix \"" + std::string(p.badSuffix) + "\"");
  }
  throw QuantityError(quoted + "unparsable");
}

std::optional<Quantity> Quantity::tryParse(std::string_view s) {
  const ParseOutcome p = parseQuantity(s);
  if (p.status != ParseStatus::kOk) return std::nullopt;
  return Quantity(p.nano, p.format);
}

Quantity Quantity::fromValue(int64_t value, QuantityFormat format) {
  return Quantity(static_cast<Int128>(value) * kNanoPerUnit, format);
}

Quantity Quantity::fromMilli(int64_t milli, QuantityFormat format) {
  return Quantity(static_cast<Int128>(milli) * kNanoPerMilli, format);
}

int64_t Quantity::value() const noexcept { return scaleDownRoundingUp(nano_, kNanoPerUnit); }

int64_t Quantity::milliValue() const noexcept { return scaleDownRoundingUp(nano_, kNanoPerMilli); }

std::string Quantity::toString() const {
  if (nano_ == 0) return "0";
  const std::string sign = nano_ < 0 ? "-" : "";
  const Int128 mag = nano_ < 0 ? -nano_ : nano_;
  if (format_ == QuantityFormat::kBinarySI && mag >= 1024 * kNanoPerUnit &&
      mag % kNanoPerUnit == 0) {
    const Int128 units = mag / kNanoPerUnit;
    int i = 6;
    while (i > 0 && units % (static_cast<Int128>(1) << (10 * i)) != 0) --i;
    return sign + toDecimal(units >> (10 * i)) +
           (i == 0 ? std::string() : std::string(1, kBinaryPrefixes[i - 1]) + "i");
  }
  Int128 mantissa = mag;
  int exp = -9;
  while (mantissa % 10 == 0) {
    mantissa /= 10;
    ++exp;
  }
  for (int r = ((exp % 3) + 3) % 3; r > 0; --r) {
    mantissa *= 10;
    --exp;
  }
  if (format_ == QuantityFormat::kDecimalExponent) {
    return sign + toDecimal(mantissa) + (exp == 0 ? "" : "e" + std::to_string(exp));
  }
  for (; exp > 18; exp -= 3) mantissa *= 1000;
  const char suffix = kDecimalSuffixes[static_cast<size_t>((exp + 9) / 3)];
  return sign + toDecimal(mantissa) + (suffix == '-' ? std::string() : std::string(1, suffix));
}

Quantity& Quantity::operator+=(const Quantity& o) noexcept {
  if (nano_ == 0) format_ = o.format_;
  Int128 r = 0;
  if (__builtin_add_overflow(nano_, o.nano_, &r)) r = o.nano_ > 0 ? kMaxNano : -kMaxNano;
  nano_ = saturate(r);
  return *this;
}

Quantity& Quantity::operator-=(const Quantity& o) noexcept {
  if (nano_ == 0) format_ = o.format_;
  Int128 r = 0;
  if (__builtin_sub_overflow(nano_, o.nano_, &r)) r = o.nano_ < 0 ? kMaxNano : -kMaxNano;
  nano_ = saturate(r);
  return *this;
}

Quantity Quantity::operator-() const noexcept { return Quantity(-nano_, format_); }

void from_json(const nlohmann::json& j, Quantity& q) {
  using T = nlohmann::json::value_t;
  switch (j.type()) {
    case T::string:
      q = Quantity::parse(j.get_ref<const std::string&>());
      return;
    case T::number_integer:
      q = Quantity::fromValue(j.get<int64_t>());
      return;
    case T::number_unsigned:
      q = Quantity::parse(std::to_string(j.get<uint64_t>()));
      return;
    case T::number_float: {
      const double d = j.get<double>();
      if (!std::isfinite(d)) throw QuantityError("quantity: not a finite number");
      std::array<char, 64> buf{};
      const auto res = std::to_chars(buf.data(), buf.data() + buf.size(), d);
      q = Quantity::parse(std::string_view(buf.data(), static_cast<size_t>(res.ptr - buf.data())));
      return;
    }
    default:
      throw QuantityError(std::string("quantity: expected a string or a number, got ") +
                          j.type_name());
  }
}

void to_json(nlohmann::json& j, const Quantity& q) { j = q.toString(); }

}  // namespace ksched::api
