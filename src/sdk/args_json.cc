#include <algorithm>
#include <limits>

#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins::helper {

std::string childPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string indexPath(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

// ---- Decoder ----

void Decoder::error(const std::string& path, const std::string& what) {
  std::string message = path.empty() ? what : path + ": " + what;
  if (errors_ == nullptr) throw PluginArgsError(message);
  errors_->push_back(std::move(message));
}

void Decoder::typeError(const std::string& path, const char* expected, const json& got) {
  error(path, std::string("expected ") + expected + ", got " + got.type_name());
}

bool Decoder::object(const json& j, const std::string& path,
                     std::initializer_list<std::string_view> known) {
  if (!j.is_object()) {
    typeError(path, "an object", j);
    return false;
  }
  for (const auto& [key, _] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      error(childPath(path, key), "unknown field");
    }
  }
  return true;
}

const nlohmann::json* Decoder::member(const json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<int64_t> Decoder::integer(const json& j, std::string_view key,
                                        const std::string& path, int64_t lo, int64_t hi) {
  const json* v = member(j, key);
  if (v == nullptr) return std::nullopt;
  const std::string p = childPath(path, key);
  if (v->is_number_unsigned()) {
    if (v->get<uint64_t>() > static_cast<uint64_t>(hi)) {
      error(p, "integer " + v->dump() + " out of range");
      return std::nullopt;
    }
    return static_cast<int64_t>(v->get<uint64_t>());
  }
  if (!v->is_number_integer()) {
    typeError(p, "an integer", *v);
    return std::nullopt;
  }
  const auto i = v->get<int64_t>();
  if (i < lo || i > hi) {
    error(p, "integer " + v->dump() + " out of range");
    return std::nullopt;
  }
  return i;
}

std::optional<int32_t> Decoder::int32(const json& j, std::string_view key,
                                      const std::string& path) {
  auto v = integer(j, key, path, std::numeric_limits<int32_t>::min(),
                   std::numeric_limits<int32_t>::max());
  if (!v) return std::nullopt;
  return static_cast<int32_t>(*v);
}

std::optional<int64_t> Decoder::int64(const json& j, std::string_view key,
                                      const std::string& path) {
  return integer(j, key, path, std::numeric_limits<int64_t>::min(),
                 std::numeric_limits<int64_t>::max());
}

template <typename T>
std::optional<T> Decoder::scalar(const json& j, std::string_view key, const std::string& path,
                                 bool (json::*is)() const noexcept, const char* expected) {
  const json* v = member(j, key);
  if (v == nullptr) return std::nullopt;
  if (!(v->*is)()) {
    typeError(childPath(path, key), expected, *v);
    return std::nullopt;
  }
  return v->get<T>();
}

std::optional<double> Decoder::number(const json& j, std::string_view key,
                                      const std::string& path) {
  return scalar<double>(j, key, path, &json::is_number, "a number");
}

std::optional<bool> Decoder::boolean(const json& j, std::string_view key, const std::string& path) {
  return scalar<bool>(j, key, path, &json::is_boolean, "a boolean");
}

std::optional<std::string> Decoder::string(const json& j, std::string_view key,
                                           const std::string& path) {
  return scalar<std::string>(j, key, path, &json::is_string, "a string");
}

std::optional<std::vector<std::string>> Decoder::stringList(const json& j, std::string_view key,
                                                            const std::string& path) {
  const json* v = array(j, key, path);
  if (v == nullptr) return std::nullopt;
  const std::string p = childPath(path, key);
  std::vector<std::string> items;
  bool ok = true;
  for (size_t i = 0; i < v->size(); ++i) {
    const json& item = (*v)[i];
    if (!item.is_string()) {
      typeError(indexPath(p, i), "a string", item);
      ok = false;
      continue;
    }
    items.push_back(item.get<std::string>());
  }
  if (!ok) return std::nullopt;
  return items;
}

const nlohmann::json* Decoder::array(const json& j, std::string_view key, const std::string& path) {
  const json* v = member(j, key);
  if (v == nullptr) return nullptr;
  if (!v->is_array()) {
    typeError(childPath(path, key), "an array", *v);
    return nullptr;
  }
  return v;
}

// ---- the plugin factories' helpers ----

namespace {

template <typename T>
bool assign(std::optional<T> v, T& out) {
  if (!v) return false;
  out = std::move(*v);
  return true;
}

}  // namespace

void expectObject(const nlohmann::json& j, const std::string& path,
                  std::initializer_list<std::string_view> known) {
  Decoder::throwing().object(j, path, known);
}

bool readInt64(const nlohmann::json& j, std::string_view key, const std::string& path,
               int64_t& out) {
  return assign(Decoder::throwing().int64(j, key, path), out);
}

bool readInt32(const nlohmann::json& j, std::string_view key, const std::string& path,
               int32_t& out) {
  return assign(Decoder::throwing().int32(j, key, path), out);
}

bool readString(const nlohmann::json& j, std::string_view key, const std::string& path,
                std::string& out) {
  return assign(Decoder::throwing().string(j, key, path), out);
}

bool readStringList(const nlohmann::json& j, std::string_view key, const std::string& path,
                    std::vector<std::string>& out) {
  return assign(Decoder::throwing().stringList(j, key, path), out);
}

}  // namespace ksched::plugins::helper
