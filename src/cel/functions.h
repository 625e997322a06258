// The functions the evaluator implements, by identity. A call's function is resolved once when
// the expression is planned (name, member or global, arity); evaluation dispatches on the
// argument values, so an expression compiled without the checker (the conformance tests'
// disable_check) still gets "no such overload" for arguments no overload takes.
// functions.cc holds the one table of names and the dispatch; each family of functions (operators,
// conversions, regular expressions, strings, the Kubernetes libraries) has its own file.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "cel/runtime.h"

namespace re2 {
class RE2;
}  // namespace re2

namespace ksched::cel {

enum class Fn : uint8_t {
  kUnknown,
  // operators
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMod,
  kNeg,
  kNot,
  kEq,
  kNe,
  kLt,
  kLe,
  kGt,
  kGe,
  kIndex,
  kIn,
  // standard functions
  kSize,
  kContains,
  kStartsWith,
  kEndsWith,
  kMatches,
  kToInt,
  kToUint,
  kToDouble,
  kToString,
  kToBytes,
  kToBool,
  kDyn,
  // strings extension
  kCharAt,
  kIndexOf,
  kLastIndexOf,
  kLowerAscii,
  kUpperAscii,
  kReplace,
  kSplit,
  kSubstring,
  kTrim,
  kJoin,
  // Kubernetes regex
  kFind,
  kFindAll,
  // Kubernetes semver
  kSemver,
  kIsSemver,
  kMajor,
  kMinor,
  kPatch,
  // Kubernetes quantity
  kQuantity,
  kIsQuantity,
  kSign,
  kAsApproximateFloat,
  kAsInteger,
  kIsInteger,
  kQuantityAdd,
  kQuantitySub,
  // both
  kIsGreaterThan,
  kIsLessThan,
  kCompareTo,
  // DRA (DRAListTypeAttributes): a list attribute holds the value, or a scalar equals it
  kIncludes,
};

// The function a call names (kUnknown if none). Member calls pass the target as args[0].
Fn resolveFunction(std::string_view name, bool member, size_t argCount);

// Whether argument `i` of `fn` is a regular expression (compiled once when it is a literal).
bool takesRegex(Fn fn, size_t i);

// A regular expression as `matches` compiles it (RE2 with Go's syntax); null with the error.
std::unique_ptr<re2::RE2> compilePattern(std::string_view pattern, std::string* error);

// Calls `fn` on evaluated, error-free arguments and charges its cost. `regex` is the
// precompiled pattern when the call's pattern is a literal.
Value callFunction(Fn fn, const Value* args, size_t n, const re2::RE2* regex, EvalContext& c);

}  // namespace ksched::cel
