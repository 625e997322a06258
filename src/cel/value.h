// Runtime values of the CEL evaluator, and the arena they live in.
//
// A Value is a small trivially copyable tagged union. What it points to (string bytes, list
// items, map entries, parsed versions, quantities) lives in one of three places, each outliving
// every Value that refers to it:
//   - a Program's constant arena (literals, precomputed at compile time), immutable afterwards;
//   - the device being evaluated (attribute strings, capacity quantities), borrowed for one call;
//   - the evaluation's scratch arena, which is reset when the evaluation ends.
// Nothing in an arena has a destructor: only trivially destructible objects are placed there.
//
// The device's maps are not copied into CEL maps: `device.attributes`, one of its domains, and
// the same for capacity are views (kAttrDomains, kAttrDomain, kCapDomains, kCapDomain) that look
// up the device's own std::map when indexed, as upstream's map-with-default does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <ksched/api/quantity.h>

namespace ksched::cel {

// A bump allocator. allocate() never fails (it throws std::bad_alloc like operator new);
// reset() drops every object and keeps the first block for reuse.
class Arena {
 public:
  Arena() = default;
  // Starts with a caller-provided buffer (e.g. on the stack); it is never freed.
  Arena(void* buffer, size_t size);
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  void* allocate(size_t size, size_t align);
  template <class T>
  T* allocArray(size_t n) {
    static_assert(std::is_trivially_destructible_v<T>);
    if (n == 0) return nullptr;
    return static_cast<T*>(allocate(sizeof(T) * n, alignof(T)));
  }
  template <class T, class... Args>
  T* make(Args&&... args) {
    static_assert(std::is_trivially_destructible_v<T>);
    return new (allocate(sizeof(T), alignof(T))) T(std::forward<Args>(args)...);
  }
  std::string_view copy(std::string_view s);
  void reset();

 private:
  char* cur_ = nullptr;
  char* end_ = nullptr;
  char* initial_ = nullptr;
  size_t initialSize_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
};

// A parsed semantic version (semver 2.0.0 as github.com/blang/semver/v4 parses it). The
// pre-release and build parts point into the parsed text.
struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::string_view pre;    // without the '-'; empty: none
  std::string_view build;  // without the '+'
};

// blang/semver Parse. On failure returns false and sets `error` to its message.
bool parseSemver(std::string_view text, Semver* out, std::string* error);
// parseSemver's verdict alone, in one pass without building anything.
bool isValidSemver(std::string_view text);
// Parse after normalizing (leading "v" dropped, missing minor/patch added, leading zeros
// removed), as the Kubernetes semver library's normalize option. The normalized text is
// copied into `arena` when it differs from the input.
bool parseSemverNormalized(std::string_view text, Arena& arena, Semver* out, std::string* error);
// -1, 0, 1 (precedence; build metadata ignored).
int compareSemver(const Semver& a, const Semver& b);

enum class Kind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kSemver,
  kQuantity,
  kDevice,       // the `device` variable
  kAttrDomains,  // device.attributes
  kAttrDomain,   // device.attributes[domain]; str holds the domain
  kCapDomains,   // device.capacity
  kCapDomain,    // device.capacity[domain]
  kError,        // str holds the message
};

struct Value;

struct ListData {
  const Value* items = nullptr;
  size_t size = 0;
};

// A map literal or computed map: parallel arrays, keys unique, insertion order kept.
struct MapData {
  const Value* keys = nullptr;
  const Value* values = nullptr;
  size_t size = 0;
};

// The bytes of a string, bytes, error or domain value.
struct StrRef {
  const char* data;
  size_t size;
};

struct Value {
  Kind kind = Kind::kNull;
  union {
    bool b;
    int64_t i;
    uint64_t u;
    double d;
    StrRef s;
    const ListData* list;
    const MapData* map;
    const Semver* semver;
    const api::Quantity* quantity;
  };

  Value() : i(0) {}

  static Value null() { return Value(); }
  static Value boolean(bool v) {
    Value r;
    r.kind = Kind::kBool;
    r.b = v;
    return r;
  }
  static Value integer(int64_t v) {
    Value r;
    r.kind = Kind::kInt;
    r.i = v;
    return r;
  }
  static Value uinteger(uint64_t v) {
    Value r;
    r.kind = Kind::kUint;
    r.u = v;
    return r;
  }
  static Value dbl(double v) {
    Value r;
    r.kind = Kind::kDouble;
    r.d = v;
    return r;
  }
  static Value str(std::string_view v, Kind k = Kind::kString) {
    Value r;
    r.kind = k;
    r.s.data = v.data();
    r.s.size = v.size();
    return r;
  }
  static Value bytes(std::string_view v) { return str(v, Kind::kBytes); }
  // `message` must outlive the value (a literal, or copied into an arena).
  static Value error(std::string_view message) { return str(message, Kind::kError); }
  static Value ofList(const ListData* l) {
    Value r;
    r.kind = Kind::kList;
    r.list = l;
    return r;
  }
  static Value ofMap(const MapData* m) {
    Value r;
    r.kind = Kind::kMap;
    r.map = m;
    return r;
  }
  static Value ofSemver(const Semver* v) {
    Value r;
    r.kind = Kind::kSemver;
    r.semver = v;
    return r;
  }
  static Value ofQuantity(const api::Quantity* q) {
    Value r;
    r.kind = Kind::kQuantity;
    r.quantity = q;
    return r;
  }
  static Value view(Kind k, std::string_view domain = {}) { return str(domain, k); }

  [[nodiscard]] std::string_view sv() const { return {s.data, s.size}; }
  [[nodiscard]] bool isError() const { return kind == Kind::kError; }
  [[nodiscard]] bool isMapLike() const {
    return kind == Kind::kMap || kind == Kind::kAttrDomains || kind == Kind::kAttrDomain ||
           kind == Kind::kCapDomains || kind == Kind::kCapDomain || kind == Kind::kDevice;
  }
};
static_assert(std::is_trivially_copyable_v<Value>);
static_assert(std::is_trivially_destructible_v<Value>);

// The CEL type name of a value, as errors print it: "int", "string", "list", "map",
// "kubernetes.Semver", ...
std::string_view typeName(const Value& v);
// The name cel-go's errors give the Go type holding a value ("types.Int", "cel.Semver"), used in
// "got '...', expected iterable type".
std::string_view goTypeName(const Value& v);

// Number of Unicode code points (invalid bytes count as one each, as Go's RuneCount).
size_t codePoints(std::string_view s);
bool validUtf8(std::string_view s);
// `s` with every byte that is not part of valid UTF-8 replaced by U+FFFD, for error texts.
std::string toValidUtf8(std::string_view s);

// Go's %g formatting of a double (the text of string(double)).
std::string formatDouble(double d);

// Go's strconv %v of a map key / index for "no such key: %v": strings raw, numbers decimal.
std::string formatKey(const Value& v);

}  // namespace ksched::cel
