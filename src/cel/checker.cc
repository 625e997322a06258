#include "cel/checker.h"

#include <algorithm>
#include <set>

#include "cel/parser.h"

namespace ksched::cel {

namespace types {
namespace {
TypePtr make(TypeKind k) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  return t;
}
}  // namespace
TypePtr dyn() {
  static const TypePtr t = make(TypeKind::kDyn);
  return t;
}
TypePtr any() {
  static const TypePtr t = make(TypeKind::kAny);
  return t;
}
TypePtr error() {
  static const TypePtr t = make(TypeKind::kError);
  return t;
}
TypePtr null() {
  static const TypePtr t = make(TypeKind::kNull);
  return t;
}
TypePtr boolean() {
  static const TypePtr t = make(TypeKind::kBool);
  return t;
}
TypePtr integer() {
  static const TypePtr t = make(TypeKind::kInt);
  return t;
}
TypePtr uinteger() {
  static const TypePtr t = make(TypeKind::kUint);
  return t;
}
TypePtr dbl() {
  static const TypePtr t = make(TypeKind::kDouble);
  return t;
}
TypePtr string() {
  static const TypePtr t = make(TypeKind::kString);
  return t;
}
TypePtr bytes() {
  static const TypePtr t = make(TypeKind::kBytes);
  return t;
}
TypePtr list(TypePtr elem) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kList;
  t->params = {std::move(elem)};
  return t;
}
TypePtr map(TypePtr key, TypePtr value) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kMap;
  t->params = {std::move(key), std::move(value)};
  return t;
}
TypePtr param(std::string name) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kTypeParam;
  t->name = std::move(name);
  return t;
}
TypePtr object(std::string name) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kStruct;
  t->name = std::move(name);
  return t;
}
}  // namespace types

namespace {

std::string_view declaredName(const Type& t) {
  switch (t.kind) {
    case TypeKind::kDyn:
      return "dyn";
    case TypeKind::kAny:
      return "google.protobuf.Any";
    case TypeKind::kError:
      return "*error*";
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kList:
      return "list";
    case TypeKind::kMap:
      return "map";
    case TypeKind::kTypeParam:
    case TypeKind::kStruct:
      return t.name;
  }
  return "";
}

}  // namespace

std::string typeString(const Type& t) {
  std::string out(declaredName(t));
  if (t.params.empty()) return out;
  out += '(';
  for (size_t i = 0; i < t.params.size(); ++i) {
    if (i > 0) out += ", ";
    out += typeString(*t.params[i]);
  }
  return out + ')';
}

std::string formatType(const Type& t) {
  switch (t.kind) {
    case TypeKind::kAny:
      return "any";
    case TypeKind::kError:
      return "!error!";
    case TypeKind::kNull:
      return "null";
    case TypeKind::kTypeParam:
      return t.name;
    default:
      break;
  }
  std::string out(declaredName(t));
  if (t.params.empty()) return out;
  out += '(';
  for (size_t i = 0; i < t.params.size(); ++i) {
    if (i > 0) out += ", ";
    out += formatType(*t.params[i]);
  }
  return out + ')';
}

namespace {

// ---- Type relations (cel-go checker/types.go) --------------------------------------------

using Mapping = std::map<std::string, TypePtr>;

bool isDyn(const Type& t) { return t.kind == TypeKind::kDyn || t.kind == TypeKind::kAny; }
bool isDynOrError(const Type& t) { return isDyn(t) || t.kind == TypeKind::kError; }

bool isExact(const Type& a, const Type& b) {
  if (a.kind != b.kind || a.name != b.name || a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!isExact(*a.params[i], *b.params[i])) return false;
  }
  return true;
}

const TypePtr* findSub(const Mapping& m, const Type& t) {
  if (t.kind != TypeKind::kTypeParam) return nullptr;
  auto it = m.find(t.name);
  return it == m.end() ? nullptr : &it->second;
}

bool isEqualOrLessSpecific(const Type& t1, const Type& t2) {
  if (isDyn(t1) || t1.kind == TypeKind::kTypeParam) return true;
  if (isDyn(t2) || t2.kind == TypeKind::kTypeParam) return false;
  if (t1.kind != t2.kind) return false;
  switch (t1.kind) {
    case TypeKind::kList:
      return isEqualOrLessSpecific(*t1.params[0], *t2.params[0]);
    case TypeKind::kMap:
      return isEqualOrLessSpecific(*t1.params[0], *t2.params[0]) &&
             isEqualOrLessSpecific(*t1.params[1], *t2.params[1]);
    default:
      return isExact(t1, t2);
  }
}

TypePtr mostGeneral(const TypePtr& t1, const TypePtr& t2) {
  return isEqualOrLessSpecific(*t1, *t2) ? t1 : t2;
}

bool notReferencedIn(const Mapping& m, const Type& t, const Type& within) {
  if (isExact(t, within)) return false;
  if (within.kind == TypeKind::kTypeParam) {
    const TypePtr* sub = findSub(m, within);
    return sub == nullptr || notReferencedIn(m, t, **sub);
  }
  for (const TypePtr& p : within.params) {
    if (!notReferencedIn(m, t, *p)) return false;
  }
  return true;
}

bool internalIsAssignable(Mapping& m, const TypePtr& t1, const TypePtr& t2);

// (valid, hasSub)
std::pair<bool, bool> isValidTypeSubstitution(Mapping& m, const TypePtr& t1, const TypePtr& t2) {
  if (t1->kind == t2->kind && isExact(*t1, *t2)) return {true, true};
  if (const TypePtr* sub = findSub(m, *t2)) {
    const TypePtr t2Sub = *sub;
    if (t1->kind == t2Sub->kind && isExact(*t1, *t2Sub)) return {true, true};
    if (internalIsAssignable(m, t1, t2Sub)) {
      TypePtr t2New = mostGeneral(t1, t2Sub);
      if (notReferencedIn(m, *t2, *t2New)) m[t2->name] = t2New;
      return {true, true};
    }
    return {false, true};
  }
  if (notReferencedIn(m, *t2, *t1)) {
    m[t2->name] = t1;
    return {true, false};
  }
  return {false, false};
}

bool isLegacyNullable(const Type& t) {
  return t.kind == TypeKind::kStruct || t.kind == TypeKind::kAny;
}

bool internalIsAssignable(Mapping& m, const TypePtr& t1, const TypePtr& t2) {
  if (t2->kind == TypeKind::kTypeParam) {
    auto [valid, hasSub] = isValidTypeSubstitution(m, t1, t2);
    if (valid) return true;
    if (hasSub) return false;
  }
  if (t1->kind == TypeKind::kTypeParam) return isValidTypeSubstitution(m, t2, t1).first;
  if (isDynOrError(*t1) || isDynOrError(*t2)) return true;
  if (t1->kind == TypeKind::kNull) return isLegacyNullable(*t2) || t2->kind == TypeKind::kNull;
  if (t2->kind == TypeKind::kNull) return isLegacyNullable(*t1);
  switch (t1->kind) {
    case TypeKind::kList:
    case TypeKind::kMap:
      if (t1->kind != t2->kind || t1->params.size() != t2->params.size()) return false;
      for (size_t i = 0; i < t1->params.size(); ++i) {
        if (!internalIsAssignable(m, t1->params[i], t2->params[i])) return false;
      }
      return true;
    default:
      return isExact(*t1, *t2);
  }
}

TypePtr substitute(const Mapping& m, const TypePtr& t, bool typeParamToDyn) {
  if (const TypePtr* sub = findSub(m, *t)) return substitute(m, *sub, typeParamToDyn);
  if (typeParamToDyn && t->kind == TypeKind::kTypeParam) return types::dyn();
  if (t->kind == TypeKind::kList) return types::list(substitute(m, t->params[0], typeParamToDyn));
  if (t->kind == TypeKind::kMap) {
    return types::map(substitute(m, t->params[0], typeParamToDyn),
                      substitute(m, t->params[1], typeParamToDyn));
  }
  return t;
}

// ---- Declarations ----------------------------------------------------------------------------

struct Overload {
  bool member = false;
  std::vector<TypePtr> params;  // the target first for a member overload
  TypePtr result;
  bool crossNumeric = false;  // only with crossTypeNumericComparisons
};

using FunctionTable = std::map<std::string, std::vector<Overload>, std::less<>>;

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

// ---- The checker ----------------------------------------------------------------------------

class Checker {
 public:
  Checker(std::string_view source, const CheckEnv& env) : source_(source), env_(env) {}

  CheckResult run(const Expr& e) {
    TypePtr t = check(e);
    CheckResult r;
    if (!errors_.empty()) {
      std::stable_sort(errors_.begin(), errors_.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      const size_t limit = 100;
      for (size_t i = 0; i < errors_.size() && i < limit; ++i) {
        if (i > 0) r.error += '\n';
        r.error += formatError(source_, errors_[i].first, errors_[i].second);
      }
      if (errors_.size() > limit) {
        r.error += "\n" + std::to_string(errors_.size() - limit) + " more errors were truncated";
      }
      return r;
    }
    r.type = substitute(mapping_, t, true);
    return r;
  }

 private:
  void report(uint32_t pos, std::string message) { errors_.emplace_back(pos, std::move(message)); }

  TypePtr newTypeVar() { return types::param("_var" + std::to_string(typeVarCounter_++)); }

  bool isAssignable(const TypePtr& t1, const TypePtr& t2) {
    Mapping copy = mapping_;
    if (internalIsAssignable(copy, t1, t2)) {
      mapping_ = std::move(copy);
      return true;
    }
    return false;
  }

  bool isLocal(std::string_view name) const {
    for (const auto& [n, t] : scopes_) {
      if (n == name) return true;
    }
    return false;
  }

  TypePtr lookupIdent(std::string_view name) const {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->first == name) return it->second;
    }
    for (const auto& [n, t] : env_.variables) {
      if (n == name) return t;
    }
    return nullptr;
  }

  TypePtr check(const Expr& e) {
    switch (e.kind) {
      case ExprKind::kLiteral:
        switch (e.literal) {
          case LiteralKind::kNull:
            return types::null();
          case LiteralKind::kBool:
            return types::boolean();
          case LiteralKind::kInt:
            return types::integer();
          case LiteralKind::kUint:
            return types::uinteger();
          case LiteralKind::kDouble:
            return types::dbl();
          case LiteralKind::kString:
            return types::string();
          case LiteralKind::kBytes:
            return types::bytes();
        }
        return types::error();
      case ExprKind::kIdent: {
        if (TypePtr t = lookupIdent(e.name)) return t;
        if (isTypeName(e.name)) {
          report(e.pos, "unsupported: type value '" + e.name + "'");
        } else {
          report(e.pos, "undeclared reference to '" + e.name + "' (in container '')");
        }
        return types::error();
      }
      case ExprKind::kSelect:
        return checkSelect(e);
      case ExprKind::kCall:
        return checkCall(e);
      case ExprKind::kList: {
        TypePtr elem;
        for (const ExprPtr& el : e.args) elem = joinTypes(*el, elem, check(*el));
        return types::list(elem ? elem : newTypeVar());
      }
      case ExprKind::kMap: {
        TypePtr key, value;
        for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
          key = joinTypes(*e.args[i], key, check(*e.args[i]));
          value = joinTypes(*e.args[i + 1], value, check(*e.args[i + 1]));
        }
        if (!key) return types::map(newTypeVar(), newTypeVar());
        return types::map(key, value);
      }
      case ExprKind::kComprehension:
        return checkComprehension(e);
    }
    return types::error();
  }

  TypePtr joinTypes(const Expr& e, const TypePtr& previous, const TypePtr& current) {
    if (!previous) return current;
    if (isAssignable(previous, current)) return mostGeneral(previous, current);
    if (!env_.homogeneousLiterals) return types::dyn();
    report(e.pos, "expected type '" + formatType(*substitute(mapping_, previous, true)) +
                      "' but found '" + formatType(*substitute(mapping_, current, true)) + "'");
    return types::error();
  }

  TypePtr checkSelect(const Expr& e) {
    // A dotted name may be a variable of its own ("a.b.c"), unless its first part is a
    // comprehension variable.
    std::string qualified;
    if (!e.testOnly && qualifiedName(e, &qualified) && !isLocal(rootName(e))) {
      for (const auto& [n, t] : env_.variables) {
        if (n == qualified) return t;
      }
    }
    TypePtr operand = substitute(mapping_, check(*e.operand), false);
    TypePtr result = types::error();
    switch (operand->kind) {
      case TypeKind::kMap:
        result = operand->params[1];
        break;
      case TypeKind::kStruct: {
        auto it = env_.structFields.find(operand->name);
        if (it == env_.structFields.end()) {
          report(e.pos, "type '" + formatType(*operand) + "' does not support field selection");
          break;
        }
        auto f = it->second.find(e.name);
        if (f == it->second.end()) {
          report(e.pos, "undefined field '" + e.name + "'");
        } else {
          result = f->second;
        }
        break;
      }
      case TypeKind::kTypeParam:
        isAssignable(types::dyn(), operand);
        result = types::dyn();
        break;
      default:
        if (!isDynOrError(*operand)) {
          report(e.pos, "type '" + formatType(*operand) + "' does not support field selection");
        }
        result = types::dyn();
    }
    if (e.testOnly) return types::boolean();
    return substitute(mapping_, result, false);
  }

  static bool qualifiedName(const Expr& e, std::string* out) {
    if (e.kind == ExprKind::kIdent) {
      *out = e.name;
      return true;
    }
    if (e.kind == ExprKind::kSelect && !e.testOnly) {
      if (!qualifiedName(*e.operand, out)) return false;
      *out += "." + e.name;
      return true;
    }
    return false;
  }

  TypePtr checkCall(const Expr& e) {
    std::vector<TypePtr> argTypes;
    const Expr* target = e.operand.get();
    if (target != nullptr) {
      std::string qualified;
      if (qualifiedName(*target, &qualified)) {
        qualified += "." + e.name;
        if (unsupportedFunction(qualified) && !lookupIdent(rootName(*target))) {
          for (const ExprPtr& a : e.args) check(*a);
          report(e.pos, "unsupported: function '" + qualified + "'");
          return types::error();
        }
      }
      argTypes.push_back(check(*target));
    }
    for (const ExprPtr& a : e.args) argTypes.push_back(check(*a));

    if (e.name == "_&&_" || e.name == "_||_") {
      bool ok = true;
      for (size_t i = 0; i < e.args.size(); ++i) {
        if (!isAssignable(argTypes[i], types::boolean())) {
          report(e.args[i]->pos, "expected type 'bool' but found '" +
                                     formatType(*substitute(mapping_, argTypes[i], true)) + "'");
          ok = false;
        }
      }
      return ok ? types::boolean() : types::error();
    }
    auto fn = functions().find(e.name);
    if (fn == functions().end()) {
      if (unsupportedFunction(e.name)) {
        report(e.pos, "unsupported: function '" + e.name + "'");
      } else {
        report(e.pos, "undeclared reference to '" + e.name + "' (in container '')");
      }
      return types::error();
    }
    TypePtr result;
    for (const Overload& o : fn->second) {
      if (o.member != (target != nullptr)) continue;
      if (o.crossNumeric && !env_.crossTypeNumericComparisons) continue;
      if (o.params.size() != argTypes.size()) continue;
      // Fresh type variables for the overload's parameters.
      Mapping fresh;
      std::vector<TypePtr> params;
      params.reserve(o.params.size());
      TypePtr overloadResult;
      {
        std::vector<std::string> seen;
        auto freshen = [&](auto& self, const TypePtr& t) -> void {
          if (t->kind == TypeKind::kTypeParam && !fresh.count(t->name)) {
            fresh[t->name] = newTypeVar();
          }
          for (const TypePtr& p : t->params) self(self, p);
        };
        for (const TypePtr& p : o.params) freshen(freshen, p);
        freshen(freshen, o.result);
        for (const TypePtr& p : o.params) params.push_back(substitute(fresh, p, false));
        overloadResult = substitute(fresh, o.result, false);
      }
      Mapping copy = mapping_;
      bool ok = true;
      for (size_t i = 0; i < params.size() && ok; ++i) {
        ok = internalIsAssignable(copy, argTypes[i], params[i]);
      }
      if (!ok) continue;
      mapping_ = std::move(copy);
      TypePtr r = substitute(mapping_, overloadResult, false);
      if (!result) {
        result = r;
      } else if (!isDyn(*result) && !isExact(*r, *result)) {
        result = types::dyn();
      }
    }
    if (result) return result;
    if (unsupportedFunction(e.name)) {
      report(e.pos, "unsupported: function '" + e.name + "'");
      return types::error();
    }
    std::string sig;
    size_t first = 0;
    if (target != nullptr) {
      sig = formatType(*substitute(mapping_, argTypes[0], true)) + ".";
      first = 1;
    }
    sig += "(";
    for (size_t i = first; i < argTypes.size(); ++i) {
      if (i > first) sig += ", ";
      sig += formatType(*substitute(mapping_, argTypes[i], true));
    }
    sig += ")";
    report(e.pos, "found no matching overload for '" + e.name + "' applied to '" + sig + "'");
    return types::error();
  }

  static std::string rootName(const Expr& e) {
    const Expr* x = &e;
    while (x->kind == ExprKind::kSelect) x = x->operand.get();
    return x->kind == ExprKind::kIdent ? x->name : std::string();
  }

  TypePtr checkComprehension(const Expr& e) {
    if (e.macro == MacroKind::kBind) {
      TypePtr init = check(*e.args[0]);
      scopes_.emplace_back(e.name, init);
      TypePtr result = check(*e.args[1]);
      scopes_.pop_back();
      return substitute(mapping_, result, false);
    }
    TypePtr range = substitute(mapping_, check(*e.operand), false);
    TypePtr varType;
    switch (range->kind) {
      case TypeKind::kList:
      case TypeKind::kMap:
        varType = range->params[0];
        break;
      case TypeKind::kDyn:
      case TypeKind::kError:
      case TypeKind::kTypeParam:
        isAssignable(types::dyn(), range);
        varType = types::dyn();
        break;
      default:
        report(e.operand->pos, "expression of type '" + formatType(*range) +
                                   "' cannot be range of a comprehension (must be list, map, or "
                                   "dynamic)");
        varType = types::error();
    }
    scopes_.emplace_back(e.name, varType);
    TypePtr result = types::boolean();
    auto requireBool = [&](const Expr& p, const TypePtr& t, const char* fn, const TypePtr& accu) {
      if (isAssignable(types::boolean(), t)) return true;
      const std::string actual = formatType(*substitute(mapping_, t, true));
      if (fn == nullptr) {
        report(p.pos, "expected type 'bool' but found '" + actual + "'");
      } else {
        const std::string a = formatType(*substitute(mapping_, accu, true));
        report(p.pos, std::string("found no matching overload for '") + fn + "' applied to '(" +
                          actual + ", " + a + ", " + a + ")'");
      }
      return false;
    };
    switch (e.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists:
        requireBool(*e.args[0], check(*e.args[0]), nullptr, nullptr);
        break;
      case MacroKind::kExistsOne:
        requireBool(*e.args[0], check(*e.args[0]), "_?_:_", types::integer());
        break;
      case MacroKind::kMap:
        result = types::list(check(*e.args[0]));
        break;
      case MacroKind::kMapFilter: {
        const TypePtr p = check(*e.args[0]);
        const TypePtr f = check(*e.args[1]);
        requireBool(*e.args[0], p, "_?_:_", types::list(f));
        result = types::list(f);
        break;
      }
      case MacroKind::kFilter:
        requireBool(*e.args[0], check(*e.args[0]), "_?_:_", types::list(varType));
        result = types::list(varType);
        break;
      case MacroKind::kBind:
        break;
    }
    scopes_.pop_back();
    return substitute(mapping_, result, false);
  }

  std::string_view source_;
  const CheckEnv& env_;
  Mapping mapping_;
  int typeVarCounter_ = 0;
  std::vector<std::pair<std::string, TypePtr>> scopes_;
  std::vector<std::pair<uint32_t, std::string>> errors_;
};

}  // namespace

CheckResult check(const Expr& expr, std::string_view source, const CheckEnv& env) {
  return Checker(source, env).run(expr);
}

}  // namespace ksched::cel
