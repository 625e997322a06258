// Device selectors in upstream's DRA environment: the table of
// k8s.io/dynamic-resource-allocation/cel/compile_test.go (release 1.36), then what that table
// leaves implicit (absent domains and ids, has(), versions, quantities, error texts, limits).
#include "cel/cel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "cel/value.h"

namespace ksched::cel {
namespace {

using ::testing::HasSubstr;

api::DeviceAttribute intAttr(int64_t v) { return api::DeviceAttribute{v}; }
api::DeviceAttribute boolAttr(bool v) { return api::DeviceAttribute{v}; }
api::DeviceAttribute stringAttr(std::string v) { return api::DeviceAttribute{std::move(v)}; }
api::DeviceAttribute versionAttr(std::string v) {
  return api::DeviceAttribute{api::DeviceAttribute::Version{std::move(v)}};
}
api::DeviceCapacity capacity(std::string_view q) {
  return api::DeviceCapacity{api::Quantity::parse(q), std::nullopt};
}

struct Case {
  std::string name;
  std::string expression;
  std::string driver;
  api::DeviceAttributes attributes;
  api::DeviceCapacities capacity;
  bool allowMultipleAllocations = false;
  std::string compileError;  // substring
  std::string matchError;    // substring
  bool match = false;
  int64_t cost = -1;  // the exact runtime cost, when known
};

struct Outcome {
  std::string compileError;
  EvalResult eval;
};

Outcome run(const Case& c, int64_t limit = kSelectorMaxCost) {
  Outcome o;
  CompileResult compiled = compile(c.expression);
  if (!compiled.program) {
    o.compileError = compiled.error;
    return o;
  }
  DeviceView view{c.driver, &c.attributes, &c.capacity, c.allowMultipleAllocations};
  o.eval = compiled.program->evaluate(view, limit);
  return o;
}

void expectCase(const Case& c) {
  SCOPED_TRACE(c.name + ": " + c.expression);
  const Outcome o = run(c);
  if (!c.compileError.empty()) {
    EXPECT_THAT(o.compileError, HasSubstr(c.compileError));
    return;
  }
  ASSERT_EQ(o.compileError, "");
  if (!c.matchError.empty()) {
    EXPECT_THAT(o.eval.error, HasSubstr(c.matchError));
    return;
  }
  EXPECT_EQ(o.eval.error, "");
  EXPECT_EQ(o.eval.value, c.match);
  if (c.cost >= 0) {
    EXPECT_EQ(o.eval.cost, c.cost);
  }
}

const char* const kDriver = "dra.example.com";

TEST(CelSelectorTest, UpstreamCompileTestTable) {
  api::DeviceAttributes expensive;
  for (int i = 0; i < 32; ++i) {
    const std::string suffix = "-" + std::to_string(i);
    expensive[std::string("dra.example.com/") + std::string(63 - suffix.size(), 'x') + suffix] =
        stringAttr("abc");
  }
  const std::vector<Case> cases = {
      {.name = "true", .expression = "true", .match = true, .cost = 0},
      {.name = "false", .expression = "false", .match = false, .cost = 0},
      {.name = "syntax-error", .expression = "?!", .compileError = "Syntax error"},
      {.name = "type-error",
       .expression = "1",
       .compileError = "must evaluate to bool or the unknown type, not int"},
      {.name = "runtime-error-lookup-identifier",
       .expression =
           R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))",
       .matchError = "no such key: noSuchAttr"},
      {.name = "runtime-error-lookup-map",
       .expression =
           R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
       .matchError = "no such key: noSuchAttr"},
      {.name = "domain-check-negative",
       .expression = R"("no-such-domain" in device.attributes)",
       .match = false,
       .cost = 3},
      {.name = "domain-check-positive",
       .expression = R"("dra.example.com" in device.attributes)",
       .attributes = {{"dra.example.com/something", boolAttr(true)}},
       .match = true,
       .cost = 3},
      {.name = "empty-driver-name",
       .expression = R"(device.driver == "")",
       .match = true,
       .cost = 2},
      {.name = "real-driver-name",
       .expression = R"(device.driver == "dra.example.com")",
       .driver = kDriver,
       .match = true,
       .cost = 4},
      {.name = "driver-name-qualifier",
       .expression = R"(device.attributes["dra.example.com"].name)",
       .driver = kDriver,
       .attributes = {{"name", boolAttr(true)}},
       .match = true,
       .cost = 4},
      {.name = "driver-name-qualifier-map-lookup",
       .expression = R"(device.attributes["dra.example.com"]["name"])",
       .driver = kDriver,
       .attributes = {{"name", boolAttr(true)}},
       .match = true,
       .cost = 4},
      {.name = "bind",
       .expression = R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))",
       .driver = kDriver,
       .attributes = {{"name", boolAttr(true)}},
       .match = true,
       .cost = 15},
      {.name = "qualified-attribute-name",
       .expression = R"(device.attributes["other.example.com"].name)",
       .driver = kDriver,
       .attributes = {{"other.example.com/name", boolAttr(true)}},
       .match = true,
       .cost = 4},
      {.name = "bool",
       .expression = R"(device.attributes["dra.example.com"].name)",
       .driver = kDriver,
       .attributes = {{"name", boolAttr(true)}},
       .match = true,
       .cost = 4},
      {.name = "int",
       .expression = R"(device.attributes["dra.example.com"].name > 0)",
       .driver = kDriver,
       .attributes = {{"name", intAttr(1)}},
       .match = true,
       .cost = 5},
      {.name = "string",
       .expression = R"(device.attributes["dra.example.com"].name == "fish")",
       .driver = kDriver,
       .attributes = {{"name", stringAttr("fish")}},
       .match = true,
       .cost = 5},
      {.name = "includes-function-undeclared-error",
       .expression = R"(device.attributes["dra.example.com"].name.includes("fish"))",
       .driver = kDriver,
       .compileError = "undeclared reference to 'includes'"},
      {.name = "quantity",
       .expression = R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       .driver = kDriver,
       .capacity = {{"name", capacity("1Mi")}},
       .match = true,
       .cost = 6},
      {.name = "check-positive",
       .expression =
           R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       .driver = kDriver,
       .capacity = {{"name", capacity("1Mi")}},
       .match = true,
       .cost = 10},
      {.name = "check-negative",
       .expression =
           R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       .match = true,
       .cost = 5},
      {.name = "all",
       .expression = R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)",
       .driver = kDriver,
       .attributes = {{"bool", boolAttr(true)},
                      {"int", intAttr(1)},
                      {"string", stringAttr("fish")},
                      {"version", versionAttr("1.0.0")}},
       .capacity = {{"quantity", capacity("1Mi")}},
       .match = true,
       .cost = 52},
      {.name = "many",
       .expression =
           R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
       .driver = kDriver,
       .attributes = {{"a", boolAttr(true)}, {"b", boolAttr(true)}, {"c", boolAttr(true)}},
       .match = true,
       .cost = 12},
      {.name = "check_attribute_domains",
       .expression = R"(device.attributes.exists_one(x, x == "dra.example.com"))",
       .driver = kDriver,
       .attributes = {{"services", stringAttr("some_example_value")}},
       .match = true},
      {.name = "check_attribute_ids",
       .expression = R"(device.attributes["dra.example.com"].exists_one(x, x == "services"))",
       .driver = kDriver,
       .attributes = {{"services", stringAttr("some_example_value")}},
       .match = true},
      {.name = "split_attribute",
       .expression =
           R"(device.attributes["dra.example.com"].services.split("example").size() >= 2)",
       .driver = kDriver,
       .attributes = {{"services", stringAttr("some_example_value")}},
       .match = true},
      {.name = "regexp_attribute",
       .expression = R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))",
       .driver = kDriver,
       .attributes = {{"services", stringAttr("asymetric")}},
       .match = true},
      {.name = "check_capacity_domains",
       .expression = R"(device.capacity.exists_one(x, x == "dra.example.com"))",
       .driver = kDriver,
       .capacity = {{"memory", capacity("1Mi")}},
       .match = true},
      {.name = "check_capacity_ids",
       .expression = R"(device.capacity["dra.example.com"].exists_one(x, x == "memory"))",
       .driver = kDriver,
       .capacity = {{"memory", capacity("1Mi")}},
       .match = true},
      {.name = "expensive",
       .expression =
           "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, "
           "3, 4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, "
           "5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, "
           "7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
       .driver = kDriver,
       .attributes = expensive,
       .matchError = "actual cost limit exceeded"},
      {.name = "allow_multiple_allocations",
       .expression = "device.allowMultipleAllocations == true",
       .driver = kDriver,
       .allowMultipleAllocations = true,
       .match = true,
       .cost = 3},
      {.name = "allow_multiple_allocations_default",
       .expression = "device.allowMultipleAllocations == false",
       .driver = kDriver,
       .match = true,
       .cost = 3},
  };
  for (const Case& c : cases) expectCase(c);
}

// TestInterrupt's expression, run to completion over 1000 attributes.
TEST(CelSelectorTest, MapFilterExistsOverManyAttributes) {
  Case c{
      .name = "interrupt",
      .expression =
          R"(device.attributes["dra.example.com"].map(key, device.attributes["dra.example.com"][key] * 20).filter(e, e > 50).exists(e, e == 60))"};
  for (int64_t i = 0; i < 1000; ++i) {
    c.attributes["dra.example.com/attr" + std::to_string(i)] = intAttr(i);
  }
  const Outcome o = run(c);
  ASSERT_EQ(o.compileError, "");
  EXPECT_EQ(o.eval.error, "");
  EXPECT_TRUE(o.eval.value);
}

TEST(CelSelectorTest, AbsentDomainsAndIds) {
  const api::DeviceAttributes attrs = {{"model", stringAttr("a100")},
                                       {"other.example.com/zone", stringAttr("a")}};
  const std::vector<Case> cases = {
      // An absent domain is an empty map (upstream's map with a default).
      {.name = "absent domain is empty",
       .expression = R"(device.attributes["nope.example.com"].size() == 0)",
       .match = true},
      {.name = "absent domain not in",
       .expression = R"("nope.example.com" in device.attributes)",
       .match = false},
      {.name = "absent id errors",
       .expression = R"(device.attributes["dra.example.com"].memory == 1)",
       .matchError = "no such key: memory"},
      {.name = "absent id in absent domain errors",
       .expression = R"(device.attributes["nope.example.com"].model == "a100")",
       .matchError = "no such key: model"},
      // has() of a domain is always true: the map's default is found.
      {.name = "has absent domain", .expression = R"(has(device.attributes.nope))", .match = true},
      {.name = "has absent id",
       .expression = R"(has(device.attributes["dra.example.com"].memory))"},
      {.name = "has id",
       .expression = R"(has(device.attributes["dra.example.com"].model))",
       .match = true},
      {.name = "has id of another domain",
       .expression = R"(has(device.attributes["other.example.com"].zone))",
       .match = true},
      {.name = "unqualified name in the driver's domain",
       .expression = R"(device.attributes["dra.example.com"].model == "a100")",
       .match = true},
      {.name = "unqualified name not in another domain",
       .expression = R"("model" in device.attributes["other.example.com"])",
       .match = false},
      {.name = "domains",
       .expression =
           R"(device.attributes.all(d, d in ["dra.example.com", "other.example.com"]) && device.attributes.size() == 2)",
       .match = true},
      {.name = "ids of a domain",
       .expression = R"(device.attributes["dra.example.com"].map(k, k) == ["model"])",
       .match = true},
      // Found by fuzzing (tests/fuzz/regressions/cel/empty-domain-memcmp): the empty domain.
      {.name = "empty domain",
       .expression = R"(device.attributes[""].size() == 0 && !("" in device.attributes))",
       .match = true},
      {.name = "absent capacity domain",
       .expression = R"(device.capacity["dra.example.com"].size() == 0)",
       .match = true},
      {.name = "error absorbed by ||",
       .expression = R"(device.attributes["dra.example.com"].memory > 1 || true)",
       .match = true},
      {.name = "error absorbed by &&",
       .expression = R"(false && device.attributes["dra.example.com"].memory > 1)",
       .match = false},
      {.name = "error absorbed by && from the right",
       .expression = R"(device.attributes["dra.example.com"].memory > 1 && false)",
       .match = false},
      {.name = "error kept by && when the other side is true",
       .expression = R"(device.attributes["dra.example.com"].memory > 1 && true)",
       .matchError = "no such key: memory"},
  };
  for (Case c : cases) {
    c.driver = kDriver;
    c.attributes = attrs;
    expectCase(c);
  }
}

TEST(CelSelectorTest, VersionsAndQuantities) {
  const api::DeviceAttributes attrs = {{"driverVersion", versionAttr("1.2.3-rc.1+build.5")},
                                       {"cores", intAttr(4)}};
  const api::DeviceCapacities caps = {{"memory", capacity("80Gi")}, {"slices", capacity("7")}};
  const std::vector<Case> cases = {
      {.name = "version greater",
       .expression =
           R"(device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.2.2")))",
       .match = true},
      {.name = "pre-release is less than the release",
       .expression =
           R"(device.attributes["dra.example.com"].driverVersion.isLessThan(semver("1.2.3")))",
       .match = true},
      {.name = "compareTo ignores build metadata",
       .expression =
           R"(device.attributes["dra.example.com"].driverVersion.compareTo(semver("1.2.3-rc.1")) == 0)",
       .match = true},
      {.name = "version equality",
       .expression =
           R"(device.attributes["dra.example.com"].driverVersion == semver("1.2.3-rc.1"))",
       .match = true},
      {.name = "major minor patch",
       .expression =
           R"(device.attributes["dra.example.com"].driverVersion.major() == 1 && device.attributes["dra.example.com"].driverVersion.minor() == 2 && device.attributes["dra.example.com"].driverVersion.patch() == 3)",
       .match = true},
      {.name = "numeric pre-releases sort numerically",
       .expression = R"(semver("1.0.0-rc.2").isLessThan(semver("1.0.0-rc.10")))",
       .match = true},
      {.name = "normalize",
       .expression = R"(semver("v1.2", true) == semver("1.2.0") && isSemver("01.1.1", true))",
       .match = true},
      {.name = "isSemver strict", .expression = R"(isSemver("v1.0.0"))", .match = false},
      {.name = "semver parse error",
       .expression = R"(semver("1.0") == semver("1.0.0"))",
       .matchError = "No Major.Minor.Patch elements found"},
      {.name = "versions have no < operator",
       .expression = R"(semver("1.0.0") < semver("2.0.0"))",
       .compileError = "found no matching overload for '_<_' applied to '(kubernetes.Semver, "
                       "kubernetes.Semver)'"},
      {.name = "quantity compare",
       .expression =
           R"(device.capacity["dra.example.com"].memory.compareTo(quantity("80Gi")) == 0)",
       .match = true},
      {.name = "quantity asInteger",
       .expression = R"(device.capacity["dra.example.com"].slices.asInteger() == 7)",
       .match = true},
      {.name = "quantity add sub",
       .expression =
           R"(device.capacity["dra.example.com"].slices.add(3).sub(quantity("2")) == quantity("8"))",
       .match = true},
      {.name = "quantity sign is a global function",
       .expression = R"(sign(quantity("-1m")) == -1)",
       .match = true},
      {.name = "quantity member sign does not exist",
       .expression = R"(quantity("1").sign() == 1)",
       .compileError = "found no matching overload for 'sign' applied to 'kubernetes.Quantity.()'"},
      {.name = "quantity isInteger",
       .expression = R"(quantity("1500m").isInteger() || !quantity("2").isInteger())",
       .match = false},
      {.name = "quantity asApproximateFloat",
       .expression = R"(quantity("50.703k").asApproximateFloat() == 50703.0)",
       .match = true},
      {.name = "quantity asInteger error",
       .expression = R"(quantity("1500m").asInteger() == 1)",
       .matchError = "cannot convert value to integer"},
      {.name = "quantity parse error",
       .expression = R"(quantity("10Mo").isInteger())",
       .matchError = "quantities must match the regular expression"},
      {.name = "quantity suffix error",
       .expression = R"(quantity("10Mm").isInteger())",
       .matchError = "unable to parse quantity's suffix"},
      {.name = "isQuantity",
       .expression = R"(isQuantity("20Mi") && !isQuantity("20Mo"))",
       .match = true},
      {.name = "int attribute compared with a double",
       .expression = R"(device.attributes["dra.example.com"].cores > 3.5)",
       .match = true},
  };
  for (Case c : cases) {
    c.driver = kDriver;
    c.attributes = attrs;
    c.capacity = caps;
    expectCase(c);
  }
}

TEST(CelSelectorTest, WithoutADriverUnqualifiedNamesAreInTheEmptyDomain) {
  Case c{
      .name = "no driver",
      .expression = R"(device.attributes[""].model == "a100" && device.attributes[""].size() == 1)",
      .attributes = {{"model", stringAttr("a100")}, {"x.example.com/zone", stringAttr("a")}},
      .match = true};
  expectCase(c);
}

TEST(CelSelectorTest, AnInvalidVersionAttributeFailsEveryExpression) {
  Case c{.name = "bad version",
         .expression = "true",
         .driver = kDriver,
         .attributes = {{"v", versionAttr("1.0")}},
         .matchError = "attribute v: parse semantic version: No Major.Minor.Patch elements found"};
  expectCase(c);
}

TEST(CelSelectorTest, ErrorTexts) {
  const std::vector<Case> cases = {
      {.name = "result not a bool",
       .expression = R"(device.attributes["dra.example.com"].model)",
       .matchError = "CEL result of type string could not be converted to bool: unsupported "
                     "native conversion from string to 'bool'"},
      {.name = "int result",
       .expression = R"(device.attributes["dra.example.com"].cores)",
       .matchError = "CEL result of type int could not be converted to bool"},
      {.name = "list result",
       .expression = "[true]",
       .compileError = "must evaluate to bool or the unknown type, not list(bool)"},
      {.name = "dyn result is refused",
       .expression = R"(device.attributes["dra.example.com"].model.x)",
       .compileError = "must evaluate to bool or the unknown type, not dyn"},
      {.name = "undeclared variable",
       .expression = "pod.name == 'x'",
       .compileError = "ERROR: <input>:1:1: undeclared reference to 'pod' (in container '')\n"
                       " | pod.name == 'x'\n"
                       " | ^"},
      {.name = "undefined field",
       .expression = "device.name == 'x'",
       .compileError = "undefined field 'name'"},
      {.name = "type mismatch",
       .expression = "device.driver == 1",
       .compileError = "found no matching overload for '_==_' applied to '(string, int)'"},
      {.name = "attribute not iterable",
       .expression = R"(device.attributes["dra.example.com"].model.exists(x, x == 1))",
       .compileError = "expression of type 'any' cannot be range of a comprehension"},
      {.name = "mixed list literal",
       .expression = R"(device.driver in ["a", 1])",
       .compileError = "expected type 'string' but found 'int'"},
      {.name = "invalid regex literal",
       .expression = R"(device.driver.matches("["))",
       .compileError = "invalid matches argument"},
      {.name = "division by zero",
       .expression = R"(device.attributes["dra.example.com"].cores / 0 == 1)",
       .matchError = "division by zero"},
      {.name = "overflow",
       .expression = "9223372036854775807 + device.attributes[\"dra.example.com\"].cores > 0",
       .matchError = "integer overflow"},
      {.name = "reserved word", .expression = "if == 1", .compileError = "reserved identifier: if"},
      {.name = "recursion limit",
       .expression = std::string(300, '(') + "true" + std::string(300, ')'),
       .compileError = "expression recursion limit exceeded: 250"},
  };
  for (Case c : cases) {
    c.driver = kDriver;
    c.attributes = {{"model", stringAttr("a100")}, {"cores", intAttr(4)}};
    expectCase(c);
  }
}

// Found by fuzzing (tests/fuzz/regressions/cel/bytes-literal-not-utf8): error texts go into
// events and conditions as JSON, so bytes of the input that are not UTF-8 are replaced.
TEST(CelSelectorTest, CompileErrorsAreUtf8) {
  for (const std::string& e : {std::string("b\"\x81\" )"), std::string("device.driver == \"\xff\""),
                               std::string("\xc3 == 1")}) {
    CompileResult r = compile(e);
    EXPECT_EQ(r.program, nullptr);
    EXPECT_TRUE(validUtf8(r.error)) << r.error;
    EXPECT_THAT(r.error, HasSubstr("\xef\xbf\xbd"));
  }
}

TEST(CelSelectorTest, UnsupportedConstructsAreCompileErrors) {
  const std::vector<std::string> expressions = {
      R"(device.attributes.?foo.hasValue())",
      R"(device.attributes["dra.example.com"][?"model"].hasValue())",
      R"(type(device.driver) == string)",
      R"(duration("1s") > duration("0s"))",
      R"(timestamp("2024-01-01T00:00:00Z") > timestamp("2023-01-01T00:00:00Z"))",
      R"([1, 2].all(i, v, v > 0))",
      R"([1, 2].transformList(i, v, v * 2) == [2, 4])",
      R"([1, 2].sortBy(x, -x) == [2, 1])",
      R"(sets.contains([1, 2], [1]))",
      R"([1, 2].isSorted())",
      R"(optional.of(1).hasValue())",
      R"(ip("10.0.0.1").family() == 4)",
      R"("a".format([]) == "a")",
  };
  for (const std::string& e : expressions) {
    SCOPED_TRACE(e);
    CompileResult r = compile(e);
    EXPECT_EQ(r.program, nullptr);
    EXPECT_THAT(r.error, HasSubstr("unsupported: "));
  }
}

TEST(CelSelectorTest, StringFunctions) {
  const std::vector<Case> cases = {
      {.name = "lowerAscii", .expression = R"("ÀBC".lowerAscii() == "Àbc")", .match = true},
      {.name = "upperAscii", .expression = R"("abc".upperAscii() == "ABC")", .match = true},
      {.name = "contains startsWith endsWith",
       .expression =
           R"(device.driver.contains("example") && device.driver.startsWith("dra.") && device.driver.endsWith(".com"))",
       .match = true},
      {.name = "size counts code points", .expression = R"(size("日本") == 2)", .match = true},
      {.name = "substring",
       .expression = R"("dra.example.com".substring(4, 11) == "example")",
       .match = true},
      {.name = "indexOf",
       .expression = R"("abcabc".indexOf("c", 3) == 5 && "abc".lastIndexOf("b") == 1)",
       .match = true},
      {.name = "replace split join",
       .expression = R"("a-b-c".replace("-", ".").split(".").join("/") == "a/b/c")",
       .match = true},
      {.name = "trim charAt",
       .expression = R"(" x ".trim() == "x" && "xyz".charAt(1) == "y")",
       .match = true},
      {.name = "find findAll",
       .expression =
           R"("gpu-12-a".find("[0-9]+") == "12" && "a1b22c333".findAll("[0-9]+") == ["1", "22", "333"])",
       .match = true},
      {.name = "conversions",
       .expression =
           R"(int("42") == 42 && string(1.5) == "1.5" && uint(3) == 3u && double("1e3") == 1000.0 && bool("true"))",
       .match = true},
      {.name = "substring out of range",
       .expression = R"("abc".substring(5) == "")",
       .matchError = "index out of range: 5"},
  };
  for (Case c : cases) {
    c.driver = kDriver;
    expectCase(c);
  }
}

TEST(CelSelectorTest, CostLimit) {
  Case c{.name = "limit",
         .expression = R"(device.attributes["dra.example.com"].model == "a100")",
         .driver = kDriver,
         .attributes = {{"model", stringAttr("a100")}}};
  // The expression costs 5: four selections and a short comparison.
  Outcome full = run(c, 5);
  EXPECT_EQ(full.eval.error, "");
  EXPECT_TRUE(full.eval.value);
  EXPECT_EQ(full.eval.cost, 5);
  Outcome cut = run(c, 4);
  EXPECT_EQ(cut.eval.error, "operation cancelled: actual cost limit exceeded");
  EXPECT_FALSE(cut.eval.value);
}

TEST(CelSelectorTest, ExpressionLength) {
  std::string e = "true";
  while (e.size() + 8 <= kSelectorMaxLength) e += " && true";
  EXPECT_NE(compile(e).program, nullptr) << e.size();
  e += std::string(kSelectorMaxLength + 1 - e.size(), ' ');
  CompileResult r = compile(e);
  EXPECT_EQ(r.program, nullptr);
  EXPECT_EQ(r.error, "Too long: may not be more than 10240 bytes");
}

TEST(CelSelectorTest, CacheCompilesOnce) {
  Cache cache;
  CompileResult a = cache.get(R"(device.driver == "x")");
  CompileResult b = cache.get(R"(device.driver == "x")");
  ASSERT_NE(a.program, nullptr);
  EXPECT_EQ(a.program, b.program);
  CompileResult bad = cache.get("device.driver ==");
  EXPECT_EQ(bad.program, nullptr);
  EXPECT_THAT(bad.error, HasSubstr("compilation failed: ERROR: <input>:1:17: Syntax error"));
}

TEST(CelSelectorTest, ProgramsAreSharedBetweenThreads) {
  CompileResult r = compile(
      R"(device.attributes["dra.example.com"].model.matches("^a1") && device.attributes["dra.example.com"].map(k, k).size() == 2)");
  ASSERT_NE(r.program, nullptr) << r.error;
  const api::DeviceAttributes yes = {{"model", stringAttr("a100")}, {"x", intAttr(1)}};
  const api::DeviceAttributes no = {{"model", stringAttr("h100")}, {"x", intAttr(1)}};
  const api::DeviceCapacities caps;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 2000; ++i) {
        const bool match = (i + t) % 2 == 0;
        DeviceView view{kDriver, match ? &yes : &no, &caps, false};
        EvalResult e = r.program->evaluate(view);
        if (!e.ok() || e.value != match) ++wrong;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace ksched::cel
