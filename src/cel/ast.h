// The parsed form of a CEL expression (cel-spec langdef.md), produced by parser.h and read by
// the checker and the planner. Macros keep their identity (kComprehension with a MacroKind)
// rather than being spelled out as generic folds: the evaluator runs each one directly, with the
// cost and error behaviour of the fold cel-go expands it into.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ksched::cel {

enum class ExprKind : uint8_t {
  kLiteral,
  kIdent,
  kSelect,  // operand.name; testOnly for has(operand.name)
  kCall,    // name(args) or operand.name(args)
  kList,    // [args...]
  kMap,     // {args[0]: args[1], args[2]: args[3], ...}
  kComprehension,
};

enum class LiteralKind : uint8_t { kNull, kBool, kInt, kUint, kDouble, kString, kBytes };

// all(x, p), exists(x, p), exists_one(x, p), map(x, f), map(x, p, f), filter(x, p), and
// cel.bind(v, init, e).
enum class MacroKind : uint8_t { kAll, kExists, kExistsOne, kMap, kMapFilter, kFilter, kBind };

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::kLiteral;
  uint32_t pos = 0;  // byte offset of the token errors point at

  // kLiteral
  LiteralKind literal = LiteralKind::kNull;
  bool boolValue = false;
  int64_t intValue = 0;
  uint64_t uintValue = 0;
  double doubleValue = 0;
  std::string text;  // string/bytes literal contents

  // kIdent: the name; kSelect: the field; kCall: the function; kComprehension: the variable
  // (iteration variable, or cel.bind's name).
  std::string name;
  bool testOnly = false;
  // kSelect: the operand; kCall: the target of a member call (null for a global call);
  // kComprehension: the range (null for cel.bind).
  ExprPtr operand;
  // kCall: arguments; kList: elements; kMap: keys and values alternating;
  // kComprehension: the macro's expressions after the variable (p; f; p, f; or init, e).
  std::vector<ExprPtr> args;
  MacroKind macro = MacroKind::kAll;
};

}  // namespace ksched::cel
