// What the families of the function library share (functions.cc dispatches to them): the
// result makers and each family's entry point. A family checks the argument kinds it needs
// itself where functions.cc's dispatch leaves them to it; none charges cost (callFunction does).
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "cel/functions.h"

namespace ksched::cel::builtin {

inline Value noSuchOverload() { return Value::error(kNoSuchOverload); }

inline Value makeString(EvalContext& c, std::string_view s) { return Value::str(c.arena.copy(s)); }

inline Value makeList(EvalContext& c, const std::vector<Value>& items) {
  auto* l = c.arena.make<ListData>();
  Value* data = c.arena.allocArray<Value>(items.size());
  for (size_t i = 0; i < items.size(); ++i) data[i] = items[i];
  l->items = data;
  l->size = items.size();
  return Value::ofList(l);
}

inline Value makeQuantity(EvalContext& c, const api::Quantity& q) {
  return Value::ofQuantity(c.arena.make<api::Quantity>(q));
}

// ---- Operators (functions_operators.cc) -----------------------------------------------------

// + - * / % on two values of the same kind (int, uint, double; + also strings, bytes, lists).
Value arith(Fn fn, const Value& a, const Value& b, EvalContext& c);
// -1, 0, 1, or an error value in *err.
int compareValues(const Value& a, const Value& b, Value* err);
// obj[key] on a list or a map.
Value indexValue(const Value& obj, const Value& key, EvalContext& c);
// elem in container.
Value inValue(const Value& elem, const Value& container, EvalContext& c);

// ---- Conversions (functions_conversions.cc): int() uint() double() string() bytes() bool() ---

Value convert(Fn fn, const Value& v, EvalContext& c);

// ---- Regular expressions (functions_regex.cc): matches, find, findAll -----------------------

// `pre` is the precompiled pattern, or null to compile args[1].
Value regexCall(Fn fn, const Value* args, size_t n, const re2::RE2* pre, EvalContext& c);

// ---- Strings extension (functions_strings.cc) -----------------------------------------------

// Go's rune stepping: the length of the UTF-8 sequence at `at`, 1 for an invalid byte.
size_t runeLength(std::string_view s, size_t at);
// charAt, indexOf, lastIndexOf, lowerAscii, upperAscii, replace, split, substring, trim.
Value stringsCall(Fn fn, const Value* args, size_t n, EvalContext& c);
Value joinCall(const Value* args, size_t n, EvalContext& c);

// ---- Kubernetes libraries (functions_kubernetes.cc): semver, quantity -----------------------

Value semverCall(Fn fn, const Value* args, size_t n, EvalContext& c);
Value quantityCall(Fn fn, const Value* args, size_t n, EvalContext& c);
// isGreaterThan, isLessThan, compareTo on two versions or two quantities.
Value compareCall(Fn fn, const Value* args, EvalContext& c);
// <target>.includes(<arg>) of DRA's list attributes: an item of a list target equals the
// argument, or a scalar target equals it. Lists longer than a device's attribute values are an
// error, as upstream bounds the call's cost.
Value includesCall(const Value& target, const Value& arg, EvalContext& c);

}  // namespace ksched::cel::builtin
