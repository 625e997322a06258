// The apiserver client's HTTP/1.1 response parser (client::ResponseParser) on the bytes of a
// connection, and what the client makes of the answer (client::RestClient::call): a malformed
// answer becomes a transport ApiError quoting it, a 2xx body is parsed as JSON
// (get/post/put/patch: parseAnswerJson, whose ApiError their callers catch; LIST pages:
// parseObjectJson), any other answer becomes an ApiError from its metav1.Status or its text;
// Retry-After is read. The parser reports bad input through its state, never by throwing;
// ApiError::fromResponse never throws. The first byte says how the bytes come:
//   bit 0     the answer to a HEAD request (no body whatever the headers say)
//   bit 1     a 2xx body streamed to a sink, as a watch reads it
//   bits 2-7  the size of the reads the bytes arrive in (0: one read)
// An ApiError's text ends up in pod conditions and events, which are JSON.
#include <string>

#include "client/backoff.h"
#include "client/errors.h"
#include "client/http_connection.h"
#include "client/object_json.h"
#include "client/rest_client.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  const bool head = (in.selector & 1) != 0;
  const bool stream = (in.selector & 2) != 0;
  const size_t piece = in.selector >> 2;

  std::string streamed;
  client::ResponseParser parser = stream ? client::ResponseParser([&](std::string_view body) {
    streamed.append(body);
    return true;
  })
                                         : client::ResponseParser(head);
  std::string_view bytes = in.rest;
  while (!bytes.empty() && parser.state() == client::ResponseParser::State::kMore) {
    const size_t n = piece == 0 ? bytes.size() : std::min(piece, bytes.size());
    parser.feed(bytes.substr(0, n));
    bytes.remove_prefix(n);
  }
  if (parser.state() == client::ResponseParser::State::kMore) parser.finish();
  if (parser.state() != client::ResponseParser::State::kDone) {
    fuzz::check(!parser.error().empty(), "a failed answer without an error");
    const client::ApiError e(0, "", "malformed answer: " + parser.error(), "GET", "/version");
    fuzz::dump({{"message", e.message()}, {"error", e.what()}});
    return 0;
  }
  client::HttpAnswer& answer = parser.answer();
  fuzz::check(answer.status >= 200 && answer.status <= 999, "status out of range");
  (void)client::parseRetryAfter(answer.retryAfter);
  if (answer.status >= 200 && answer.status < 300) {
    if (stream) return 0;
    try {
      fuzz::dump(client::parseAnswerJson(answer.body, "GET", "/version"));
    } catch (const client::ApiError& e) {
      fuzz::dump({{"message", e.message()}, {"error", e.what()}});
    }
    fuzz::dump(client::parseObjectJson(answer.body));
    return 0;
  }
  const client::ApiError e = client::ApiError::fromResponse(answer.status, answer.body, "GET",
                                                            "/api/v1/namespaces/default/pods");
  fuzz::dump({{"reason", e.reason()}, {"message", e.message()}, {"error", e.what()}});
  return 0;
}
