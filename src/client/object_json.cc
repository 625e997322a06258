#include "client/object_json.h"

#include <string>
#include <utility>
#include <vector>

namespace ksched::client {
namespace {

using json = nlohmann::json;

// A SAX handler building the tree as nlohmann's own DOM parser does, minus the skipped values.
class TrimmingBuilder {
 public:
  json result;

  bool null() { return value(nullptr); }
  bool boolean(bool v) { return value(v); }
  bool number_integer(json::number_integer_t v) { return value(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value(v); }
  bool number_float(json::number_float_t v, const json::string_t& /*text*/) { return value(v); }
  bool string(json::string_t& v) { return value(std::move(v)); }
  bool binary(json::binary_t& v) { return value(json::binary(std::move(v))); }

  bool start_object(std::size_t /*size*/) {
    if (skipping()) return true;
    const bool isMetadata = keyIsMetadata_;
    stack_.push_back({place(json::object()), isMetadata});
    return true;
  }
  bool key(json::string_t& k) {
    if (skipDepth_ > 0) return true;
    Frame& f = stack_.back();
    if (f.isMetadata && k == "managedFields") {
      skipNext_ = true;
      return true;
    }
    keyIsMetadata_ = k == "metadata";
    slot_ = &(*f.value)[std::move(k)];
    return true;
  }
  bool end_object() { return end(); }
  bool start_array(std::size_t /*size*/) {
    if (skipping()) return true;
    stack_.push_back({place(json::array()), false});
    return true;
  }
  bool end_array() { return end(); }
  bool parse_error(std::size_t /*position*/, const std::string& /*token*/,
                   const nlohmann::detail::exception& /*ex*/) {
    failed_ = true;
    return false;
  }

  [[nodiscard]] bool failed() const { return failed_; }

 private:
  struct Frame {
    json* value;
    bool isMetadata;  // the object is some object's "metadata"
  };

  // At the start of an object or array: true when it is (inside) a skipped value, whose
  // nesting is then counted instead of built.
  bool skipping() {
    if (skipDepth_ == 0 && !skipNext_) return false;
    skipNext_ = false;
    ++skipDepth_;
    return true;
  }
  // A scalar value: stored, or dropped when skipped.
  template <typename V>
  bool value(V&& v) {
    if (skipDepth_ > 0) return true;
    if (skipNext_) {
      skipNext_ = false;
      return true;
    }
    place(json(std::forward<V>(v)));
    return true;
  }
  // Stores a value where it goes: the root, the open array's end or the last key's slot.
  json* place(json v) {
    keyIsMetadata_ = false;
    if (stack_.empty()) {
      result = std::move(v);
      return &result;
    }
    json& parent = *stack_.back().value;
    if (parent.is_array()) {
      auto& arr = parent.get_ref<json::array_t&>();
      arr.push_back(std::move(v));
      return &arr.back();
    }
    *slot_ = std::move(v);
    return slot_;
  }
  bool end() {
    if (skipDepth_ > 0) return --skipDepth_, true;
    stack_.pop_back();
    return true;
  }

  std::vector<Frame> stack_;
  json* slot_ = nullptr;        // the value of the last key read in the open object
  bool keyIsMetadata_ = false;  // that key is "metadata" (until its value is placed)
  bool skipNext_ = false;       // the next value is a managedFields: skip it
  int skipDepth_ = 0;           // > 0: inside a skipped object/array
  bool failed_ = false;
};

}  // namespace

nlohmann::json parseObjectJson(std::string_view text) {
  TrimmingBuilder b;
  const bool ok = json::sax_parse(text, &b, json::input_format_t::json, /*strict=*/true);
  if (!ok || b.failed()) return json(json::value_t::discarded);
  return std::move(b.result);
}

}  // namespace ksched::client
