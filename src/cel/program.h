// A checked expression turned into an evaluation tree (Plan, program.cc) and its tree-walking
// evaluator (evaluator.cc).
//
// Planning resolves once what evaluation would otherwise look up every time: variables to
// slots, functions to their identity (functions.h), literals to values, list and map literals of
// literals to prebuilt values, and regular expressions given as literals to compiled RE2
// programs. A Plan is immutable after build() and may be evaluated from many threads at once;
// everything an evaluation creates goes into the EvalContext's arena.
//
// Evaluation follows cel-go: errors are values that propagate, except that `&&` and `||`
// absorb them when the other side decides (false and true respectively), and the macros absorb
// them the way their expansion does. The runtime cost is counted as cel-go's cost tracker
// counts it (1 per variable, field selection and index, the library's per-function costs, 10 per
// list literal, 30 per map literal, the macros' loop steps); going past the context's limit
// stops the evaluation with "operation cancelled: actual cost limit exceeded".
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cel/ast.h"
#include "cel/functions.h"
#include "cel/runtime.h"

namespace ksched::cel {

enum class Op : uint8_t {
  kConst,
  kGlobal,  // a variable of the environment
  kLocal,   // a macro's iteration variable or a cel.bind variable
  kSelect,  // kids[0].field
  kHas,     // has(kids[0].field)
  kIndex,   // kids[0][kids[1]]
  kCall,
  kAnd,
  kOr,
  kCond,
  kList,
  kMap,
  kMacro,  // kids[0]: range (cel.bind: initializer), then the macro's expressions
};

struct Node {
  Op op = Op::kConst;
  Fn fn = Fn::kUnknown;
  MacroKind macro = MacroKind::kAll;
  bool relative = false;     // kSelect/kIndex/kHas on a computed operand: one more cost unit
  bool precomputed = false;  // literals, quantity("..."), semver("..."): `constant` holds it
  int32_t slot = -1;  // kGlobal, kLocal, kMacro: the variable; kSelect: the device field (1-4)
  Value constant;     // kConst; kSelect/kHas: the field name; precomputed literals
  const re2::RE2* regex = nullptr;
  std::vector<Node> kids;
};

class Plan {
 public:
  Plan();
  ~Plan();
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Null with `error` set (cel-go's display format) when a literal pattern of `matches` is not
  // a valid regular expression ("invalid matches argument").
  static std::unique_ptr<Plan> build(const Expr& expr, std::string_view source,
                                     const std::vector<std::string>& globals, std::string* error);

  // Evaluates with c.globals bound; sets up the locals in c's arena.
  [[nodiscard]] Value evaluate(EvalContext& c) const;

  // The arena literals live in (conformance tests build their inputs in it).
  Arena& constants() { return constants_; }

 private:
  friend class Planner;
  Node root_;
  Arena constants_;
  std::vector<std::unique_ptr<re2::RE2>> regexes_;
  std::vector<const Node*> bindInits_;  // by local slot; null for macro variables
  int32_t numLocals_ = 0;
};

}  // namespace ksched::cel
