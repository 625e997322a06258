// The one table of the library's functions (resolveFunction: name, member or global, arity),
// the dispatch of a call to its family (functions_<family>.cc) and the runtime cost each call
// charges.
#include "cel/functions.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "cel/functions_internal.h"

namespace ksched::cel {

namespace {

using namespace builtin;

constexpr double kStringTraversalCostFactor = 0.1;
constexpr double kRegexStringLengthCostFactor = 0.25;

uint64_t ceilCost(double x) { return static_cast<uint64_t>(std::ceil(x)); }

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
    case Fn::kIncludes:
      return includesCall(args[0], args[1], c);
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
      {"includes", Fn::kIncludes, 1, 2, 2},
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

Value callFunction(Fn fn, const Value* args, size_t n, const re2::RE2* regex, EvalContext& c) {
  Value result = dispatch(fn, args, n, regex, c);
  c.addCost(static_cast<int64_t>(callCost(fn, args, n, result, c)));
  return result;
}

}  // namespace ksched::cel
