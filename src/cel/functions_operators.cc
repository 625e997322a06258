// The operators: arithmetic, ordering, indexing and membership (cel-go's standard library).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "cel/functions_internal.h"

namespace ksched::cel::builtin {

namespace {

bool isNumber(const Value& v) {
  return v.kind == Kind::kInt || v.kind == Kind::kUint || v.kind == Kind::kDouble;
}

}  // namespace

Value arith(Fn fn, const Value& a, const Value& b, EvalContext& c) {
  if (a.kind != b.kind) return noSuchOverload();
  switch (a.kind) {
    case Kind::kInt: {
      int64_t r = 0;
      const int64_t x = a.i, y = b.i;
      switch (fn) {
        case Fn::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return Value::error("integer overflow");
          return Value::integer(r);
        case Fn::kDiv:
          if (y == 0) return Value::error("division by zero");
          if (x == INT64_MIN && y == -1) return Value::error("integer overflow");
          return Value::integer(x / y);
        case Fn::kMod:
          if (y == 0) return Value::error("modulus by zero");
          if (x == INT64_MIN && y == -1) return Value::error("integer overflow");
          return Value::integer(x % y);
        default:
          return noSuchOverload();
      }
    }
    case Kind::kUint: {
      uint64_t r = 0;
      const uint64_t x = a.u, y = b.u;
      switch (fn) {
        case Fn::kAdd:
          if (__builtin_add_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kSub:
          if (__builtin_sub_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kMul:
          if (__builtin_mul_overflow(x, y, &r)) return Value::error("unsigned integer overflow");
          return Value::uinteger(r);
        case Fn::kDiv:
          if (y == 0) return Value::error("division by zero");
          return Value::uinteger(x / y);
        case Fn::kMod:
          if (y == 0) return Value::error("modulus by zero");
          return Value::uinteger(x % y);
        default:
          return noSuchOverload();
      }
    }
    case Kind::kDouble:
      switch (fn) {
        case Fn::kAdd:
          return Value::dbl(a.d + b.d);
        case Fn::kSub:
          return Value::dbl(a.d - b.d);
        case Fn::kMul:
          return Value::dbl(a.d * b.d);
        case Fn::kDiv:
          return Value::dbl(a.d / b.d);
        default:
          return noSuchOverload();
      }
    case Kind::kString:
    case Kind::kBytes: {
      if (fn != Fn::kAdd) return noSuchOverload();
      const size_t n = a.s.size + b.s.size;
      char* p = c.arena.allocArray<char>(n);
      if (a.s.size) std::memcpy(p, a.s.data, a.s.size);
      if (b.s.size) std::memcpy(p + a.s.size, b.s.data, b.s.size);
      return Value::str(std::string_view(p, n), a.kind);
    }
    case Kind::kList: {
      if (fn != Fn::kAdd) return noSuchOverload();
      if (a.list->size == 0) return b;
      if (b.list->size == 0) return a;
      const size_t n = a.list->size + b.list->size;
      Value* items = c.arena.allocArray<Value>(n);
      std::copy(a.list->items, a.list->items + a.list->size, items);
      std::copy(b.list->items, b.list->items + b.list->size, items + a.list->size);
      return Value::ofList(c.arena.make<ListData>(ListData{items, n}));
    }
    default:
      return noSuchOverload();
  }
}

// -1, 0, 1, or an error value in *err.
int compareValues(const Value& a, const Value& b, Value* err) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  if (isNumber(a) && isNumber(b)) {
    const int r = compareNumbers(a, b);
    if (r == 2) {
      *err = Value::error("NaN values cannot be ordered");
      return 0;
    }
    return r;
  }
  if (a.kind != b.kind) {
    *err = noSuchOverload();
    return 0;
  }
  switch (a.kind) {
    case Kind::kBool:
      return cmp(a.b, b.b);
    case Kind::kString:
    case Kind::kBytes: {
      const int r = a.sv().compare(b.sv());
      return r < 0 ? -1 : (r > 0 ? 1 : 0);
    }
    default:
      *err = noSuchOverload();
      return 0;
  }
}

// ---- Index and membership -------------------------------------------------------------------

Value indexValue(const Value& obj, const Value& key, EvalContext& c) {
  if (obj.kind == Kind::kList) {
    int64_t i = 0;
    switch (key.kind) {
      case Kind::kInt:
        i = key.i;
        break;
      case Kind::kUint:
        if (key.u > uint64_t(INT64_MAX)) return c.error("index out of bounds: " + formatKey(key));
        i = static_cast<int64_t>(key.u);
        break;
      case Kind::kDouble: {
        const double t = std::trunc(key.d);
        if (t != key.d || std::isnan(key.d) || std::abs(key.d) >= 9.2e18) {
          return c.error("unsupported index value " + formatDouble(key.d) + " in list");
        }
        i = static_cast<int64_t>(t);
        break;
      }
      default:
        return c.error("unsupported index type '" + std::string(typeName(key)) + "' in list");
    }
    if (i < 0 || static_cast<uint64_t>(i) >= obj.list->size) {
      return c.error("index out of bounds: " + formatKey(key));
    }
    return obj.list->items[i];
  }
  if (obj.isMapLike()) {
    if (obj.kind == Kind::kMap &&
        !(key.kind == Kind::kString || key.kind == Kind::kBool || isNumber(key))) {
      return c.error("unsupported key type");
    }
    Value out;
    if (mapFind(obj, key, c, &out)) return out;
  }
  return c.error("no such key: " + formatKey(key));
}

Value inValue(const Value& elem, const Value& container, EvalContext& c) {
  if (container.kind == Kind::kList) {
    Value firstErr;
    bool sawErr = false;
    for (size_t i = 0; i < container.list->size; ++i) {
      Value e = equals(container.list->items[i], elem, c);
      if (e.kind == Kind::kBool) {
        if (e.b) return e;
      } else if (!sawErr) {
        sawErr = true;
        firstErr = e.isError() ? e : noSuchOverload();
      }
    }
    return sawErr ? firstErr : Value::boolean(false);
  }
  if (container.isMapLike()) return Value::boolean(mapContains(container, elem, c));
  return noSuchOverload();
}

}  // namespace ksched::cel::builtin
