// The evaluation context and the operations every part of the evaluator shares: CEL's
// heterogeneous equality, map lookups (including the device views), iteration, and the runtime
// cost that cel-go's cost tracker would count.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "cel/cel.h"
#include "cel/value.h"

namespace ksched::cel {

inline constexpr std::string_view kCostLimitExceeded =
    "operation cancelled: actual cost limit exceeded";
inline constexpr std::string_view kNoSuchOverload = "no such overload";

// One evaluation. Not shared between threads.
struct EvalContext {
  Arena& arena;
  const DeviceView* device = nullptr;  // set when `device` is bound
  const Value* globals = nullptr;      // by slot
  Value* locals = nullptr;             // comprehension and cel.bind variables, by slot
  bool* localSet = nullptr;            // cel.bind variables evaluated yet
  int64_t cost = 0;
  int64_t limit = INT64_MAX;
  bool cancelled = false;

  // Adds `n` and reports whether evaluation may go on (false once past the limit).
  bool addCost(int64_t n) {
    cost += n;
    if (cost > limit) cancelled = true;
    return !cancelled;
  }
  Value cancelledError() const { return Value::error(kCostLimitExceeded); }
  // An error whose message is copied into the arena.
  Value error(std::string_view message) { return Value::error(arena.copy(message)); }
};

// CEL equality (cel-go types.Equal): numbers compare across int, uint and double by value;
// values of different types are unequal; lists and maps element by element. Comparing a
// kubernetes.Semver or Quantity with another type is the error "no such overload".
Value equals(const Value& a, const Value& b, EvalContext& c);

// Orders two numbers (int, uint, double in any combination) as cel-go does: -1, 0, 1, or 2
// when a NaN makes them unordered.
int compareNumbers(const Value& a, const Value& b);

// Lookups. Return false when the key is absent (device.attributes and device.capacity are
// never absent: a missing domain is an empty map, as upstream's map-with-default).
bool mapFind(const Value& m, const Value& key, EvalContext& c, Value* out);
// Whether the key is really there (`in`): a missing domain is absent here.
bool mapContains(const Value& m, const Value& key, EvalContext& c);
size_t mapSize(const Value& m, EvalContext& c);
// The keys, in the map's order, in the arena.
ListData mapKeys(const Value& m, EvalContext& c);

// cel-go's actualSize: the length of strings (code points), bytes, lists and maps; 1 otherwise.
uint64_t actualSize(const Value& v, EvalContext& c);

// The attribute `id` of `domain` ("domain/id", or "id" when domain is the driver's).
const api::DeviceAttribute* findAttribute(const DeviceView& d, std::string_view domain,
                                          std::string_view id);
const api::DeviceCapacity* findCapacity(const DeviceView& d, std::string_view domain,
                                        std::string_view id);
// An attribute as a CEL value (a version is parsed into the arena).
Value attributeValue(const api::DeviceAttribute& a, EvalContext& c);

// Upstream converts every attribute before evaluating; an unparsable version fails the
// device: "attribute <name>: parse semantic version: <why>". Empty when all are fine.
std::string checkAttributes(const DeviceView& d);

}  // namespace ksched::cel
