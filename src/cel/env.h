// Compiling and evaluating in an environment other than the device selector's: what cel.h's
// compile() is built on, and what the conformance tests use (cel-spec declares its own
// variables and sometimes evaluates without the checker).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "cel/checker.h"
#include "cel/program.h"

namespace ksched::cel {

struct CompileOptions {
  const CheckEnv* env = nullptr;  // variables (their order is the globals' slot order)
  bool check = true;              // false: cel-spec's disable_check, evaluation is dynamic
  size_t maxLength = 0;           // 0: no limit
};

struct Compiled {
  std::unique_ptr<Plan> plan;  // null on error
  TypePtr type;                // the checked type (dyn when not checked)
  std::string error;           // "ERROR: <input>:1:3: ..." without the "compilation failed" prefix
};

// Parses, checks (unless disabled) and plans. Never throws.
[[nodiscard]] Compiled compileExpression(std::string_view text, const CompileOptions& options);

// Evaluates with the globals bound (by slot) and no device. `arena` receives what the
// evaluation creates and must outlive the returned value.
[[nodiscard]] Value evaluatePlan(const Plan& plan, const Value* globals, Arena& arena,
                                 int64_t costLimit, int64_t* cost);

}  // namespace ksched::cel
