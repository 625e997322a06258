// parseObjectJson: what the apiserver sends, parsed as nlohmann's parser would, minus every
// metadata.managedFields.
#include "client/object_json.h"

#include <gtest/gtest.h>

#include <string>

namespace ksched::client {
namespace {

using nlohmann::json;

struct Case {
  std::string name;
  std::string text;
  std::string want;  // JSON text of the expected tree; "" = discarded (malformed input)
};

class ParseObjectJsonTest : public ::testing::TestWithParam<Case> {};

TEST_P(ParseObjectJsonTest, MatchesTheTreeWithoutManagedFields) {
  const Case& c = GetParam();
  json got = parseObjectJson(c.text);
  if (c.want.empty()) {
    EXPECT_TRUE(got.is_discarded()) << got.dump();
    return;
  }
  ASSERT_FALSE(got.is_discarded());
  EXPECT_EQ(got, json::parse(c.want)) << got.dump();
}

const char* const kManaged =
    R"([{"manager":"kubectl","operation":"Update","fieldsV1":{"f:spec":{"f:containers":)"
    R"({"k:{\"name\":\"c\"}":{".":{},"f:image":{}}}}},"time":"2026-11-24T00:00:00Z"}])";

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseObjectJsonTest,
    ::testing::Values(
        Case{"Pod",
             std::string(R"({"kind":"Pod","metadata":{"name":"p","managedFields":)") + kManaged +
                 R"(,"uid":"u","labels":{"a":"b"}},"spec":{"nodeName":"n"}})",
             R"({"kind":"Pod","metadata":{"name":"p","uid":"u","labels":{"a":"b"}},)"
             R"("spec":{"nodeName":"n"}})"},
        Case{"WatchEvent",
             std::string(R"({"type":"MODIFIED","object":{"metadata":{"managedFields":)") +
                 kManaged + R"(,"name":"p"},"status":{"phase":"Pending"}}})",
             R"({"type":"MODIFIED","object":{"metadata":{"name":"p"},)"
             R"("status":{"phase":"Pending"}}})"},
        Case{"ListPage",
             std::string(R"({"kind":"PodList","metadata":{"resourceVersion":"7","continue":""},)") +
                 R"("items":[{"metadata":{"name":"a","managedFields":)" + kManaged +
                 R"(}},{"metadata":{"managedFields":)" + kManaged + R"(,"name":"b"}}]})",
             R"({"kind":"PodList","metadata":{"resourceVersion":"7","continue":""},)"
             R"("items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})"},
        Case{"NullOrScalarManagedFields",
             R"([{"metadata":{"managedFields":null,"name":"a"}},)"
             R"({"metadata":{"managedFields":"x","name":"b"}}])",
             R"([{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}])"},
        Case{"ManagedFieldsElsewhereKept",
             R"({"managedFields":[1],"spec":{"managedFields":{"a":1}},)"
             R"("metadata":{"labels":{"managedFields":"v"}}})",
             R"({"managedFields":[1],"spec":{"managedFields":{"a":1}},)"
             R"("metadata":{"labels":{"managedFields":"v"}}})"},
        Case{"EveryValueKind",
             R"({"i":-3,"u":18446744073709551615,"f":1.5e3,"t":true,"n":null,)"
             R"("s":"caf\u00e9 \"q\"","a":[[],{},[1,[2,{"k":[3]}]]],"o":{"p":{"q":{}}}})",
             R"({"i":-3,"u":18446744073709551615,"f":1.5e3,"t":true,"n":null,)"
             R"("s":"caf\u00e9 \"q\"","a":[[],{},[1,[2,{"k":[3]}]]],"o":{"p":{"q":{}}}})"},
        Case{"ScalarRoot", R"("just a string")", R"("just a string")"},
        Case{"Truncated", R"({"metadata":{"name":"p")", ""},
        Case{"TruncatedInsideManagedFields", R"({"metadata":{"managedFields":[{"a":)", ""},
        Case{"Empty", "", ""}, Case{"TrailingGarbage", R"({"a":1} x)", ""}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace ksched::client
