// The path-tracking JSON reading the resource.k8s.io decoders (resource.cc) are written in:
// each reader names where it is in the object, so a decoding error says which field, item or
// map key failed, in upstream's notation. Internal to the api layer: only resource.cc includes
// it.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/quantity.h>

namespace ksched::api::resource_reader {

using nlohmann::json;

// Where decoding failed below the point that catches it, and why. Thrown only inside the decoders;
// their entry points turn it into a DecodeError naming the whole path, in upstream's notation
// ("spec.devices[1].attributes[dra.example.com/model]: ..."). `reasonHasPath`: the reason comes
// from a decoder of another header and starts with its own relative path.
struct Failure {
  std::string path;
  std::string reason;
  bool reasonHasPath = false;
};

inline std::string joinPath(std::string_view outer, const std::string& inner) {
  if (inner.empty()) return std::string(outer);
  if (inner.front() == '[') return std::string(outer) + inner;
  return std::string(outer) + "." + inner;
}

inline std::string message(const Failure& f) {
  if (f.path.empty()) return f.reason;
  return f.path + (f.reasonHasPath ? "." : ": ") + f.reason;
}

[[noreturn]] inline void fail(std::string reason) { throw Failure{"", std::move(reason)}; }

// Runs f() one path segment further down: a field, or (built only on failure) "[i]" or "[key]".
template <typename F>
decltype(auto) within(std::string_view field, F&& f) {
  try {
    return f();
  } catch (Failure& e) {
    e.path = joinPath(field, e.path);
    throw;
  }
}

template <typename F>
decltype(auto) withinItem(size_t index, F&& f) {
  try {
    return f();
  } catch (Failure& e) {
    e.path = joinPath("[" + std::to_string(index) + "]", e.path);
    throw;
  }
}

template <typename F>
decltype(auto) withinKey(const std::string& key, F&& f) {
  try {
    return f();
  } catch (Failure& e) {
    e.path = joinPath("[" + key + "]", e.path);
    throw;
  }
}

inline void expectObject(const json& j) {
  if (!j.is_object()) fail(std::string("expected an object, got ") + j.type_name());
}

// j[key] when present and not null (j is an object).
inline const json* member(const json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

inline std::string asString(const json& v) {
  if (!v.is_string()) fail(std::string("expected a string, got ") + v.type_name());
  return v.get<std::string>();
}

inline bool asBool(const json& v) {
  if (!v.is_boolean()) fail(std::string("expected a boolean, got ") + v.type_name());
  return v.get<bool>();
}

inline int64_t asInt(const json& v) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (!std::in_range<int64_t>(u)) fail("expected an integer in range, got " + v.dump());
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  fail("expected an integer, got " + (v.is_number() ? v.dump() : std::string(v.type_name())));
}

inline Quantity asQuantity(const json& v) {
  Quantity q;
  try {
    from_json(v, q);
  } catch (const DecodeError& e) {
    fail(e.what());
  }
  return q;
}

// A kind of another header (ObjectMeta, NodeSelector) through its own from_json.
template <typename T>
T asNested(const json& v) {
  expectObject(v);
  T out{};
  try {
    v.get_to(out);
  } catch (const DecodeError& e) {
    throw Failure{"", e.what(), true};
  } catch (const json::exception& e) {
    fail(e.what());
  }
  return out;
}

template <typename T, typename F>
inline void read(const json& o, std::string_view key, T& out, F&& convert) {
  if (const json* v = member(o, key)) out = within(key, [&] { return convert(*v); });
}

inline void read(const json& o, std::string_view key, std::string& out) {
  read(o, key, out, asString);
}
inline void read(const json& o, std::string_view key, std::optional<std::string>& out) {
  read(o, key, out, asString);
}
inline void read(const json& o, std::string_view key, std::optional<bool>& out) {
  read(o, key, out, asBool);
}
inline void read(const json& o, std::string_view key, int64_t& out) { read(o, key, out, asInt); }
inline void read(const json& o, std::string_view key, std::optional<int64_t>& out) {
  read(o, key, out, asInt);
}
inline void read(const json& o, std::string_view key, std::optional<Quantity>& out) {
  read(o, key, out, asQuantity);
}

// A list: each element through `one`, its path "key[i]".
template <typename T, typename F>
inline void readList(const json& o, std::string_view key, std::vector<T>& out, F&& one) {
  const json* v = member(o, key);
  if (v == nullptr) return;
  within(key, [&] {
    if (!v->is_array()) fail(std::string("expected an array, got ") + v->type_name());
    out.clear();
    out.reserve(v->size());
    for (size_t i = 0; i < v->size(); ++i) {
      out.push_back(withinItem(i, [&] { return one((*v)[i]); }));
    }
  });
}

inline void readList(const json& o, std::string_view key, std::vector<std::string>& out) {
  readList(o, key, out, asString);
}

// A map: each value through `one`, its path "[name]".
template <typename Map, typename F>
Map asMap(const json& v, F&& one) {
  expectObject(v);
  Map out;
  for (auto it = v.begin(); it != v.end(); ++it) {
    out.insert_or_assign(it.key(), withinKey(it.key(), [&] { return one(it.value()); }));
  }
  return out;
}

template <typename Map, typename F>
inline void readMap(const json& o, std::string_view key, Map& out, F&& one) {
  read(o, key, out, [&](const json& v) { return asMap<Map>(v, one); });
}

}  // namespace ksched::api::resource_reader
