#include "client/watch_body.h"

#include <algorithm>

#include "client/object_json.h"

namespace ksched::client {
namespace {

std::optional<WatchEventType> eventType(std::string_view t) {
  if (t == "ADDED") return WatchEventType::kAdded;
  if (t == "MODIFIED") return WatchEventType::kModified;
  if (t == "DELETED") return WatchEventType::kDeleted;
  if (t == "BOOKMARK") return WatchEventType::kBookmark;
  if (t == "ERROR") return WatchEventType::kError;
  return std::nullopt;
}

std::nullopt_t refuse(std::string* why, std::string reason) {
  if (why != nullptr) *why = std::move(reason);
  return std::nullopt;
}

// A few bytes of the line, for the log: enough to recognize it, never a whole object.
std::string excerpt(std::string_view line) {
  constexpr size_t kMax = 80;
  std::string out;
  for (unsigned char c : line.substr(0, kMax)) {
    out += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  if (line.size() > kMax) out += "...";
  return out;
}

}  // namespace

std::optional<WatchEvent> parseWatchEvent(std::string_view line, std::string* why) {
  auto j = parseObjectJson(line);
  if (j.is_discarded()) return refuse(why, "not JSON");
  if (!j.is_object()) return refuse(why, "not a JSON object");
  auto type = j.find("type");
  if (type == j.end() || !type->is_string()) return refuse(why, "no type");
  const auto t = eventType(type->get_ref<const std::string&>());
  if (!t) return refuse(why, "unknown type " + type->dump());
  auto object = j.find("object");
  if (object == j.end() || !object->is_object()) return refuse(why, "no object");
  if (*t != WatchEventType::kError) {
    auto meta = object->find("metadata");
    if (meta == object->end() || !meta->is_object()) return refuse(why, "object without metadata");
  }
  return WatchEvent{*t, std::move(*object)};
}

bool WatchBody::feed(std::string_view data) {
  return lines_.feed(data, [this](std::string_view line) { return onLine(line); });
}

bool WatchBody::finish() {
  if (lines_.rest().empty()) return true;
  const std::string last = lines_.rest();
  return onLine(last);
}

bool WatchBody::onLine(std::string_view line) {
  if (line.empty()) return true;
  if (lineHandler_ != nullptr && *lineHandler_) {
    if (const std::optional<bool> more = (*lineHandler_)(line)) {
      ++events_;
      if (!*more) handlerStopped_ = true;
      return *more;
    }
  }
  std::string why;
  std::optional<WatchEvent> ev = parseWatchEvent(line, &why);
  if (!ev) {
    error_ = ApiError(0, "",
                      "unable to decode an event from the watch stream (" + why + ", after " +
                          std::to_string(events_) + " events): " + excerpt(line),
                      "WATCH", path_);
    return false;
  }
  if (ev->type == WatchEventType::kError) {
    error_ = ApiError::fromStatus(ev->object, "WATCH", path_);
    return false;
  }
  ++events_;
  if (!handler_(std::move(*ev))) {
    handlerStopped_ = true;
    return false;
  }
  return true;
}

}  // namespace ksched::client
