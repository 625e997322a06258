#include <algorithm>
#include <limits>

#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins::helper {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw PluginArgsError(path.empty() ? what : path + ": " + what);
}

std::string got(const nlohmann::json& v) { return std::string("got ") + v.type_name(); }

bool readInteger(const nlohmann::json& j, std::string_view key, const std::string& path, int64_t lo,
                 int64_t hi, int64_t& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return false;
  const std::string p = childPath(path, key);
  if (v->is_number_unsigned()) {
    const uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(hi)) fail(p, "integer " + v->dump() + " out of range");
    out = static_cast<int64_t>(u);
    return true;
  }
  if (!v->is_number_integer()) fail(p, "expected an integer, " + got(*v));
  const int64_t i = v->get<int64_t>();
  if (i < lo || i > hi) fail(p, "integer " + v->dump() + " out of range");
  out = i;
  return true;
}

}  // namespace

std::string childPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string indexPath(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

void expectObject(const nlohmann::json& j, const std::string& path,
                  std::initializer_list<std::string_view> known) {
  if (!j.is_object()) fail(path, "expected an object, " + got(j));
  for (const auto& [key, _] : j.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      fail(childPath(path, key), "unknown field");
    }
  }
}

const nlohmann::json* member(const nlohmann::json& j, std::string_view key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

bool readInt64(const nlohmann::json& j, std::string_view key, const std::string& path,
               int64_t& out) {
  return readInteger(j, key, path, std::numeric_limits<int64_t>::min(),
                     std::numeric_limits<int64_t>::max(), out);
}

bool readInt32(const nlohmann::json& j, std::string_view key, const std::string& path,
               int32_t& out) {
  int64_t v = 0;
  if (!readInteger(j, key, path, std::numeric_limits<int32_t>::min(),
                   std::numeric_limits<int32_t>::max(), v)) {
    return false;
  }
  out = static_cast<int32_t>(v);
  return true;
}

bool readString(const nlohmann::json& j, std::string_view key, const std::string& path,
                std::string& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return false;
  if (!v->is_string()) fail(childPath(path, key), "expected a string, " + got(*v));
  out = v->get<std::string>();
  return true;
}

bool readStringList(const nlohmann::json& j, std::string_view key, const std::string& path,
                    std::vector<std::string>& out) {
  const nlohmann::json* v = member(j, key);
  if (v == nullptr) return false;
  const std::string p = childPath(path, key);
  if (!v->is_array()) fail(p, "expected an array, " + got(*v));
  std::vector<std::string> items;
  for (size_t i = 0; i < v->size(); ++i) {
    const nlohmann::json& item = (*v)[i];
    if (!item.is_string()) fail(indexPath(p, i), "expected a string, " + got(item));
    items.push_back(item.get<std::string>());
  }
  out = std::move(items);
  return true;
}

}  // namespace ksched::plugins::helper
