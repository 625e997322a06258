#include "cel/runtime.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

namespace ksched::cel {

namespace {

// "domain/id" compared with a std::string without building it.
struct QualifiedKey {
  std::string_view domain, id;
};

int compareBytes(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  if (n > 0) {
    if (int c = std::memcmp(a.data(), b.data(), n)) return c;
  }
  return a.size() == b.size() ? 0 : (a.size() < b.size() ? -1 : 1);
}

int compareQualified(std::string_view s, const QualifiedKey& k) {
  const size_t d = k.domain.size();
  if (s.size() <= d) {
    // s is shorter than "domain/": it sorts first unless it differs before ending.
    const int c = compareBytes(s, k.domain.substr(0, s.size()));
    return c != 0 ? c : -1;
  }
  if (int c = compareBytes(s.substr(0, d), k.domain)) return c;
  if (s[d] != '/') return static_cast<unsigned char>(s[d]) < '/' ? -1 : 1;
  return compareBytes(s.substr(d + 1), k.id);
}

[[maybe_unused]] bool operator<(const std::string& s, const QualifiedKey& k) {
  return compareQualified(s, k) < 0;
}
[[maybe_unused]] bool operator<(const QualifiedKey& k, const std::string& s) {
  return compareQualified(s, k) > 0;
}

template <class Map>
const typename Map::mapped_type* findQualified(const Map& m, std::string_view driver,
                                               std::string_view domain, std::string_view id) {
  // Drivers mostly name their own attributes without a domain: look that up first. (A device
  // with both "id" and "<driver>/id" has one of them in upstream's map, whichever its map
  // iteration put there last.)
  if (domain == driver && id.find('/') == std::string_view::npos) {
    auto plain = m.find(id);
    if (plain != m.end()) return &plain->second;
  }
  auto it = m.find(QualifiedKey{domain, id});
  return it != m.end() ? &it->second : nullptr;
}

// Splits a qualified name; names without a domain belong to the driver.
std::pair<std::string_view, std::string_view> splitName(std::string_view name,
                                                        std::string_view driver) {
  const size_t sep = name.find('/');
  if (sep == std::string_view::npos) return {driver, name};
  return {name.substr(0, sep), name.substr(sep + 1)};
}

template <class Map>
bool hasDomain(const Map& m, std::string_view driver, std::string_view domain) {
  for (const auto& [name, v] : m) {
    if (splitName(name, driver).first == domain) return true;
  }
  return false;
}

// The distinct domains, in the arena (at most one per entry).
template <class Map>
ListData domainsOf(const Map& m, std::string_view driver, Arena& arena) {
  Value* items = arena.allocArray<Value>(m.size());
  size_t n = 0;
  for (const auto& [name, v] : m) {
    const std::string_view d = splitName(name, driver).first;
    bool seen = false;
    for (size_t i = 0; i < n && !seen; ++i) seen = items[i].sv() == d;
    if (!seen) items[n++] = Value::str(d);
  }
  return ListData{items, n};
}

template <class Map>
ListData idsOf(const Map& m, std::string_view driver, std::string_view domain, Arena& arena) {
  Value* items = arena.allocArray<Value>(m.size());
  size_t n = 0;
  for (const auto& [name, v] : m) {
    auto [d, id] = splitName(name, driver);
    if (d != domain) continue;
    // An unqualified name shadowed by the same qualified one is one key.
    if (name.find('/') == std::string::npos && m.find(QualifiedKey{domain, id}) != m.end()) {
      continue;
    }
    items[n++] = Value::str(id);
  }
  return ListData{items, n};
}

bool isNumber(const Value& v) {
  return v.kind == Kind::kInt || v.kind == Kind::kUint || v.kind == Kind::kDouble;
}

// Normalizes a numeric map key for lookup: cel-go finds 1, 1u and 1.0 as the same key.
bool sameKey(const Value& k, const Value& key) {
  if (isNumber(k) && isNumber(key)) return compareNumbers(k, key) == 0;
  if (k.kind != key.kind) return false;
  switch (k.kind) {
    case Kind::kBool:
      return k.b == key.b;
    case Kind::kString:
      return k.sv() == key.sv();
    default:
      return false;
  }
}

}  // namespace

// cel-go's compareIntDouble, compareUintDouble, compareIntUint: an int or uint against a
// double compares as doubles once the double is inside the integer's range.
int compareNumbers(const Value& a, const Value& b) {
  auto cmp = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  auto cmpDouble = [&](double x, double y) {
    return std::isnan(x) || std::isnan(y) ? 2 : cmp(x, y);
  };
  if (a.kind == b.kind) {
    if (a.kind == Kind::kInt) return cmp(a.i, b.i);
    if (a.kind == Kind::kUint) return cmp(a.u, b.u);
    return cmpDouble(a.d, b.d);
  }
  if (a.kind == Kind::kInt && b.kind == Kind::kUint) {
    if (a.i < 0 || b.u > uint64_t(INT64_MAX)) return -1;
    return cmp(a.i, static_cast<int64_t>(b.u));
  }
  if (a.kind == Kind::kInt && b.kind == Kind::kDouble) {
    if (std::isnan(b.d)) return 2;
    if (b.d < static_cast<double>(INT64_MIN)) return 1;
    if (b.d > static_cast<double>(INT64_MAX)) return -1;
    return cmpDouble(static_cast<double>(a.i), b.d);
  }
  if (a.kind == Kind::kUint && b.kind == Kind::kDouble) {
    if (std::isnan(b.d)) return 2;
    if (b.d < 0) return 1;
    if (b.d > static_cast<double>(UINT64_MAX)) return -1;
    return cmpDouble(static_cast<double>(a.u), b.d);
  }
  const int r = compareNumbers(b, a);
  return r == 2 ? 2 : -r;
}

const api::DeviceAttribute* findAttribute(const DeviceView& d, std::string_view domain,
                                          std::string_view id) {
  return findQualified(*d.attributes, d.driver, domain, id);
}

const api::DeviceCapacity* findCapacity(const DeviceView& d, std::string_view domain,
                                        std::string_view id) {
  return findQualified(*d.capacity, d.driver, domain, id);
}

namespace {

Value versionValue(const api::DeviceAttribute::Version& version, EvalContext& c) {
  Semver* v = c.arena.make<Semver>();
  std::string err;
  if (!parseSemver(version.value, v, &err)) return c.error("parse semantic version: " + err);
  return Value::ofSemver(v);
}

// A list attribute as a CEL list of its element type; its strings stay the device's.
template <class T, class F>
Value listValue(const std::vector<T>& items, EvalContext& c, F&& one) {
  auto* l = c.arena.make<ListData>();
  Value* data = c.arena.allocArray<Value>(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    data[i] = one(items[i]);
    if (data[i].isError()) return data[i];
  }
  l->items = data;
  l->size = items.size();
  return Value::ofList(l);
}

}  // namespace

Value attributeValue(const api::DeviceAttribute& a, EvalContext& c) {
  using A = api::DeviceAttribute;
  return std::visit(
      [&](const auto& v) -> Value {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, int64_t>) {
          return Value::integer(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return Value::boolean(v);
        } else if constexpr (std::is_same_v<T, std::string>) {
          return Value::str(v);
        } else if constexpr (std::is_same_v<T, A::Version>) {
          return versionValue(v, c);
        } else if constexpr (std::is_same_v<T, A::Ints>) {
          return listValue(v, c, [](int64_t i) { return Value::integer(i); });
        } else if constexpr (std::is_same_v<T, A::Bools>) {
          return listValue(v, c, [](bool b) { return Value::boolean(b); });
        } else if constexpr (std::is_same_v<T, A::Strings>) {
          return listValue(v, c, [](const std::string& s) { return Value::str(s); });
        } else {
          return listValue(v, c, [&](const A::Version& s) { return versionValue(s, c); });
        }
      },
      a.value);
}

std::string checkAttributes(const DeviceView& d) {
  // Most versions are valid: one pass decides, the parse only says why one is not.
  auto invalid = [](const std::string& text, std::string* err) {
    if (isValidSemver(text)) return false;
    Semver v;
    return !parseSemver(text, &v, err);
  };
  for (const auto& [name, a] : *d.attributes) {
    std::string err;
    if (const auto* v = std::get_if<api::DeviceAttribute::Version>(&a.value)) {
      if (invalid(v->value, &err)) return "attribute " + name + ": parse semantic version: " + err;
    } else if (const auto* vs = std::get_if<api::DeviceAttribute::Versions>(&a.value)) {
      for (const auto& item : *vs) {
        if (invalid(item.value, &err))
          return "attribute " + name + ": parse semantic version: " + err;
      }
    }
  }
  return {};
}

bool mapFind(const Value& m, const Value& key, EvalContext& c, Value* out) {
  switch (m.kind) {
    case Kind::kMap:
      for (size_t i = 0; i < m.map->size; ++i) {
        if (sameKey(m.map->keys[i], key)) {
          *out = m.map->values[i];
          return true;
        }
      }
      return false;
    case Kind::kDevice: {
      if (key.kind != Kind::kString || c.device == nullptr) return false;
      const std::string_view f = key.sv();
      if (f == "driver") {
        *out = Value::str(c.device->driver);
      } else if (f == "attributes") {
        *out = Value::view(Kind::kAttrDomains);
      } else if (f == "capacity") {
        *out = Value::view(Kind::kCapDomains);
      } else if (f == "allowMultipleAllocations") {
        *out = Value::boolean(c.device->allowMultipleAllocations);
      } else {
        return false;
      }
      return true;
    }
    case Kind::kAttrDomains:
    case Kind::kCapDomains:
      // Upstream's map with a default: every domain is there, most of them empty.
      *out = Value::view(m.kind == Kind::kAttrDomains ? Kind::kAttrDomain : Kind::kCapDomain,
                         key.kind == Kind::kString ? key.sv() : std::string_view("\x01"));
      return true;
    case Kind::kAttrDomain: {
      if (key.kind != Kind::kString || c.device == nullptr) return false;
      const api::DeviceAttribute* a = findAttribute(*c.device, m.sv(), key.sv());
      if (a == nullptr) return false;
      *out = attributeValue(*a, c);
      return true;
    }
    case Kind::kCapDomain: {
      if (key.kind != Kind::kString || c.device == nullptr) return false;
      const api::DeviceCapacity* q = findCapacity(*c.device, m.sv(), key.sv());
      if (q == nullptr) return false;
      *out = Value::ofQuantity(&q->value);
      return true;
    }
    default:
      return false;
  }
}

bool mapContains(const Value& m, const Value& key, EvalContext& c) {
  if (c.device != nullptr && key.kind == Kind::kString) {
    if (m.kind == Kind::kAttrDomains)
      return hasDomain(*c.device->attributes, c.device->driver, key.sv());
    if (m.kind == Kind::kCapDomains)
      return hasDomain(*c.device->capacity, c.device->driver, key.sv());
  }
  if (m.kind == Kind::kAttrDomains || m.kind == Kind::kCapDomains) return false;
  Value ignored;
  return mapFind(m, key, c, &ignored);
}

ListData mapKeys(const Value& m, EvalContext& c) {
  switch (m.kind) {
    case Kind::kMap:
      return ListData{m.map->keys, m.map->size};
    case Kind::kDevice: {
      static const Value kFields[] = {Value::str("driver"), Value::str("attributes"),
                                      Value::str("capacity"),
                                      Value::str("allowMultipleAllocations")};
      return ListData{kFields, 4};
    }
    default:
      break;
  }
  if (c.device == nullptr) return {};
  const DeviceView& d = *c.device;
  switch (m.kind) {
    case Kind::kAttrDomains:
      return domainsOf(*d.attributes, d.driver, c.arena);
    case Kind::kCapDomains:
      return domainsOf(*d.capacity, d.driver, c.arena);
    case Kind::kAttrDomain:
      return idsOf(*d.attributes, d.driver, m.sv(), c.arena);
    case Kind::kCapDomain:
      return idsOf(*d.capacity, d.driver, m.sv(), c.arena);
    default:
      return {};
  }
}

size_t mapSize(const Value& m, EvalContext& c) {
  if (m.kind == Kind::kMap) return m.map->size;
  if (m.kind == Kind::kDevice) return 4;
  return mapKeys(m, c).size;
}

uint64_t actualSize(const Value& v, EvalContext& c) {
  switch (v.kind) {
    case Kind::kString:
      return codePoints(v.sv());
    case Kind::kBytes:
      return v.s.size;
    case Kind::kList:
      return v.list->size;
    default:
      if (v.isMapLike()) return mapSize(v, c);
      return 1;
  }
}

Value equals(const Value& a, const Value& b, EvalContext& c) {
  if (a.kind == Kind::kNull || b.kind == Kind::kNull) {
    return Value::boolean(a.kind == b.kind);
  }
  if (isNumber(a) && isNumber(b)) return Value::boolean(compareNumbers(a, b) == 0);
  switch (a.kind) {
    case Kind::kSemver:
      if (b.kind != Kind::kSemver) return Value::error(kNoSuchOverload);
      return Value::boolean(compareSemver(*a.semver, *b.semver) == 0);
    case Kind::kQuantity:
      if (b.kind != Kind::kQuantity) return Value::error(kNoSuchOverload);
      return Value::boolean(*a.quantity == *b.quantity);
    case Kind::kBool:
      return Value::boolean(b.kind == Kind::kBool && a.b == b.b);
    case Kind::kString:
    case Kind::kBytes:
      return Value::boolean(b.kind == a.kind && a.sv() == b.sv());
    case Kind::kList: {
      if (b.kind != Kind::kList || a.list->size != b.list->size) return Value::boolean(false);
      for (size_t i = 0; i < a.list->size; ++i) {
        Value e = equals(a.list->items[i], b.list->items[i], c);
        if (e.kind == Kind::kBool && !e.b) return e;
      }
      return Value::boolean(true);
    }
    default:
      break;
  }
  if (a.isMapLike()) {
    if (!b.isMapLike()) return Value::boolean(false);
    if (a.kind == Kind::kDevice || b.kind == Kind::kDevice) {
      return Value::boolean(a.kind == b.kind);
    }
    if (mapSize(a, c) != mapSize(b, c)) return Value::boolean(false);
    const ListData keys = mapKeys(a, c);
    for (size_t i = 0; i < keys.size; ++i) {
      Value va, vb;
      if (!mapFind(b, keys.items[i], c, &vb) || !mapContains(b, keys.items[i], c)) {
        return Value::boolean(false);
      }
      mapFind(a, keys.items[i], c, &va);
      Value e = equals(va, vb, c);
      if (e.kind == Kind::kBool && !e.b) return e;
    }
    return Value::boolean(true);
  }
  return Value::boolean(false);
}

}  // namespace ksched::cel
