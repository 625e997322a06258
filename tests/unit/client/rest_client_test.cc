// The pure parts of the apiserver client: a watch answer's lines and events, a 2xx answer's
// JSON, error answers as ApiError.
#include "client/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/api/utf8.h>

#include "client/errors.h"

namespace ksched::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<std::string> splitInPieces(std::string_view body, size_t step) {
  std::vector<std::string> lines;
  WatchLineSplitter s;
  for (size_t at = 0; at < body.size(); at += step) {
    EXPECT_TRUE(s.feed(body.substr(at, step), [&](std::string_view line) {
      lines.emplace_back(line);
      return true;
    }));
  }
  if (!s.rest().empty()) lines.push_back(s.rest() + "<no newline>");
  return lines;
}

TEST(WatchLineSplitterTest, LinesInAnySplit) {
  for (size_t step : {1, 2, 5, 100}) {
    EXPECT_THAT(splitInPieces("{\"a\":1}\n\n{\"b\":2}\nlast", step),
                ElementsAre("{\"a\":1}", "", "{\"b\":2}", "last<no newline>"))
        << step;
  }
}

TEST(WatchLineSplitterTest, StopsWhenTheHandlerSaysSo) {
  WatchLineSplitter s;
  int seen = 0;
  EXPECT_FALSE(s.feed("a\nb\nc\n", [&](std::string_view) { return ++seen < 2; }));
  EXPECT_EQ(seen, 2);
}

TEST(ParseWatchEventTest, Events) {
  auto ev = parseWatchEvent(R"({"type":"MODIFIED","object":{"metadata":{"name":"p"}}})");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->type, WatchEventType::kModified);
  EXPECT_EQ(ev->object["metadata"]["name"], "p");
  ev = parseWatchEvent(R"({"type":"ERROR","object":{"kind":"Status","code":410}})");
  ASSERT_TRUE(ev);
  EXPECT_EQ(ev->type, WatchEventType::kError);
  EXPECT_TRUE(ApiError::fromStatus(ev->object, "WATCH", "/p").isGone());
}

// A line that is not an event is skipped, never thrown about (found by tests/fuzz/watch_fuzz:
// a type that was not a string threw json::type_error out of the watch).
TEST(ParseWatchEventTest, UndecodableLinesAreSkipped) {
  for (const char* line : {"not json", "[1]", R"({"type":7,"object":{}})",
                           R"({"type":null,"object":{}})", R"({"type":{},"object":{}})"}) {
    EXPECT_FALSE(parseWatchEvent(line)) << line;
  }
}

// A 2xx answer that is not JSON (another server's page) is the client's ApiError, as its
// contract says, not nlohmann's parse_error (found by tests/fuzz/http_response_fuzz: the
// daemon's GET /version caught only ApiError).
TEST(ParseAnswerJsonTest, NotJsonIsAnApiError) {
  EXPECT_EQ(parseAnswerJson(R"({"gitVersion":"v1.20.2"})", "GET", "/version")["gitVersion"],
            "v1.20.2");
  try {
    (void)parseAnswerJson("<html>\xff</html>", "GET", "/version");
    FAIL() << "no error";
  } catch (const ApiError& e) {
    EXPECT_TRUE(e.isTransport());
    EXPECT_THAT(e.what(), HasSubstr("GET /version: no answer: the answer is not JSON: "));
    EXPECT_TRUE(api::isValidUtf8(e.what()));
  }
}

// Error texts quote what arrived; they go into pod conditions and events (JSON), so they are
// made valid UTF-8 (found by tests/fuzz/http_response_fuzz: dump() threw type_error 316).
TEST(ApiErrorTest, TextIsValidUtf8) {
  const ApiError e = ApiError::fromResponse(502, "bad \xe9 gateway\xe2\x82", "POST", "/b");
  EXPECT_EQ(e.message(), "bad \uFFFD gateway\uFFFD\uFFFD");
  EXPECT_EQ(nlohmann::json(e.what()).dump(), "\"POST /b: 502: bad \uFFFD gateway\uFFFD\uFFFD\"");
  const ApiError t(0, "", "malformed answer: \"HTTP/1.1 2\xff\"", "GET", "/version");
  EXPECT_TRUE(api::isValidUtf8(t.message()));
}

// A body that is JSON but no Status is quoted, whatever its kind holds (found by
// tests/fuzz/http_response_fuzz: a kind that was not a string threw json::type_error out of
// every request).
TEST(ApiErrorTest, BodyThatIsNoStatusIsQuoted) {
  for (const char* body : {R"({"kind":403})", R"({"kind":null})", R"(["Status"])", "\"Status\""}) {
    const ApiError e = ApiError::fromResponse(403, body, "GET", "/x");
    EXPECT_EQ(e.code(), 403) << body;
    EXPECT_EQ(e.reason(), "Forbidden") << body;
    EXPECT_EQ(e.message(), body);
  }
  const ApiError s = ApiError::fromResponse(
      500, R"({"kind":"Status","code":409,"reason":"AlreadyExists","message":"m"})", "POST", "/x");
  EXPECT_EQ(s.code(), 409);
  EXPECT_EQ(s.reason(), "AlreadyExists");
}

TEST(ApiErrorTest, LongTextIsCutWithoutSplittingACharacter) {
  std::string body(511, 'x');
  body += "\xc3\xa9\xc3\xa9 and more";
  const ApiError e = ApiError::fromResponse(500, body, "GET", "/x");
  EXPECT_EQ(e.message(), std::string(511, 'x') + "...");
}

}  // namespace
}  // namespace ksched::client
