#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/quantity.h>

namespace ksched::api {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

struct ParseCase {
  std::string name;
  std::string input;
  int64_t value;
  int64_t milli;
  std::string canonical;  // empty: not checked
};

TEST(QuantityTest, ParsesEveryForm) {
  const std::vector<ParseCase> cases = {
      {"integer", "1", 1, 1000, "1"},
      {"zero", "0", 0, 0, "0"},
      {"negativeZero", "-0", 0, 0, "0"},
      {"leadingZeros", "007", 7, 7000, "7"},
      {"decimal", "1.5", 2, 1500, "1500m"},
      {"tenth", "0.1", 1, 100, "100m"},
      {"leadingDot", ".5", 1, 500, "500m"},
      {"trailingDot", "1.", 1, 1000, "1"},
      {"plusSign", "+2", 2, 2000, "2"},
      {"negativeDecimal", "-1.5", -2, -1500, "-1500m"},
      {"nano", "1n", 1, 1, "1n"},
      {"micro", "5u", 1, 1, "5u"},
      {"milli", "100m", 1, 100, "100m"},
      {"milliAboveOne", "2500m", 3, 2500, "2500m"},
      {"kilo", "1k", 1000, 1'000'000, "1k"},
      {"mega", "3M", 3'000'000, 3'000'000'000, "3M"},
      {"giga", "2G", 2'000'000'000, 2'000'000'000'000, "2G"},
      {"tera", "1T", 1'000'000'000'000, 1'000'000'000'000'000, "1T"},
      {"peta", "1P", 1'000'000'000'000'000, 1'000'000'000'000'000'000, "1P"},
      {"exa", "1E", 1'000'000'000'000'000'000, kMax, "1E"},
      {"kibi", "1Ki", 1024, 1'024'000, "1Ki"},
      {"mebi", "500Mi", 524'288'000, 524'288'000'000, "500Mi"},
      {"gibi", "2Gi", 2'147'483'648, 2'147'483'648'000, "2Gi"},
      {"tebi", "1Ti", 1'099'511'627'776, 1'099'511'627'776'000, "1Ti"},
      {"pebi", "1Pi", 1'125'899'906'842'624, 1'125'899'906'842'624'000, "1Pi"},
      {"exbi", "1Ei", 1'152'921'504'606'846'976, kMax, "1Ei"},
      {"fractionalBinary", "1.5Gi", 1'610'612'736, 1'610'612'736'000, "1536Mi"},
      {"binaryBelow1024", "0.5Ki", 512, 512'000, "512"},
      {"exponent", "1e3", 1000, 1'000'000, "1e3"},
      {"upperNegativeExponent", "1E-3", 1, 1, "1e-3"},
      {"plusExponent", "12e+6", 12'000'000, 12'000'000'000, "12e6"},
      {"fractionWithExponent", "1.5e3", 1500, 1'500'000, "1500"},
      {"subNanoRoundsUp", "0.1n", 1, 1, "1n"},
      {"tinyExponentRoundsUp", "1e-100", 1, 1, "1e-9"},
      {"zeroWithExponent", "0e100", 0, 0, "0"},
      {"manyDigits", "123456789.123456789", 123'456'790, 123'456'789'124, "123456789123456789n"},
      {"negativeNano", "-1n", -1, -1, "-1n"},
      {"canonicalKilo", "1000", 1000, 1'000'000, "1k"},
      {"canonicalNoSuffix", "1500", 1500, 1'500'000, "1500"},
      {"canonicalMilliFromMicro", "1000u", 1, 1, "1m"},
      {"saturatesHigh", "1e100", kMax, kMax, ""},
      {"saturatesLow", "-1e100", std::numeric_limits<int64_t>::min(),
       std::numeric_limits<int64_t>::min(), ""},
      {"int64MaxBytes", "9223372036854775807", kMax, kMax, "9223372036854775807"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name + ": " + c.input);
    const Quantity q = Quantity::parse(c.input);
    EXPECT_EQ(q.value(), c.value);
    EXPECT_EQ(q.milliValue(), c.milli);
    if (!c.canonical.empty()) {
      EXPECT_EQ(q.toString(), c.canonical);
    }
    ASSERT_TRUE(Quantity::tryParse(c.input).has_value());
    EXPECT_EQ(*Quantity::tryParse(c.input), q);
  }
}

struct FormatCase {
  std::string input;
  QuantityFormat format;
};

TEST(QuantityTest, RemembersFormat) {
  const std::vector<FormatCase> cases = {
      {"1", QuantityFormat::kDecimalSI},  {"1k", QuantityFormat::kDecimalSI},
      {"1Ki", QuantityFormat::kBinarySI}, {"1e3", QuantityFormat::kDecimalExponent},
      {"1E", QuantityFormat::kDecimalSI}, {"1E3", QuantityFormat::kDecimalExponent},
      {"1Ei", QuantityFormat::kBinarySI},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.input);
    EXPECT_EQ(Quantity::parse(c.input).format(), c.format);
  }
}

struct ErrorCase {
  std::string input;
  std::string message;  // substring of the QuantityError
};

TEST(QuantityTest, RejectsMalformed) {
  const std::vector<ErrorCase> cases = {
      {"", "quantity \"\": empty string"},
      {"abc", "quantity \"abc\": expected an optionally signed decimal number"},
      {"1.2.3", "quantity \"1.2.3\": unknown suffix \".3\""},
      {"1Kb", "quantity \"1Kb\": unknown suffix \"Kb\""},
      {"1K", "unknown suffix \"K\""},
      {"--1", "quantity \"--1\": expected"},
      {"++1", "expected"},
      {"1e", "quantity \"1e\": unknown suffix \"e\""},
      {"1e+", "unknown suffix \"e+\""},
      {"1e3.5", "unknown suffix \"e3.5\""},
      {" 1", "quantity \" 1\": expected"},
      {"1 ", "unknown suffix \" \""},
      {"12x", "quantity \"12x\": unknown suffix \"x\""},
      {".", "expected"},
      {"-", "expected"},
      {"k", "expected"},
      {"1mi", "unknown suffix \"mi\""},
      {"1Ki3", "unknown suffix \"Ki3\""},
      {"0x10", "unknown suffix \"x10\""},
      {"1,5", "unknown suffix \",5\""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE("input: \"" + c.input + "\"");
    EXPECT_FALSE(Quantity::tryParse(c.input).has_value());
    try {
      (void)Quantity::parse(c.input);
      ADD_FAILURE() << "expected QuantityError";
    } catch (const QuantityError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.message));
    }
  }
}

TEST(QuantityTest, QuantityErrorIsADecodeError) {
  EXPECT_THROW((void)Quantity::parse("12x"), DecodeError);
}

TEST(QuantityTest, ArithmeticIsExact) {
  const Quantity sum = Quantity::parse("0.1") + Quantity::parse("0.2");
  EXPECT_EQ(sum, Quantity::parse("0.3"));
  EXPECT_EQ(sum.milliValue(), 300);
  EXPECT_EQ(sum.toString(), "300m");

  Quantity q = Quantity::parse("1");
  q -= Quantity::parse("1n");
  EXPECT_EQ(q.toString(), "999999999n");
  EXPECT_EQ(q.value(), 1);
  EXPECT_EQ((-Quantity::parse("250m")).milliValue(), -250);
  EXPECT_EQ((Quantity::parse("1Gi") - Quantity::parse("1Gi")).sign(), 0);
}

TEST(QuantityTest, ArithmeticSaturates) {
  const Quantity big = Quantity::parse("1e100");
  EXPECT_EQ(big + big, big);
  EXPECT_EQ((big + big).value(), kMax);
  const Quantity low = -big;
  EXPECT_EQ(low - big, low);
  EXPECT_EQ((low - big).value(), std::numeric_limits<int64_t>::min());
}

TEST(QuantityTest, AddingToZeroAdoptsTheFormat) {
  Quantity total;
  total += Quantity::parse("1Ki");
  total += Quantity::parse("1Ki");
  EXPECT_EQ(total.toString(), "2Ki");
  EXPECT_EQ(total.format(), QuantityFormat::kBinarySI);
}

TEST(QuantityTest, ComparesAmountsAcrossFormats) {
  EXPECT_EQ(Quantity::parse("1Ki"), Quantity::parse("1024"));
  EXPECT_EQ(Quantity::parse("1e3"), Quantity::parse("1k"));
  EXPECT_EQ(Quantity::parse("0.5"), Quantity::parse("500m"));
  EXPECT_LT(Quantity::parse("100m"), Quantity::parse("1"));
  EXPECT_GT(Quantity::parse("1Gi"), Quantity::parse("1G"));
  EXPECT_LT(Quantity::parse("-1"), Quantity());
  EXPECT_NE(Quantity::parse("1n"), Quantity());
}

TEST(QuantityTest, Constructors) {
  EXPECT_EQ(Quantity::fromMilli(1500).toString(), "1500m");
  EXPECT_EQ(Quantity::fromMilli(1500).value(), 2);
  EXPECT_EQ(Quantity::fromValue(2'147'483'648, QuantityFormat::kBinarySI).toString(), "2Gi");
  EXPECT_EQ(Quantity::fromValue(-3).milliValue(), -3000);
  EXPECT_TRUE(Quantity().isZero());
  EXPECT_EQ(Quantity().toString(), "0");
}

struct JsonCase {
  std::string name;
  std::string json;
  int64_t milli;
};

TEST(QuantityTest, DecodesJsonStringsAndNumbers) {
  const std::vector<JsonCase> cases = {
      {"string", R"("500m")", 500},
      {"integer", "2", 2000},
      {"negativeInteger", "-3", -3000},
      {"float", "0.5", 500},
      {"floatTenth", "0.1", 100},
      {"floatExponent", "1.5e3", 1'500'000},
      {"unsigned", "18446744073709551615", kMax},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(decode<Quantity>(nlohmann::json::parse(c.json)).milliValue(), c.milli);
  }
}

TEST(QuantityTest, JsonRejectsOtherTypes) {
  for (const std::string json : {"true", "[1]", R"({"a": 1})", R"("1Kb")"}) {
    SCOPED_TRACE(json);
    EXPECT_THROW((void)decode<Quantity>(nlohmann::json::parse(json)), QuantityError);
  }
}

TEST(QuantityTest, EncodesAsCanonicalString) {
  const nlohmann::json j = Quantity::parse("1.5");
  EXPECT_EQ(j, nlohmann::json("1500m"));
  const nlohmann::json b = Quantity::parse("1048576Ki");
  EXPECT_EQ(b, nlohmann::json("1Gi"));
}

}  // namespace
}  // namespace ksched::api
