// The pure parts of the apiserver client: a watch answer's lines and events, a 2xx answer's
// JSON, error answers as ApiError.
#include "client/rest_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/api/utf8.h>

#include "client/errors.h"
#include "client/watch_body.h"

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

// A line that is not an event is refused with why, never thrown about (found by
// tests/fuzz/watch_fuzz: a type that was not a string threw json::type_error out of the watch).
TEST(ParseWatchEventTest, LinesThatAreNotEventsAreRefusedWithWhy) {
  const std::pair<const char*, const char*> cases[] = {
      {"not json", "not JSON"},
      {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"\xff\"}}}", "not JSON"},
      {"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\x01\"}}}", "not JSON"},
      {R"({"type":"ADDED","object":{"metadata":{"generation":1e999999}}})", "not JSON"},
      {R"({"type":"ADDED","object":{"metadata":{"na)", "not JSON"},
      {"[1]", "not a JSON object"},
      {R"({"type":7,"object":{}})", "no type"},
      {R"({"type":null,"object":{}})", "no type"},
      {R"({"object":{"metadata":{}}})", "no type"},
      {R"({"type":"ADDEX","object":{"metadata":{}}})", "unknown type \"ADDEX\""},
      {R"({"type":"ADDED","object":"p"})", "no object"},
      {R"({"type":"MODIFIED","object":{"spec":{}}})", "object without metadata"},
  };
  for (const auto& [line, want] : cases) {
    std::string why;
    EXPECT_FALSE(parseWatchEvent(line, &why)) << line;
    EXPECT_EQ(why, want) << line;
  }
}

// The events of a body up to one that is not an event, then the stream's end with a transport
// error: nothing after the bad line is handed on, so the watch resumes from the last event
// handed on and loses none (client-go's "unable to decode an event from the watch stream").
TEST(WatchBodyTest, AnUndecodableLineEndsTheStreamAfterTheLastGoodEvent) {
  const std::string body =
      R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"10"}}})"
      "\n"
      R"({"type":"MODIFIED","object":{"metadata":{"name":"b","resourceVersion":"11"}}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"c","resourceV)"
      "\xff"
      R"(":"12"}}})"
      "\n"
      R"({"type":"ADDED","object":{"metadata":{"name":"d","resourceVersion":"13"}}})"
      "\n";
  for (size_t step : {size_t{1}, size_t{7}, body.size()}) {
    std::vector<std::string> seen;
    const WatchHandler handler = [&](WatchEvent&& ev) {
      seen.push_back(ev.object["metadata"]["resourceVersion"].get<std::string>());
      return true;
    };
    WatchBody w("/api/v1/pods", handler);
    bool more = true;
    for (size_t at = 0; more && at < body.size(); at += step) more = w.feed(body.substr(at, step));
    EXPECT_FALSE(more);
    EXPECT_THAT(seen, ElementsAre("10", "11")) << "reads of " << step;
    EXPECT_EQ(w.events(), 2u);
    ASSERT_TRUE(w.error());
    EXPECT_TRUE(w.error()->isTransport());
    EXPECT_THAT(w.error()->what(),
                HasSubstr("unable to decode an event from the watch stream (not JSON, after 2 "
                          "events)"));
  }
}

// A body that ends in the middle of a line (the connection closed cleanly after a partial
// write) ends with the same error; an ERROR event with its status.
TEST(WatchBodyTest, ALineCutShortAndAnErrorEvent) {
  const WatchHandler handler = [](WatchEvent&&) { return true; };
  WatchBody cut("/api/v1/nodes", handler);
  EXPECT_TRUE(cut.feed(R"({"type":"ADDED","object":{"metadata":{"name":"n"}}})"
                       "\n"
                       R"({"type":"ADDED","object":{"meta)"));
  EXPECT_FALSE(cut.finish());
  ASSERT_TRUE(cut.error());
  EXPECT_TRUE(cut.error()->isTransport());
  EXPECT_EQ(cut.events(), 1u);

  WatchBody gone("/api/v1/nodes", handler);
  EXPECT_FALSE(
      gone.feed(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
                "\n"));
  ASSERT_TRUE(gone.error());
  EXPECT_TRUE(gone.error()->isGone());
}

// A LIST answer that is not a list (cut short or corrupted into other JSON) is asked for again.
TEST(IsListPageTest, OnlyListsAsTheApiserverWritesThem) {
  EXPECT_TRUE(isListPage(nlohmann::json::parse(
      R"({"kind":"PodList","metadata":{"resourceVersion":"7","continue":""},"items":[]})")));
  EXPECT_TRUE(isListPage(nlohmann::json::parse(R"({"items":null})")));
  for (const char* text : {R"([])", R"("x")", R"({"items":{}})", R"({"metadata":[],"items":[]})",
                           R"({"metadata":{"resourceVersion":7},"items":[]})",
                           R"({"metadata":{"continue":1e99},"items":[]})"}) {
    EXPECT_FALSE(isListPage(nlohmann::json::parse(text))) << text;
  }
  EXPECT_FALSE(isListPage(nlohmann::json::parse("{", nullptr, false)));
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
