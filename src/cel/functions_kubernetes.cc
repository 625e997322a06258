// The Kubernetes libraries of kubernetes.Semver (semver, isSemver, major, minor, patch) and
// kubernetes.Quantity (quantity, isQuantity, sign, asApproximateFloat, asInteger, isInteger, add,
// sub), and the comparisons both share (isGreaterThan, isLessThan, compareTo).
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>

#include "cel/functions_internal.h"

namespace ksched::cel::builtin {

namespace {

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

}  // namespace

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

// Unequal types or an equality error are no match, as upstream's `Equal(...) == True` test.
Value includesCall(const Value& target, const Value& arg, EvalContext& c) {
  // resource.k8s.io ResourceSliceMaxAttributeValuesPerDevice.
  constexpr size_t kMaxValues = 48;
  auto same = [&](const Value& v) {
    const Value e = equals(v, arg, c);
    return e.kind == Kind::kBool && e.b;
  };
  if (target.kind != Kind::kList) return Value::boolean(same(target));
  for (size_t i = 0; i < target.list->size; ++i) {
    if (i >= kMaxValues) {
      return Value::error("'includes' function cannot be applied to lists longer than 48 values");
    }
    if (same(target.list->items[i])) return Value::boolean(true);
  }
  return Value::boolean(false);
}

}  // namespace ksched::cel::builtin
