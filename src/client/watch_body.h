// The body of a watch answer: one JSON event per line ({"type": "ADDED", "object": {...}}),
// split into lines as the bytes arrive and decoded in order. Pure: RestClient::watch feeds it
// the answer's body; the watch fuzz target and the unit tests feed it bytes.
//
// Nothing is skipped. A line that is not a watch event (not JSON, invalid UTF-8, a chunk cut
// short, a type that is not one of the five, an object that is not an object) ends the stream
// with a transport error, as client-go's "unable to decode an event from the watch stream":
// the events after it are never handed on, so the caller resumes the watch from the last event
// it was handed and the apiserver sends the rest again.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "client/errors.h"

namespace ksched::client {

enum class WatchEventType { kAdded, kModified, kDeleted, kBookmark, kError };

struct WatchEvent {
  WatchEventType type;
  nlohmann::json object;
};

// Returns false to end the watch.
using WatchHandler = std::function<bool(WatchEvent&&)>;

// Offered each line before it is parsed into a JSON tree, by a caller that can decode its kind
// straight from the text (api/fast_decode.h): nullopt leaves the line to the usual
// parse and the WatchHandler; otherwise the line was an ADDED, MODIFIED or DELETED event, handed
// on, and the value says whether to go on (as a WatchHandler's).
using WatchLineHandler = std::function<std::optional<bool>(std::string_view line)>;

// Splits a watch answer into its lines as it arrives: a line lying whole in a piece is handed
// over in place, only a line split across pieces is copied.
class WatchLineSplitter {
 public:
  // Hands every line `data` completes (without its '\n') to `onLine`, in order, while that
  // returns true. False once it returned false; the rest of `data` is then dropped.
  template <typename F>
  bool feed(std::string_view data, F&& onLine) {
    for (size_t nl; (nl = data.find('\n')) != std::string_view::npos; data.remove_prefix(nl + 1)) {
      bool more = false;
      if (partial_.empty()) {
        more = onLine(data.substr(0, nl));
      } else {
        partial_.append(data.substr(0, nl));
        more = onLine(std::string_view(partial_));
        partial_.clear();
      }
      if (!more) return false;
    }
    partial_.append(data);
    return true;
  }
  // What came after the last '\n': a last line the stream ended without terminating.
  [[nodiscard]] const std::string& rest() const { return partial_; }

 private:
  std::string partial_;
};

// One line of a watch answer as an event; an ERROR event carries the metav1.Status
// (ApiError::fromStatus). nullopt, with `why` set, when the line is not a watch event: not a
// JSON object, a type that is not ADDED, MODIFIED, DELETED, BOOKMARK or ERROR, an object that
// is not a JSON object, or (but for ERROR) one without a metadata object. Never throws.
[[nodiscard]] std::optional<WatchEvent> parseWatchEvent(std::string_view line,
                                                        std::string* why = nullptr);

class WatchBody {
 public:
  // `path` names the watch in errors; `handler` gets every event but ERROR, in order, but for
  // the lines `lineHandler` (when set) took.
  WatchBody(std::string path, const WatchHandler& handler,
            const WatchLineHandler* lineHandler = nullptr)
      : path_(std::move(path)), handler_(handler), lineHandler_(lineHandler) {}

  // Hands on the events `data` completes. False once the stream must end: an ERROR event, a
  // line that is not an event (error() says which) or the handler returned false.
  bool feed(std::string_view data);
  // The stream ended cleanly: a last line without its '\n' is a line cut short unless it
  // decodes. False as feed().
  bool finish();

  // The ERROR event's status, or the transport error for a line that is not an event.
  [[nodiscard]] const std::optional<ApiError>& error() const { return error_; }
  [[nodiscard]] bool handlerStopped() const { return handlerStopped_; }
  // Events handed to the handler.
  [[nodiscard]] uint64_t events() const { return events_; }

 private:
  bool onLine(std::string_view line);

  const std::string path_;
  const WatchHandler& handler_;
  const WatchLineHandler* lineHandler_;
  WatchLineSplitter lines_;
  std::optional<ApiError> error_;
  bool handlerStopped_ = false;
  uint64_t events_ = 0;
};

}  // namespace ksched::client
