#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <ksched/helper/field_error.h>
#include <ksched/registry.h>

namespace ksched::plugins::helper {
namespace {

std::vector<std::string> labelNameErrors(const std::string& value) {
  std::vector<std::string> out;
  for (const auto& e : validateLabelName(value, "f")) out.push_back(e.toString());
  return out;
}

const std::string kNameRegexError =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

TEST(ValidateLabelNameTest, Valid) {
  for (const char* v : {"a", "cpu", "example.com/gpu", "a.b-c_d", "x/Y", "123-abc"}) {
    EXPECT_TRUE(labelNameErrors(v).empty()) << v;
  }
}

TEST(ValidateLabelNameTest, Invalid) {
  EXPECT_EQ(labelNameErrors(""),
            (std::vector<std::string>{"f: Invalid value: \"\": name part must be non-empty",
                                      "f: Invalid value: \"\": name part " + kNameRegexError}));
  EXPECT_EQ(labelNameErrors("-a"),
            std::vector<std::string>{"f: Invalid value: \"-a\": name part " + kNameRegexError});
  EXPECT_EQ(labelNameErrors("/a"),
            std::vector<std::string>{"f: Invalid value: \"/a\": prefix part must be non-empty"});
  EXPECT_EQ(labelNameErrors(std::string(64, 'a')),
            std::vector<std::string>{"f: Invalid value: \"" + std::string(64, 'a') +
                                     "\": name part must be no more than 63 characters"});
}

TEST(FieldErrorTest, Bodies) {
  EXPECT_EQ(invalid("a.b", int64_t{-1}, "too small").toString(),
            "a.b: Invalid value: -1: too small");
  EXPECT_EQ(invalid("a", "x\"y", "bad").toString(), "a: Invalid value: \"x\\\"y\": bad");
  EXPECT_EQ(notSupported("t", "Foo", {"A", "B"}).toString(),
            "t: Unsupported value: \"Foo\": supported values: \"A\", \"B\"");
  EXPECT_EQ(required("s", "needed").toString(), "s: Required value: needed");
  EXPECT_EQ(quote(std::string("a\x01", 2)), "\"a\\x01\"");
}

TEST(FieldErrorTest, ThrowIfAnyThrowsTheFirst) {
  EXPECT_NO_THROW(throwIfAny({}));
  try {
    throwIfAny({required("a", "x"), required("b", "y")});
    ADD_FAILURE() << "no error";
  } catch (const PluginArgsError& e) {
    EXPECT_STREQ(e.what(), "a: Required value: x");
  }
}

}  // namespace
}  // namespace ksched::plugins::helper
