#include "cel/program.h"

#include <re2/re2.h>

#include <cstring>

#include "cel/parser.h"

namespace ksched::cel {

// ---- Planning --------------------------------------------------------------------------------

class Planner {
 public:
  Planner(Plan& plan, std::string_view source, const std::vector<std::string>& globals)
      : plan_(plan), source_(source), globals_(globals) {}

  bool run(const Expr& e, std::string* error) {
    plan_.root_ = build(e);
    if (!error_.empty()) {
      *error = error_;
      return false;
    }
    plan_.numLocals_ = nextSlot_;
    plan_.bindInits_.assign(static_cast<size_t>(nextSlot_), nullptr);
    collectBindInits(plan_.root_);
    return true;
  }

 private:
  static bool isAttribute(const Node& n) {
    return n.op == Op::kGlobal || n.op == Op::kLocal || n.op == Op::kSelect || n.op == Op::kIndex;
  }

  Value literal(const Expr& e) {
    switch (e.literal) {
      case LiteralKind::kNull:
        return Value::null();
      case LiteralKind::kBool:
        return Value::boolean(e.boolValue);
      case LiteralKind::kInt:
        return Value::integer(e.intValue);
      case LiteralKind::kUint:
        return Value::uinteger(e.uintValue);
      case LiteralKind::kDouble:
        return Value::dbl(e.doubleValue);
      case LiteralKind::kString:
        return Value::str(plan_.constants_.copy(e.text));
      case LiteralKind::kBytes:
        return Value::bytes(plan_.constants_.copy(e.text));
    }
    return Value::null();
  }

  Node build(const Expr& e) {
    Node n;
    switch (e.kind) {
      case ExprKind::kLiteral:
        n.op = Op::kConst;
        n.constant = literal(e);
        return n;
      case ExprKind::kIdent: {
        for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
          if (it->first == e.name) {
            n.op = Op::kLocal;
            n.slot = it->second;
            return n;
          }
        }
        n.op = Op::kGlobal;
        for (size_t i = 0; i < globals_.size(); ++i) {
          if (globals_[i] == e.name) n.slot = static_cast<int32_t>(i);
        }
        n.constant = Value::str(plan_.constants_.copy(e.name));
        return n;
      }
      case ExprKind::kSelect:
        if (!e.testOnly) {
          const int32_t slot = qualifiedGlobal(e);
          if (slot >= 0) {
            n.op = Op::kGlobal;
            n.slot = slot;
            return n;
          }
        }
        n.op = e.testOnly ? Op::kHas : Op::kSelect;
        n.constant = Value::str(plan_.constants_.copy(e.name));
        n.slot = deviceField(e.name);
        n.kids.push_back(build(*e.operand));
        n.relative = !isAttribute(n.kids[0]);
        return n;
      case ExprKind::kCall:
        return buildCall(e);
      case ExprKind::kList:
      case ExprKind::kMap: {
        n.op = e.kind == ExprKind::kList ? Op::kList : Op::kMap;
        bool allConst = true;
        for (const ExprPtr& a : e.args) {
          n.kids.push_back(build(*a));
          if (n.kids.back().op != Op::kConst) allConst = false;
        }
        if (allConst) precompute(n);
        return n;
      }
      case ExprKind::kComprehension: {
        n.op = Op::kMacro;
        n.macro = e.macro;
        n.slot = nextSlot_++;
        if (e.macro == MacroKind::kBind) {
          n.kids.push_back(build(*e.args[0]));
          scopes_.emplace_back(e.name, n.slot);
          n.kids.push_back(build(*e.args[1]));
          scopes_.pop_back();
          return n;
        }
        n.kids.push_back(build(*e.operand));
        scopes_.emplace_back(e.name, n.slot);
        for (const ExprPtr& a : e.args) n.kids.push_back(build(*a));
        scopes_.pop_back();
        return n;
      }
    }
    return n;
  }

  // The device's fields, numbered for a selection on `device` without comparing names.
  static int32_t deviceField(std::string_view name) {
    if (name == "driver") return 1;
    if (name == "attributes") return 2;
    if (name == "capacity") return 3;
    if (name == "allowMultipleAllocations") return 4;
    return 0;
  }

  // The slot of a dotted variable name ("a.b.c") the select chain spells, or -1.
  int32_t qualifiedGlobal(const Expr& e) const {
    std::string name = e.name;
    const Expr* x = e.operand.get();
    while (x->kind == ExprKind::kSelect && !x->testOnly) {
      name = x->name + "." + name;
      x = x->operand.get();
    }
    if (x->kind != ExprKind::kIdent) return -1;
    for (const auto& [local, slot] : scopes_) {
      if (local == x->name) return -1;
    }
    name = x->name + "." + name;
    for (size_t i = 0; i < globals_.size(); ++i) {
      if (globals_[i] == name) return static_cast<int32_t>(i);
    }
    return -1;
  }

  void precompute(Node& n) {
    Arena& a = plan_.constants_;
    if (n.op == Op::kList) {
      Value* items = a.allocArray<Value>(n.kids.size());
      for (size_t i = 0; i < n.kids.size(); ++i) items[i] = n.kids[i].constant;
      n.constant = Value::ofList(a.make<ListData>(ListData{items, n.kids.size()}));
      n.precomputed = true;
      return;
    }
    // A map of literals: only when its keys are valid and distinct (otherwise evaluation
    // reports the error every time, as upstream does).
    const size_t size = n.kids.size() / 2;
    Value* keys = a.allocArray<Value>(size);
    Value* values = a.allocArray<Value>(size);
    for (size_t i = 0; i < size; ++i) {
      const Value& k = n.kids[2 * i].constant;
      if (!(k.kind == Kind::kString || k.kind == Kind::kInt || k.kind == Kind::kUint ||
            k.kind == Kind::kBool)) {
        return;
      }
      for (size_t j = 0; j < i; ++j) {
        Arena scratch;
        EvalContext c{scratch};
        Value eq = equals(keys[j], k, c);
        if (eq.kind == Kind::kBool && eq.b) return;
      }
      keys[i] = k;
      values[i] = n.kids[2 * i + 1].constant;
    }
    n.constant = Value::ofMap(a.make<MapData>(MapData{keys, values, size}));
    n.precomputed = true;
  }

  Node buildCall(const Expr& e) {
    Node n;
    const bool member = e.operand != nullptr;
    if (e.name == "_&&_" || e.name == "_||_") {
      n.op = e.name == "_&&_" ? Op::kAnd : Op::kOr;
      for (const ExprPtr& a : e.args) n.kids.push_back(build(*a));
      return n;
    }
    if (e.name == "_?_:_" && !member && e.args.size() == 3) {
      n.op = Op::kCond;
      for (const ExprPtr& a : e.args) n.kids.push_back(build(*a));
      return n;
    }
    if (member) n.kids.push_back(build(*e.operand));
    for (const ExprPtr& a : e.args) n.kids.push_back(build(*a));
    if (e.name == "_[_]" && !member && n.kids.size() == 2) {
      n.op = Op::kIndex;
      n.relative = !isAttribute(n.kids[0]);
      return n;
    }
    n.op = Op::kCall;
    n.fn = resolveFunction(e.name, member, n.kids.size());
    if (isPureConstructor(n.fn) && allConstant(n.kids)) {
      // quantity("1Gi"), semver("1.0.0"): parsed here once; evaluation still charges the
      // call's cost.
      Arena& a = plan_.constants_;
      EvalContext c{a};
      Value args[2];
      for (size_t i = 0; i < n.kids.size() && i < 2; ++i) args[i] = n.kids[i].constant;
      Value r = callFunction(n.fn, args, n.kids.size(), nullptr, c);
      n.precomputed = true;
      n.constant = r.isError() ? Value::error(a.copy(r.sv())) : r;
      return n;
    }
    // A literal pattern is compiled once here.
    for (size_t i = 0; i < n.kids.size(); ++i) {
      if (!takesRegex(n.fn, i) || n.kids[i].op != Op::kConst ||
          n.kids[i].constant.kind != Kind::kString) {
        continue;
      }
      std::string err;
      std::unique_ptr<re2::RE2> re = compilePattern(n.kids[i].constant.sv(), &err);
      if (!re) {
        if (n.fn == Fn::kMatches && error_.empty()) {
          const Expr& arg = member ? (i == 0 ? *e.operand : *e.args[i - 1]) : *e.args[i];
          error_ = formatError(source_, arg.pos, "invalid matches argument");
        }
        continue;
      }
      n.regex = re.get();
      plan_.regexes_.push_back(std::move(re));
    }
    return n;
  }

  static bool isPureConstructor(Fn fn) {
    return fn == Fn::kQuantity || fn == Fn::kIsQuantity || fn == Fn::kSemver || fn == Fn::kIsSemver;
  }

  static bool allConstant(const std::vector<Node>& kids) {
    if (kids.empty() || kids.size() > 2) return false;
    for (const Node& k : kids) {
      if (k.op != Op::kConst) return false;
    }
    return true;
  }

  void collectBindInits(const Node& n) {
    if (n.op == Op::kMacro && n.macro == MacroKind::kBind) {
      plan_.bindInits_[static_cast<size_t>(n.slot)] = &n.kids[0];
    }
    for (const Node& k : n.kids) collectBindInits(k);
  }

  Plan& plan_;
  std::string_view source_;
  const std::vector<std::string>& globals_;
  std::vector<std::pair<std::string, int32_t>> scopes_;
  int32_t nextSlot_ = 0;
  std::string error_;
};

Plan::Plan() = default;
Plan::~Plan() = default;

std::unique_ptr<Plan> Plan::build(const Expr& expr, std::string_view source,
                                  const std::vector<std::string>& globals, std::string* error) {
  auto plan = std::make_unique<Plan>();
  Planner planner(*plan, source, globals);
  if (!planner.run(expr, error)) return nullptr;
  return plan;
}

// ---- Evaluation ------------------------------------------------------------------------------

namespace {

class Evaluator {
 public:
  Evaluator(const std::vector<const Node*>& bindInits, EvalContext& c)
      : bindInits_(bindInits), c_(c) {}

  Value eval(const Node& n) {
    switch (n.op) {
      case Op::kConst:
        return n.constant;
      case Op::kGlobal:
        if (!c_.addCost(1)) return c_.cancelledError();
        if (n.slot < 0) {
          return c_.error("no such attribute: " + std::string(n.constant.sv()));
        }
        return c_.globals[n.slot];
      case Op::kLocal: {
        if (!c_.addCost(1)) return c_.cancelledError();
        if (!c_.localSet[n.slot]) {
          const Node* init = bindInits_[static_cast<size_t>(n.slot)];
          c_.locals[n.slot] = init != nullptr ? eval(*init) : Value::null();
          c_.localSet[n.slot] = true;
          if (c_.cancelled) return c_.cancelledError();
        }
        return c_.locals[n.slot];
      }
      case Op::kSelect:
      case Op::kHas:
        return select(n);
      case Op::kIndex: {
        Value obj = eval(n.kids[0]);
        Value key = eval(n.kids[1]);
        if (c_.cancelled) return c_.cancelledError();
        if (!c_.addCost(n.relative ? 2 : 1)) return c_.cancelledError();
        if (obj.isError()) return obj;
        if (key.isError()) return key;
        return callFunctionNoCost(Fn::kIndex, obj, key);
      }
      case Op::kCall:
        return call(n);
      case Op::kAnd:
      case Op::kOr:
        return logical(n);
      case Op::kCond: {
        Value cond = eval(n.kids[0]);
        if (c_.cancelled) return c_.cancelledError();
        if (cond.isError()) return cond;
        if (cond.kind != Kind::kBool) return Value::error(kNoSuchOverload);
        return eval(n.kids[cond.b ? 1 : 2]);
      }
      case Op::kList:
        return list(n);
      case Op::kMap:
        return map(n);
      case Op::kMacro:
        return macro(n);
    }
    return Value::error(kNoSuchOverload);
  }

 private:
  Value callFunctionNoCost(Fn fn, const Value& a, const Value& b) {
    const Value args[2] = {a, b};
    const int64_t before = c_.cost;
    Value r = callFunction(fn, args, 2, nullptr, c_);
    c_.cost = before;
    c_.cancelled = c_.cost > c_.limit;
    return r;
  }

  Value select(const Node& n) {
    Value obj = eval(n.kids[0]);
    if (c_.cancelled) return c_.cancelledError();
    const int64_t cost = (n.relative ? 1 : 0) + (n.op == Op::kSelect ? 1 : 0);
    if (!c_.addCost(cost)) return c_.cancelledError();
    if (obj.isError()) return obj;
    if (obj.kind == Kind::kDevice && n.op == Op::kSelect && c_.device != nullptr) {
      switch (n.slot) {
        case 1:
          return Value::str(c_.device->driver);
        case 2:
          return Value::view(Kind::kAttrDomains);
        case 3:
          return Value::view(Kind::kCapDomains);
        case 4:
          return Value::boolean(c_.device->allowMultipleAllocations);
        default:
          break;
      }
    }
    const Value field = n.constant;
    if (obj.kind == Kind::kList) {
      return c_.error("unsupported index type 'string' in list");
    }
    if (n.op == Op::kHas) {
      if (!obj.isMapLike()) return Value::boolean(false);
      if (obj.kind == Kind::kAttrDomains || obj.kind == Kind::kCapDomains) {
        return Value::boolean(true);  // upstream's map with a default has every domain
      }
      return Value::boolean(mapContains(obj, field, c_));
    }
    Value out;
    if (obj.isMapLike() && mapFind(obj, field, c_, &out)) return out;
    return c_.error("no such key: " + std::string(field.sv()));
  }

  Value call(const Node& n) {
    const size_t argc = n.kids.size();
    Value inline_[4];
    Value* args = argc <= 4 ? inline_ : c_.arena.allocArray<Value>(argc);
    for (size_t i = 0; i < argc; ++i) {
      args[i] = eval(n.kids[i]);
      if (c_.cancelled) return c_.cancelledError();
    }
    for (size_t i = 0; i < argc; ++i) {
      if (args[i].isError()) {
        if (!c_.addCost(1)) return c_.cancelledError();
        return args[i];
      }
    }
    if (n.precomputed) {
      if (!c_.addCost(precomputedCost(n))) return c_.cancelledError();
      return n.constant;
    }
    Value r = callFunction(n.fn, args, argc, n.regex, c_);
    if (c_.cancelled) return c_.cancelledError();
    return r;
  }

  // What the call would have cost: the library charges its string argument's length.
  static int64_t precomputedCost(const Node& n) {
    const Value& arg = n.kids[0].constant;
    const size_t size = arg.kind == Kind::kString ? codePoints(arg.sv()) : 1;
    return static_cast<int64_t>((size + 9) / 10);
  }

  // cel-go's evalAnd/evalOr: false (true) decides; otherwise the first error, then the first
  // non-bool as "no such overload".
  Value logical(const Node& n) {
    const bool isAnd = n.op == Op::kAnd;
    Value err;
    bool haveErr = false;
    for (const Node& k : n.kids) {
      Value v = eval(k);
      if (c_.cancelled) return c_.cancelledError();
      if (v.kind == Kind::kBool) {
        if (v.b != isAnd) return v;
        continue;
      }
      if (!haveErr) {
        haveErr = true;
        err = v.isError() ? v : Value::error(kNoSuchOverload);
      }
    }
    if (haveErr) return err;
    return Value::boolean(isAnd);
  }

  Value list(const Node& n) {
    if (!c_.addCost(10)) return c_.cancelledError();
    if (n.precomputed) return n.constant;
    const size_t size = n.kids.size();
    Value* items = c_.arena.allocArray<Value>(size);
    for (size_t i = 0; i < size; ++i) {
      items[i] = eval(n.kids[i]);
      if (c_.cancelled) return c_.cancelledError();
      if (items[i].isError()) return items[i];
    }
    return Value::ofList(c_.arena.make<ListData>(ListData{items, size}));
  }

  Value map(const Node& n) {
    if (!c_.addCost(30)) return c_.cancelledError();
    if (n.precomputed) return n.constant;
    const size_t size = n.kids.size() / 2;
    Value* keys = c_.arena.allocArray<Value>(size);
    Value* values = c_.arena.allocArray<Value>(size);
    for (size_t i = 0; i < size; ++i) {
      Value k = eval(n.kids[2 * i]);
      if (c_.cancelled) return c_.cancelledError();
      if (k.isError()) return k;
      Value v = eval(n.kids[2 * i + 1]);
      if (c_.cancelled) return c_.cancelledError();
      if (v.isError()) return v;
      if (!(k.kind == Kind::kString || k.kind == Kind::kInt || k.kind == Kind::kUint ||
            k.kind == Kind::kBool)) {
        return c_.error("unsupported key type");
      }
      for (size_t j = 0; j < i; ++j) {
        Value eq = equals(keys[j], k, c_);
        if (eq.kind == Kind::kBool && eq.b) return Value::error("Failed with repeated key");
      }
      keys[i] = k;
      values[i] = v;
    }
    return Value::ofMap(c_.arena.make<MapData>(MapData{keys, values, size}));
  }

  // The macros, each with the cost and error behaviour of the fold cel-go expands it into.
  Value macro(const Node& n) {
    const auto slot = static_cast<size_t>(n.slot);
    if (n.macro == MacroKind::kBind) {
      // The range is an empty list literal; the variable is evaluated when first used.
      if (!c_.addCost(10)) return c_.cancelledError();
      c_.localSet[slot] = false;
      Value r = eval(n.kids[1]);
      c_.localSet[slot] = false;
      return c_.cancelled ? c_.cancelledError() : r;
    }
    Value range = eval(n.kids[0]);
    if (c_.cancelled) return c_.cancelledError();
    if (range.isError()) return range;
    ListData items;
    if (range.kind == Kind::kList) {
      items = *range.list;
    } else if (range.isMapLike()) {
      items = mapKeys(range, c_);
    } else {
      return c_.error("got '" + std::string(goTypeName(range)) + "', expected iterable type");
    }
    const Node& pred = n.kids[1];
    auto setVar = [&](const Value& v) {
      c_.locals[slot] = v;
      c_.localSet[slot] = true;
    };
    switch (n.macro) {
      case MacroKind::kAll:
      case MacroKind::kExists: {
        const bool all = n.macro == MacroKind::kAll;
        Value accu = Value::boolean(all);
        for (size_t i = 0; i < items.size; ++i) {
          // Loop condition: @not_strictly_false(@result) or @not_strictly_false(!@result).
          if (!c_.addCost(all ? 2 : 3)) return c_.cancelledError();
          if (accu.kind == Kind::kBool && accu.b != all) break;
          setVar(items.items[i]);
          if (!c_.addCost(1)) return c_.cancelledError();
          Value p = eval(pred);
          if (c_.cancelled) return c_.cancelledError();
          // Step: @result && p, or @result || p.
          if (p.kind == Kind::kBool && p.b != all) {
            accu = p;
          } else if (accu.kind == Kind::kBool && p.kind == Kind::kBool) {
            accu = p;
          } else if (!accu.isError()) {
            accu = p.isError() ? p : Value::error(kNoSuchOverload);
          }
        }
        if (!c_.addCost(1)) return c_.cancelledError();
        return accu;
      }
      case MacroKind::kExistsOne: {
        Value accu = Value::integer(0);
        for (size_t i = 0; i < items.size; ++i) {
          setVar(items.items[i]);
          Value p = eval(pred);
          if (c_.cancelled) return c_.cancelledError();
          if (p.isError()) {
            accu = p;
          } else if (p.kind != Kind::kBool) {
            accu = Value::error(kNoSuchOverload);
          } else if (p.b) {
            if (!c_.addCost(2)) return c_.cancelledError();
            if (!accu.isError()) {
              if (accu.i == INT64_MAX) {
                accu = Value::error("integer overflow");
              } else {
                accu = Value::integer(accu.i + 1);
              }
            }
          } else {
            if (!c_.addCost(1)) return c_.cancelledError();
          }
        }
        if (!c_.addCost(2)) return c_.cancelledError();
        if (accu.isError()) return accu;
        return Value::boolean(accu.i == 1);
      }
      case MacroKind::kMap:
      case MacroKind::kMapFilter:
      case MacroKind::kFilter: {
        // The accumulator's initial [] costs 10 when first used.
        if (!c_.addCost(10)) return c_.cancelledError();
        Value* out = c_.arena.allocArray<Value>(items.size);
        size_t count = 0;
        Value accuErr;
        bool failed = false;
        for (size_t i = 0; i < items.size; ++i) {
          setVar(items.items[i]);
          bool take = true;
          if (n.macro != MacroKind::kMap) {
            Value p = eval(pred);
            if (c_.cancelled) return c_.cancelledError();
            if (p.isError() || p.kind != Kind::kBool) {
              accuErr = p.isError() ? p : Value::error(kNoSuchOverload);
              failed = true;
              continue;
            }
            take = p.b;
          }
          if (!take) {
            if (!c_.addCost(1)) return c_.cancelledError();
            continue;
          }
          Value v = items.items[i];
          if (n.macro != MacroKind::kFilter) {
            v = eval(n.kids[n.macro == MacroKind::kMap ? 1 : 2]);
            if (c_.cancelled) return c_.cancelledError();
          } else {
            if (!c_.addCost(1)) return c_.cancelledError();  // the variable in [x]
          }
          // @result + [v]: the accumulator, the list literal, the concatenation.
          if (!c_.addCost(12)) return c_.cancelledError();
          if (failed) continue;
          if (v.isError()) {
            accuErr = v;
            failed = true;
            continue;
          }
          out[count++] = v;
        }
        if (!c_.addCost(1)) return c_.cancelledError();
        if (failed) return accuErr;
        return Value::ofList(c_.arena.make<ListData>(ListData{out, count}));
      }
      case MacroKind::kBind:
        break;
    }
    return Value::error(kNoSuchOverload);
  }

  const std::vector<const Node*>& bindInits_;
  EvalContext& c_;
};

}  // namespace

Value Plan::evaluate(EvalContext& c) const {
  c.locals = c.arena.allocArray<Value>(static_cast<size_t>(numLocals_));
  c.localSet = c.arena.allocArray<bool>(static_cast<size_t>(numLocals_));
  if (numLocals_ > 0) {
    std::memset(c.localSet, 0, static_cast<size_t>(numLocals_));
    for (int32_t i = 0; i < numLocals_; ++i) c.locals[i] = Value::null();
  }
  Evaluator e(bindInits_, c);
  Value r = e.eval(root_);
  if (c.cancelled) return c.cancelledError();
  return r;
}

}  // namespace ksched::cel
