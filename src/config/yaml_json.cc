#include "config/yaml_json.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <regex>
#include <string>

#include <ksched/api/utf8.h>

namespace ksched::config {
namespace {

bool isNull(const std::string& s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

std::optional<bool> asBool(const std::string& s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

nlohmann::json asNumber(const std::string& s) {
  static const std::regex kInt("[-+]?[0-9]+");
  static const std::regex kHex("0x[0-9a-fA-F]+");
  static const std::regex kOct("0o[0-7]+");
  static const std::regex kFloat("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  auto integer = [&](const std::string& digits, int base) -> nlohmann::json {
    errno = 0;
    char* end = nullptr;
    const long long v = std::strtoll(digits.c_str(), &end, base);
    if (errno == 0) return static_cast<int64_t>(v);
    errno = 0;
    const unsigned long long u = std::strtoull(digits.c_str(), &end, base);
    if (errno == 0 && digits.front() != '-') return static_cast<uint64_t>(u);
    return std::strtod(digits.c_str(), nullptr);
  };
  if (std::regex_match(s, kInt)) return integer(s, 10);
  if (std::regex_match(s, kHex)) return integer(s.substr(2), 16);
  if (std::regex_match(s, kOct)) return integer(s.substr(2), 8);
  if (std::regex_match(s, kFloat)) return std::strtod(s.c_str(), nullptr);
  if (s == ".inf" || s == ".Inf" || s == ".INF" || s == "+.inf" || s == "+.Inf" || s == "+.INF") {
    return std::numeric_limits<double>::infinity();
  }
  if (s == "-.inf" || s == "-.Inf" || s == "-.INF") return -std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN" || s == ".NAN") return std::numeric_limits<double>::quiet_NaN();
  return nullptr;
}

// Where a node is, for errors: a chain of keys and indexes from the root, rendered only when
// an error names it ("profiles[0].schedulerName").
struct Path {
  const Path* parent = nullptr;
  std::string_view key;  // a mapping key, unless `item`
  size_t index = 0;      // a sequence item's, when `item`
  bool item = false;

  [[nodiscard]] std::string render() const {
    std::string out = parent == nullptr ? std::string() : parent->render();
    if (parent == nullptr) return out;
    if (item) return out + "[" + std::to_string(index) + "]";
    if (!out.empty()) out += '.';
    return out + api::toValidUtf8(key);
    return out;
  }
};

// JSON cannot carry bytes that are not UTF-8: a scalar or key holding them is an error naming
// where it is (Go's YAML decoder rejects such a document too).
const std::string& checkedText(const YAML::Node& n, const std::string& s, const Path& path) {
  if (api::isValidUtf8(s)) return s;
  const YAML::Mark m = n.Mark();
  std::string where = path.render();
  if (!where.empty()) where += ": ";
  throw YamlSyntaxError("invalid YAML at line " + std::to_string(m.line + 1) + ", column " +
                        std::to_string(m.column + 1) + ": " + where +
                        "invalid UTF-8 (a string must be UTF-8)");
}

nlohmann::json convert(const YAML::Node& n, const Path& path) {
  switch (n.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar: {
      const std::string& s = checkedText(n, n.Scalar(), path);
      const std::string& tag = n.Tag();
      if (tag == "!" || tag == "tag:yaml.org,2002:str") return s;
      if (isNull(s)) return nullptr;
      if (auto b = asBool(s)) return *b;
      if (auto num = asNumber(s); !num.is_null()) return num;
      return s;
    }
    case YAML::NodeType::Sequence: {
      auto out = nlohmann::json::array();
      size_t i = 0;
      for (const auto& item : n) out.push_back(convert(item, Path{&path, {}, i++, true}));
      return out;
    }
    case YAML::NodeType::Map: {
      auto out = nlohmann::json::object();
      for (const auto& kv : n) {
        const YAML::Node& key = kv.first;
        std::string k = key.IsScalar() ? key.Scalar() : YAML::Dump(key);
        const Path child{&path, k};
        checkedText(key, k, child);
        out[k] = convert(kv.second, child);
      }
      return out;
    }
  }
  return nullptr;
}

// True when `s` written plain would read back as the same string.
bool plainIsSafe(const std::string& s) {
  if (s.empty() || isNull(s) || asBool(s) || !asNumber(s).is_null()) return false;
  static const std::regex kSafe("[A-Za-z0-9_./][-A-Za-z0-9_./:@+]*");
  if (!std::regex_match(s, kSafe)) return false;
  if (s.find(": ") != std::string::npos || s.back() == ':') return false;
  // YAML 1.1 booleans, for readers that still use them.
  static const std::regex kYaml11("y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF");
  return !std::regex_match(s, kYaml11);
}

std::string scalar(const nlohmann::json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    return plainIsSafe(s) ? s : v.dump();
  }
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (std::isnan(d)) return ".nan";
    if (std::isinf(d)) return d > 0 ? ".inf" : "-.inf";
  }
  return v.dump();
}

bool isEmptyContainer(const nlohmann::json& v) {
  return (v.is_object() || v.is_array()) && v.empty();
}

// Comments by JSON pointer, written above the key (or sequence item) they point at.
using Comments = std::vector<std::pair<std::string, std::string>>;

class Emitter {
 public:
  Emitter(std::string& out, const Comments& comments) : out_(out), comments_(comments) {}

  void emit(const nlohmann::json& v, int indent, const std::string& pointer) {
    const std::string pad(static_cast<size_t>(indent), ' ');
    if (v.is_object()) {
      for (const auto& [k, child] : v.items()) {
        const std::string p = pointer + "/" + escape(k);
        comment(p, pad);
        out_ += pad + scalar(nlohmann::json(k)) + ":";
        emitValueAfterKey(child, indent, p);
      }
    } else if (v.is_array()) {
      for (size_t i = 0; i < v.size(); ++i) {
        const auto& item = v[i];
        const std::string ip = pointer + "/" + std::to_string(i);
        comment(ip, pad);
        if (item.is_object() && !item.empty()) {
          bool first = true;
          for (const auto& [k, child] : item.items()) {
            const std::string p = ip + "/" + escape(k);
            comment(p, pad + "  ");  // the first key's above the "- " line
            out_ += (first ? pad + "- " : pad + "  ") + scalar(nlohmann::json(k)) + ":";
            emitValueAfterKey(child, indent + 2, p);
            first = false;
          }
        } else if (item.is_array() && !item.empty()) {
          out_ += pad + "-\n";
          emit(item, indent + 2, ip);
        } else {
          out_ += pad + "- " +
                  (isEmptyContainer(item) ? std::string(item.is_object() ? "{}" : "[]")
                                          : scalar(item)) +
                  "\n";
        }
      }
    } else {
      out_ += pad + scalar(v) + "\n";
    }
  }

  void comment(const std::string& pointer, const std::string& pad) {
    for (const auto& [p, text] : comments_) {
      if (p == pointer) out_ += pad + "# " + text + "\n";
    }
  }

 private:
  static std::string escape(const std::string& key) {
    std::string out;
    for (char c : key) {
      if (c == '~') {
        out += "~0";
      } else if (c == '/') {
        out += "~1";
      } else {
        out += c;
      }
    }
    return out;
  }

  void emitValueAfterKey(const nlohmann::json& v, int indent, const std::string& pointer) {
    if (v.is_object() && !v.empty()) {
      out_ += "\n";
      emit(v, indent + 2, pointer);
    } else if (v.is_array() && !v.empty()) {
      out_ += "\n";
      emit(v, indent, pointer);  // sequences under a key are not indented further
    } else {
      out_ += ' ';
      out_ += isEmptyContainer(v) ? std::string(v.is_object() ? "{}" : "[]") : scalar(v);
      out_ += '\n';
    }
  }

  std::string& out_;
  const Comments& comments_;
};

}  // namespace

namespace {

[[noreturn]] void syntaxError(const YAML::Exception& e) {
  if (e.mark.is_null()) throw YamlSyntaxError("invalid YAML: " + e.msg);
  throw YamlSyntaxError("invalid YAML at line " + std::to_string(e.mark.line + 1) + ", column " +
                        std::to_string(e.mark.column + 1) + ": " + e.msg);
}

}  // namespace

nlohmann::json yamlToJson(std::string_view text) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    syntaxError(e);
  }
  return convert(root, Path{});
}

std::vector<nlohmann::json> yamlDocumentsToJson(std::string_view text) {
  std::vector<YAML::Node> roots;
  try {
    roots = YAML::LoadAll(std::string(text));
  } catch (const YAML::Exception& e) {
    syntaxError(e);
  }
  std::vector<nlohmann::json> out;
  for (const auto& r : roots) {
    nlohmann::json j = convert(r, Path{});
    if (!j.is_null()) out.push_back(std::move(j));
  }
  return out;
}

std::string jsonToYaml(const nlohmann::json& value,
                       const std::vector<std::pair<std::string, std::string>>& comments) {
  std::string out;
  Emitter e(out, comments);
  e.comment("", "");
  if (isEmptyContainer(value)) return out + (value.is_object() ? "{}\n" : "[]\n");
  e.emit(value, 0, "");
  return out;
}

}  // namespace ksched::config
