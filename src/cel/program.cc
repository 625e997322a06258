// Planning: a checked expression to the Plan that evaluator.cc walks.
#include "cel/program.h"

#include <re2/re2.h>

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

}  // namespace ksched::cel
