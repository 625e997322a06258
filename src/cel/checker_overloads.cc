// The overloads the checker matches calls against: those of the functions the evaluator
// implements (functions.h), with cel-go's signatures, and the names upstream's environment has
// that this one does not.
#include <algorithm>
#include <iterator>
#include <set>
#include <string>
#include <utility>

#include "cel/checker_internal.h"

namespace ksched::cel::checking {

const FunctionTable& functions() {
  static const FunctionTable table = [] {
    FunctionTable t;
    const TypePtr I = types::integer(), U = types::uinteger(), D = types::dbl(),
                  S = types::string(), B = types::bytes(), Bo = types::boolean(),
                  A = types::param("A"), K = types::param("K"), V = types::param("V"),
                  Sv = types::object(std::string(types::kSemver)),
                  Q = types::object(std::string(types::kQuantity)), Dy = types::dyn();
    auto global = [&](const char* name, std::vector<TypePtr> params, TypePtr result,
                      bool cross = false) {
      t[name].push_back(Overload{false, std::move(params), std::move(result), cross});
    };
    auto member = [&](const char* name, std::vector<TypePtr> params, TypePtr result) {
      t[name].push_back(Overload{true, std::move(params), std::move(result), false});
    };
    for (const TypePtr& x : {I, U, D, S, B}) global("_+_", {x, x}, x);
    global("_+_", {types::list(A), types::list(A)}, types::list(A));
    for (const char* op : {"_-_", "_*_", "_/_"}) {
      for (const TypePtr& x : {I, U, D}) global(op, {x, x}, x);
    }
    for (const TypePtr& x : {I, U}) global("_%_", {x, x}, x);
    global("-_", {I}, I);
    global("-_", {D}, D);
    global("!_", {Bo}, Bo);
    global("_==_", {A, A}, Bo);
    global("_!=_", {A, A}, Bo);
    for (const char* op : {"_<_", "_<=_", "_>_", "_>=_"}) {
      for (const TypePtr& x : {Bo, I, U, D, S, B}) global(op, {x, x}, Bo);
      for (const TypePtr& x : {I, U, D}) {
        for (const TypePtr& y : {I, U, D}) {
          if (x != y) global(op, {x, y}, Bo, true);
        }
      }
    }
    global("_[_]", {types::list(A), I}, A);
    global("_[_]", {types::map(K, V), K}, V);
    global("@in", {A, types::list(A)}, Bo);
    global("@in", {A, types::map(A, V)}, Bo);
    global("_?_:_", {Bo, A, A}, A);
    for (const TypePtr& x : {S, B, types::list(A), types::map(K, V)}) {
      global("size", {x}, I);
      member("size", {x}, I);
    }
    member("contains", {S, S}, Bo);
    member("startsWith", {S, S}, Bo);
    member("endsWith", {S, S}, Bo);
    global("matches", {S, S}, Bo);
    member("matches", {S, S}, Bo);
    for (const TypePtr& x : {I, U, D, S}) {
      global("int", {x}, I);
      global("uint", {x}, U);
      global("double", {x}, D);
    }
    for (const TypePtr& x : {I, U, D, Bo, S, B}) global("string", {x}, S);
    global("bytes", {B}, B);
    global("bytes", {S}, B);
    global("bool", {Bo}, Bo);
    global("bool", {S}, Bo);
    global("dyn", {A}, Dy);
    // Strings extension (cel-go ext.Strings version 2).
    member("charAt", {S, I}, S);
    member("indexOf", {S, S}, I);
    member("indexOf", {S, S, I}, I);
    member("lastIndexOf", {S, S}, I);
    member("lastIndexOf", {S, S, I}, I);
    member("lowerAscii", {S}, S);
    member("upperAscii", {S}, S);
    member("replace", {S, S, S}, S);
    member("replace", {S, S, S, I}, S);
    member("split", {S, S}, types::list(S));
    member("split", {S, S, I}, types::list(S));
    member("substring", {S, I}, S);
    member("substring", {S, I, I}, S);
    member("trim", {S}, S);
    member("join", {types::list(S)}, S);
    member("join", {types::list(S), S}, S);
    // Kubernetes regex library.
    member("find", {S, S}, S);
    member("findAll", {S, S}, types::list(S));
    member("findAll", {S, S, I}, types::list(S));
    // Kubernetes semver library (version 1: with normalize).
    global("semver", {S}, Sv);
    global("semver", {S, Bo}, Sv);
    global("isSemver", {S}, Bo);
    global("isSemver", {S, Bo}, Bo);
    member("major", {Sv}, I);
    member("minor", {Sv}, I);
    member("patch", {Sv}, I);
    // Kubernetes quantity library.
    global("quantity", {S}, Q);
    global("isQuantity", {S}, Bo);
    global("sign", {Q}, I);
    member("asApproximateFloat", {Q}, D);
    member("asInteger", {Q}, I);
    member("isInteger", {Q}, Bo);
    member("add", {Q, Q}, Q);
    member("add", {Q, I}, Q);
    member("sub", {Q, Q}, Q);
    member("sub", {Q, I}, Q);
    for (const TypePtr& x : {Sv, Q}) {
      member("isGreaterThan", {x, x}, Bo);
      member("isLessThan", {x, x}, Bo);
      member("compareTo", {x, x}, I);
    }
    // DRA (declared only with CheckEnv::draIncludes).
    member("includes", {Dy, Dy}, Bo);
    return t;
  }();
  return table;
}

// Functions and type names upstream's Kubernetes CEL environment declares that this evaluator
// does not implement.
bool unsupportedFunction(std::string_view name) {
  static const std::set<std::string, std::less<>> names = {
      // timestamps and durations
      "duration", "timestamp", "getDate", "getDayOfMonth", "getDayOfWeek", "getDayOfYear",
      "getFullYear", "getHours", "getMilliseconds", "getMinutes", "getMonth", "getSeconds",
      // type values
      "type",
      // optional types
      "optional.of", "optional.ofNonZeroValue", "optional.none", "hasValue", "value", "or",
      "orValue",
      // sets, lists
      "sets.contains", "sets.equivalent", "sets.intersects", "isSorted", "sum", "min", "max",
      "indexOf", "lastIndexOf", "slice", "flatten", "distinct", "reverse", "sort", "lists.range",
      "first", "last",
      // strings
      "format", "strings.quote",
      // urls, ip, cidr, format
      "url", "isURL", "getScheme", "getHost", "getHostname", "getPort", "getEscapedPath",
      "getQuery", "ip", "isIP", "ip.isCanonical", "isCanonical", "cidr", "isCIDR", "containsIP",
      "containsCIDR", "masked", "prefixLength", "family", "isUnspecified", "isLoopback",
      "isLinkLocalMulticast", "isLinkLocalUnicast", "isGlobalUnicast", "format.named", "validate",
      // two-variable comprehensions (as functions)
      "transformList", "transformMap", "transformMapEntry"};
  return names.count(name) > 0;
}

bool isTypeName(std::string_view name) {
  static constexpr std::string_view kNames[] = {"int",
                                                "uint",
                                                "double",
                                                "bool",
                                                "string",
                                                "bytes",
                                                "list",
                                                "map",
                                                "null_type",
                                                "type",
                                                "google.protobuf.Duration",
                                                "google.protobuf.Timestamp"};
  return std::find(std::begin(kNames), std::end(kNames), name) != std::end(kNames);
}

}  // namespace ksched::cel::checking
