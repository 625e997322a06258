// Static type checking of a parsed expression, as cel-go's checker: each node gets a type
// (type parameters unified by substitution), function calls must match one of the declared
// overloads, and the errors use cel-go's texts ("found no matching overload for '_+_' applied
// to '(int, string)'", "undeclared reference to 'x' (in container '')", "undefined field
// 'y'"). The overloads declared are those of the functions the evaluator implements
// (functions.h); a function upstream's Kubernetes environment has and this one does not is
// "unsupported: function 'name'".
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cel/ast.h"

namespace ksched::cel {

enum class TypeKind : uint8_t {
  kDyn,
  kAny,  // google.protobuf.Any: the unknown type of a device attribute; checks like dyn
  kError,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kTypeParam,
  kStruct,  // kubernetes.Semver, kubernetes.Quantity, kubernetes.DRADevice
};

struct Type;
using TypePtr = std::shared_ptr<const Type>;

struct Type {
  TypeKind kind = TypeKind::kDyn;
  std::string name;             // type parameter or struct name
  std::vector<TypePtr> params;  // list: element; map: key, value
};

namespace types {
TypePtr dyn();
TypePtr any();
TypePtr error();
TypePtr null();
TypePtr boolean();
TypePtr integer();
TypePtr uinteger();
TypePtr dbl();
TypePtr string();
TypePtr bytes();
TypePtr list(TypePtr elem);
TypePtr map(TypePtr key, TypePtr value);
TypePtr param(std::string name);
TypePtr object(std::string name);
inline constexpr std::string_view kSemver = "kubernetes.Semver";
inline constexpr std::string_view kQuantity = "kubernetes.Quantity";
}  // namespace types

// cel-go's Type.String(), as in "must evaluate to bool or the unknown type, not list(int)".
std::string typeString(const Type& t);
// cel-go's FormatCELType, as in checker errors ("any", "null", "list(int)").
std::string formatType(const Type& t);

struct CheckEnv {
  std::vector<std::pair<std::string, TypePtr>> variables;
  // Struct type name -> field name -> type.
  std::map<std::string, std::map<std::string, TypePtr>, std::less<>> structFields;
  // cel.HomogeneousAggregateLiterals(): list and map literals of mixed types are errors.
  bool homogeneousLiterals = false;
  // cel.CrossTypeNumericComparisons(true): `1 < 2.5`, `1u < 2`.
  bool crossTypeNumericComparisons = true;
  // DRA's `includes()` member function (DRAListTypeAttributes); undeclared without it.
  bool draIncludes = false;
};

struct CheckResult {
  TypePtr type;       // the expression's type; null on error
  std::string error;  // every error, cel-go's display format, one after the other
};

[[nodiscard]] CheckResult check(const Expr& expr, std::string_view source, const CheckEnv& env);

}  // namespace ksched::cel
