#include "cel/checker.h"

#include <algorithm>
#include <set>

#include "cel/checker_internal.h"
#include "cel/parser.h"

namespace ksched::cel {

namespace {

using namespace checking;

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
    if (fn != functions().end() && e.name == "includes" && !env_.draIncludes) {
      fn = functions().end();
    }
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
