// A CEL evaluator for the environment of Dynamic Resource Allocation device selectors
// (resource.k8s.io DeviceSelector.cel.expression): the expression sees one variable, `device`,
// with `driver`, `attributes[domain][name]` (int, bool, string, semver version, or a list of one
// of those), `capacity[domain][name]` (quantities) and `allowMultipleAllocations`, and must
// yield a bool.
//
// Expressions are compiled once and cached by their text (Cache); a Program is immutable and
// may be evaluated from many threads. Evaluation is bounded by upstream's cost limit, so a
// hostile expression cannot stall the scheduling loop. A construct the evaluator does not
// support is a compile error that names it, never a wrong answer.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <ksched/api/resource.h>

namespace ksched::cel {

// Upstream's limits for a device selector (resource.k8s.io CELSelectorExpressionMaxCost and
// CELSelectorExpressionMaxLength).
inline constexpr int64_t kSelectorMaxCost = 1000000;
inline constexpr size_t kSelectorMaxLength = 10 * 1024;

// What an expression sees of a device.
struct DeviceView {
  std::string_view driver;
  const api::DeviceAttributes* attributes = nullptr;  // never null when evaluating
  const api::DeviceCapacities* capacity = nullptr;    // never null when evaluating
  bool allowMultipleAllocations = false;
};

struct EvalResult {
  bool value = false;
  std::string error;  // non-empty: a runtime error (no such key, cost limit, type error, ...)
  int64_t cost = 0;   // the runtime cost spent, in upstream's units as near as the evaluator can
  [[nodiscard]] bool ok() const noexcept { return error.empty(); }
};

class Program {
 public:
  virtual ~Program() = default;
  [[nodiscard]] virtual EvalResult evaluate(const DeviceView& device,
                                            int64_t costLimit = kSelectorMaxCost) const = 0;
};

struct CompileResult {
  std::shared_ptr<const Program> program;  // null on error
  std::string error;                       // e.g. "compilation failed: ERROR: <input>:1:8: ..."
};

// The parts of the environment feature gates add, as upstream's compiler takes them.
struct Features {
  // DRAListTypeAttributes: attributes are of type dyn rather than any (the macros can iterate a
  // list attribute), and the `includes()` member function (`x.includes(v)`: the list attribute
  // x holds v, or the scalar x equals it). A list attribute is a CEL list with the gate off
  // too: upstream's selectors convert every attribute the object holds.
  bool listTypeAttributes = false;

  friend bool operator==(const Features&, const Features&) = default;
};

// Parses and type-checks `expression` for the device environment. Never throws.
[[nodiscard]] CompileResult compile(std::string_view expression, Features features = {});

// compile() once per distinct expression, with one set of features. Thread-safe.
class Cache {
 public:
  explicit Cache(Features features = {}) : features_(features) {}
  [[nodiscard]] CompileResult get(std::string_view expression);

 private:
  Features features_;
  std::mutex mu_;
  std::unordered_map<std::string, CompileResult> entries_;
};

}  // namespace ksched::cel
