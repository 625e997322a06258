#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <ksched/api/utf8.h>

namespace ksched::api {
namespace {

struct Case {
  const char* name;
  std::string in;
  std::string want;
};

TEST(Utf8Test, ReplacesEveryInvalidByteAndKeepsTheRest) {
  const std::string r = "\xEF\xBF\xBD";
  const Case cases[] = {
      {"ascii", "plain text", "plain text"},
      {"two, three and four bytes", "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80",
       "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"},
      {"lone 0xFF",
       "a\xFF"
       "b",
       "a" + r + "b"},
      {"continuation byte alone", "\x80", r},
      {"truncated sequence at the end", "x\xE2\x82", "x" + r + r},
      {"overlong slash", "\xC0\xAF", r + r},
      {"overlong three bytes", "\xE0\x80\xAF", r + r + r},
      {"surrogate", "\xED\xA0\x80", r + r + r},
      {"above U+10FFFF", "\xF4\x90\x80\x80", r + r + r + r},
      {"highest code point", "\xF4\x8F\xBF\xBF", "\xF4\x8F\xBF\xBF"},
      {"NUL is valid", std::string("a\0b", 3), std::string("a\0b", 3)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(toValidUtf8(c.in), c.want);
    EXPECT_EQ(isValidUtf8(c.in), c.in == c.want);
    std::string s = c.in;
    EXPECT_EQ(makeValidUtf8(s), c.in != c.want);
    EXPECT_EQ(s, c.want);
    // What the replacement is for: nlohmann::json serializes it without throwing.
    EXPECT_NO_THROW((void)nlohmann::json(s).dump());
  }
}

TEST(Utf8Test, TruncatesOnASequenceBoundary) {
  EXPECT_EQ(truncateUtf8("short", 10), "short");
  EXPECT_EQ(truncateUtf8("abcdef", 3), "abc...");
  // "é" is two bytes: a cut after its first byte moves before it.
  EXPECT_EQ(truncateUtf8("ab\xC3\xA9z", 3), "ab...");
  EXPECT_EQ(truncateUtf8("ab\xC3\xA9z", 4), "ab\xC3\xA9...");
}

TEST(Utf8Test, EqualFoldIgnoresAsciiCaseOnly) {
  EXPECT_TRUE(equalFold("Content-Length", "content-LENGTH"));
  EXPECT_TRUE(equalFold("", ""));
  EXPECT_FALSE(equalFold("nodes", "node"));
  EXPECT_FALSE(equalFold("a-b", "a_b"));
}

TEST(Utf8Test, AppendEncodesEachLengthOfCodePoint) {
  std::string out;
  for (char32_t cp : {U'A', U'\u00e9', U'\u20ac', U'\U0001F600'}) appendUtf8(out, cp);
  EXPECT_EQ(out, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  EXPECT_TRUE(isValidUtf8(out));
}

}  // namespace
}  // namespace ksched::api
