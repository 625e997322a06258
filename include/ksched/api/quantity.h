// Kubernetes resource.Quantity: an exact fixed-point amount ("500m", "2Gi", "1e3").
//
// Contract:
//   - The value is held exactly as a signed 128-bit count of nano-units (1n), like upstream's
//     parse-time rounding: a value finer than 1n is rounded up in magnitude to the next 1n.
//   - Accepted forms (optional leading '+' or '-'; at least one digit before or after the '.'):
//       plain:    "1", "1.5", "0.1", ".5", "1."
//       decimal:  n u m "" k M G T P E       ("100m", "1k", "2E")
//       binary:   Ki Mi Gi Ti Pi Ei          ("2Gi", "1.5Ki")
//       exponent: e/E followed by an optionally signed integer ("1e3", "1E-3", "12e+6")
//     Anything else throws QuantityError from parse(). This is stricter than upstream, which
//     also accepts digit-less strings such as "-" or "k" as zero; the apiserver never serves them.
//   - Magnitudes beyond the 128-bit nano range saturate instead of overflowing; so do
//     arithmetic results. value() and milliValue() saturate to the int64 range.
//   - value() and milliValue() round up in magnitude (away from zero), like upstream
//     Value()/MilliValue(): "100m".value() == 1, "1.5".value() == 2, "1n".milliValue() == 1.
//   - Equality and ordering compare amounts only: "1Ki" == "1024". The format (which only
//     affects toString()) is remembered from parsing.
#pragma once

#include <compare>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <ksched/api/meta.h>

namespace ksched::api {

namespace detail {
__extension__ typedef __int128 Int128;
}  // namespace detail

// A malformed quantity string. The message names the string: `quantity "12x": unknown suffix "x"`.
class QuantityError : public DecodeError {
 public:
  explicit QuantityError(const std::string& what) : DecodeError(what) {}
};

// How toString() renders the amount (upstream resource.Format).
enum class QuantityFormat { kDecimalSI, kBinarySI, kDecimalExponent };

class Quantity {
 public:
  // Zero, DecimalSI.
  Quantity() = default;

  // Parses any accepted form; throws QuantityError naming `s` otherwise.
  static Quantity parse(std::string_view s);
  // Like parse() but returns nullopt for malformed input instead of throwing.
  static std::optional<Quantity> tryParse(std::string_view s);
  // Exact whole units / thousandths of a unit.
  static Quantity fromValue(int64_t value, QuantityFormat format = QuantityFormat::kDecimalSI);
  static Quantity fromMilli(int64_t milli, QuantityFormat format = QuantityFormat::kDecimalSI);

  // Whole units, rounded up in magnitude; saturates to int64.
  [[nodiscard]] int64_t value() const noexcept;
  // Thousandths of a unit, rounded up in magnitude; saturates to int64.
  [[nodiscard]] int64_t milliValue() const noexcept;
  // -1, 0 or 1.
  [[nodiscard]] int sign() const noexcept { return nano_ < 0 ? -1 : (nano_ > 0 ? 1 : 0); }
  [[nodiscard]] bool isZero() const noexcept { return nano_ == 0; }
  [[nodiscard]] QuantityFormat format() const noexcept { return format_; }

  // Canonical form in the remembered format, like upstream String(): "1500m", "2Gi", "1k",
  // "1e3". BinarySI amounts below 1024 or with a fraction render as DecimalSI.
  [[nodiscard]] std::string toString() const;

  // Saturating arithmetic. Adding to a zero quantity adopts the other operand's format.
  Quantity& operator+=(const Quantity& o) noexcept;
  Quantity& operator-=(const Quantity& o) noexcept;
  friend Quantity operator+(Quantity a, const Quantity& b) noexcept { return a += b; }
  friend Quantity operator-(Quantity a, const Quantity& b) noexcept { return a -= b; }
  Quantity operator-() const noexcept;

  friend bool operator==(const Quantity& a, const Quantity& b) noexcept {
    return a.nano_ == b.nano_;
  }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) noexcept {
    if (a.nano_ < b.nano_) return std::strong_ordering::less;
    if (a.nano_ > b.nano_) return std::strong_ordering::greater;
    return std::strong_ordering::equal;
  }

 private:
  Quantity(detail::Int128 nano, QuantityFormat format) : nano_(nano), format_(format) {}

  detail::Int128 nano_ = 0;
  QuantityFormat format_ = QuantityFormat::kDecimalSI;
};

// Accepts a JSON string (any form above) or a JSON number (integer or decimal). Anything else,
// or a malformed string, throws QuantityError.
void from_json(const nlohmann::json& j, Quantity& q);
// Writes toString() as a JSON string, as the apiserver does.
void to_json(nlohmann::json& j, const Quantity& q);

}  // namespace ksched::api
