// What the checker's parts share (checker.cc walks the expression): the type relations of
// cel-go's checker/types.go (checker_types.cc) and the declared overloads (checker_overloads.cc).
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cel/checker.h"

namespace ksched::cel::checking {

// ---- Type relations (checker_types.cc) ------------------------------------------------------

// Type parameter name -> the type substituted for it.
using Mapping = std::map<std::string, TypePtr>;

bool isDyn(const Type& t);
bool isDynOrError(const Type& t);
bool isExact(const Type& a, const Type& b);
// The less specific of two types that are assignable to each other.
TypePtr mostGeneral(const TypePtr& t1, const TypePtr& t2);
// Whether t1 is assignable to t2; records in `m` the substitutions that makes it so.
bool internalIsAssignable(Mapping& m, const TypePtr& t1, const TypePtr& t2);
// `t` with the substitutions of `m` applied; unbound type parameters become dyn when asked.
TypePtr substitute(const Mapping& m, const TypePtr& t, bool typeParamToDyn);

// ---- Declarations (checker_overloads.cc) ------------------------------------------------------

struct Overload {
  bool member = false;
  std::vector<TypePtr> params;  // the target first for a member overload
  TypePtr result;
  bool crossNumeric = false;  // only with crossTypeNumericComparisons
};

using FunctionTable = std::map<std::string, std::vector<Overload>, std::less<>>;

// Function name -> its overloads, those of the functions the evaluator implements.
const FunctionTable& functions();
// Functions and type names upstream's Kubernetes CEL environment declares that this evaluator
// does not implement.
bool unsupportedFunction(std::string_view name);
// A type name used as a value (`int`, `google.protobuf.Duration`).
bool isTypeName(std::string_view name);

}  // namespace ksched::cel::checking
