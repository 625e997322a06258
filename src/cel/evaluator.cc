// The evaluation of a Plan (program.h): a walk of the tree with cel-go's error propagation,
// its short-circuits and the cost of each step.
#include <cstring>
#include <string>
#include <vector>

#include "cel/program.h"

namespace ksched::cel {

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
