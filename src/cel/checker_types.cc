// The types of the checker: their constructors, their names in messages, and the relations
// the checker unifies them by (cel-go checker/types.go).
#include <string>
#include <utility>

#include "cel/checker_internal.h"

namespace ksched::cel {

namespace types {
namespace {
TypePtr make(TypeKind k) {
  auto t = std::make_shared<Type>();
  t->kind = k;
  return t;
}
}  // namespace
TypePtr dyn() {
  static const TypePtr t = make(TypeKind::kDyn);
  return t;
}
TypePtr any() {
  static const TypePtr t = make(TypeKind::kAny);
  return t;
}
TypePtr error() {
  static const TypePtr t = make(TypeKind::kError);
  return t;
}
TypePtr null() {
  static const TypePtr t = make(TypeKind::kNull);
  return t;
}
TypePtr boolean() {
  static const TypePtr t = make(TypeKind::kBool);
  return t;
}
TypePtr integer() {
  static const TypePtr t = make(TypeKind::kInt);
  return t;
}
TypePtr uinteger() {
  static const TypePtr t = make(TypeKind::kUint);
  return t;
}
TypePtr dbl() {
  static const TypePtr t = make(TypeKind::kDouble);
  return t;
}
TypePtr string() {
  static const TypePtr t = make(TypeKind::kString);
  return t;
}
TypePtr bytes() {
  static const TypePtr t = make(TypeKind::kBytes);
  return t;
}
TypePtr list(TypePtr elem) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kList;
  t->params = {std::move(elem)};
  return t;
}
TypePtr map(TypePtr key, TypePtr value) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kMap;
  t->params = {std::move(key), std::move(value)};
  return t;
}
TypePtr param(std::string name) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kTypeParam;
  t->name = std::move(name);
  return t;
}
TypePtr object(std::string name) {
  auto t = std::make_shared<Type>();
  t->kind = TypeKind::kStruct;
  t->name = std::move(name);
  return t;
}
}  // namespace types

namespace {

std::string_view declaredName(const Type& t) {
  switch (t.kind) {
    case TypeKind::kDyn:
      return "dyn";
    case TypeKind::kAny:
      return "google.protobuf.Any";
    case TypeKind::kError:
      return "*error*";
    case TypeKind::kNull:
      return "null_type";
    case TypeKind::kBool:
      return "bool";
    case TypeKind::kInt:
      return "int";
    case TypeKind::kUint:
      return "uint";
    case TypeKind::kDouble:
      return "double";
    case TypeKind::kString:
      return "string";
    case TypeKind::kBytes:
      return "bytes";
    case TypeKind::kList:
      return "list";
    case TypeKind::kMap:
      return "map";
    case TypeKind::kTypeParam:
    case TypeKind::kStruct:
      return t.name;
  }
  return "";
}

}  // namespace

std::string typeString(const Type& t) {
  std::string out(declaredName(t));
  if (t.params.empty()) return out;
  out += '(';
  for (size_t i = 0; i < t.params.size(); ++i) {
    if (i > 0) out += ", ";
    out += typeString(*t.params[i]);
  }
  return out + ')';
}

std::string formatType(const Type& t) {
  switch (t.kind) {
    case TypeKind::kAny:
      return "any";
    case TypeKind::kError:
      return "!error!";
    case TypeKind::kNull:
      return "null";
    case TypeKind::kTypeParam:
      return t.name;
    default:
      break;
  }
  std::string out(declaredName(t));
  if (t.params.empty()) return out;
  out += '(';
  for (size_t i = 0; i < t.params.size(); ++i) {
    if (i > 0) out += ", ";
    out += formatType(*t.params[i]);
  }
  return out + ')';
}

namespace checking {

namespace {

const TypePtr* findSub(const Mapping& m, const Type& t) {
  if (t.kind != TypeKind::kTypeParam) return nullptr;
  auto it = m.find(t.name);
  return it == m.end() ? nullptr : &it->second;
}

bool isEqualOrLessSpecific(const Type& t1, const Type& t2) {
  if (isDyn(t1) || t1.kind == TypeKind::kTypeParam) return true;
  if (isDyn(t2) || t2.kind == TypeKind::kTypeParam) return false;
  if (t1.kind != t2.kind) return false;
  switch (t1.kind) {
    case TypeKind::kList:
      return isEqualOrLessSpecific(*t1.params[0], *t2.params[0]);
    case TypeKind::kMap:
      return isEqualOrLessSpecific(*t1.params[0], *t2.params[0]) &&
             isEqualOrLessSpecific(*t1.params[1], *t2.params[1]);
    default:
      return isExact(t1, t2);
  }
}

bool notReferencedIn(const Mapping& m, const Type& t, const Type& within) {
  if (isExact(t, within)) return false;
  if (within.kind == TypeKind::kTypeParam) {
    const TypePtr* sub = findSub(m, within);
    return sub == nullptr || notReferencedIn(m, t, **sub);
  }
  for (const TypePtr& p : within.params) {
    if (!notReferencedIn(m, t, *p)) return false;
  }
  return true;
}

// (valid, hasSub)
std::pair<bool, bool> isValidTypeSubstitution(Mapping& m, const TypePtr& t1, const TypePtr& t2) {
  if (t1->kind == t2->kind && isExact(*t1, *t2)) return {true, true};
  if (const TypePtr* sub = findSub(m, *t2)) {
    const TypePtr t2Sub = *sub;
    if (t1->kind == t2Sub->kind && isExact(*t1, *t2Sub)) return {true, true};
    if (internalIsAssignable(m, t1, t2Sub)) {
      TypePtr t2New = mostGeneral(t1, t2Sub);
      if (notReferencedIn(m, *t2, *t2New)) m[t2->name] = t2New;
      return {true, true};
    }
    return {false, true};
  }
  if (notReferencedIn(m, *t2, *t1)) {
    m[t2->name] = t1;
    return {true, false};
  }
  return {false, false};
}

bool isLegacyNullable(const Type& t) {
  return t.kind == TypeKind::kStruct || t.kind == TypeKind::kAny;
}

}  // namespace

bool isDyn(const Type& t) { return t.kind == TypeKind::kDyn || t.kind == TypeKind::kAny; }
bool isDynOrError(const Type& t) { return isDyn(t) || t.kind == TypeKind::kError; }

bool isExact(const Type& a, const Type& b) {
  if (a.kind != b.kind || a.name != b.name || a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!isExact(*a.params[i], *b.params[i])) return false;
  }
  return true;
}

TypePtr mostGeneral(const TypePtr& t1, const TypePtr& t2) {
  return isEqualOrLessSpecific(*t1, *t2) ? t1 : t2;
}

bool internalIsAssignable(Mapping& m, const TypePtr& t1, const TypePtr& t2) {
  if (t2->kind == TypeKind::kTypeParam) {
    auto [valid, hasSub] = isValidTypeSubstitution(m, t1, t2);
    if (valid) return true;
    if (hasSub) return false;
  }
  if (t1->kind == TypeKind::kTypeParam) return isValidTypeSubstitution(m, t2, t1).first;
  if (isDynOrError(*t1) || isDynOrError(*t2)) return true;
  if (t1->kind == TypeKind::kNull) return isLegacyNullable(*t2) || t2->kind == TypeKind::kNull;
  if (t2->kind == TypeKind::kNull) return isLegacyNullable(*t1);
  switch (t1->kind) {
    case TypeKind::kList:
    case TypeKind::kMap:
      if (t1->kind != t2->kind || t1->params.size() != t2->params.size()) return false;
      for (size_t i = 0; i < t1->params.size(); ++i) {
        if (!internalIsAssignable(m, t1->params[i], t2->params[i])) return false;
      }
      return true;
    default:
      return isExact(*t1, *t2);
  }
}

TypePtr substitute(const Mapping& m, const TypePtr& t, bool typeParamToDyn) {
  if (const TypePtr* sub = findSub(m, *t)) return substitute(m, *sub, typeParamToDyn);
  if (typeParamToDyn && t->kind == TypeKind::kTypeParam) return types::dyn();
  if (t->kind == TypeKind::kList) return types::list(substitute(m, t->params[0], typeParamToDyn));
  if (t->kind == TypeKind::kMap) {
    return types::map(substitute(m, t->params[0], typeParamToDyn),
                      substitute(m, t->params[1], typeParamToDyn));
  }
  return t;
}

}  // namespace checking

}  // namespace ksched::cel
