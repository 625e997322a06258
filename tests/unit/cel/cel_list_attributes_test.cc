// List attributes in device selectors (DRAListTypeAttributes, KEP 5491): a list attribute is a
// CEL list of its element type (ints, bools, strings, semver versions), whichever way the gate
// is, as upstream's selector library converts every attribute a device has; the gate adds
// `includes()`, which holds for a list containing the value and a scalar equal to it, and makes
// the attributes' type `dyn`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cel/cel.h"

namespace ksched::cel {
namespace {

using ::testing::HasSubstr;
using A = api::DeviceAttribute;

const char* const kDriver = "cpu.example.com";

struct Case {
  std::string expression;
  bool match = false;
  std::string matchError;    // substring
  std::string compileError;  // substring
};

// A CPU device with kubernetes.io's standard list attributes and a few of every kind.
api::DeviceAttributes cpuAttributes() {
  return {
      {"resource.kubernetes.io/numaNode", A{A::Ints{0, 1}}},
      {"resource.kubernetes.io/pcieRoot", A{A::Strings{"pci0000:00", "pci0000:01"}}},
      {"smt", A{A::Bools{true, false}}},
      {"firmware", A{A::Versions{A::Version{"1.2.0"}, A::Version{"2.0.0-rc.1"}}}},
      {"socket", A{int64_t{0}}},
      {"model", A{std::string("epyc")}},
  };
}

void expectCases(const std::vector<Case>& cases, Features features) {
  const api::DeviceAttributes attributes = cpuAttributes();
  const api::DeviceCapacities capacity;
  const DeviceView view{kDriver, &attributes, &capacity, false};
  for (const Case& c : cases) {
    SCOPED_TRACE(c.expression);
    const CompileResult compiled = compile(c.expression, features);
    if (!c.compileError.empty()) {
      EXPECT_THAT(compiled.error, HasSubstr(c.compileError));
      continue;
    }
    ASSERT_TRUE(compiled.program) << compiled.error;
    const EvalResult r = compiled.program->evaluate(view);
    if (!c.matchError.empty()) {
      EXPECT_THAT(r.error, HasSubstr(c.matchError));
      continue;
    }
    EXPECT_EQ(r.error, "");
    EXPECT_EQ(r.value, c.match);
  }
}

// What holds with and without the gate: the list is there, as a list.
const std::vector<Case>& listCases() {
  static const std::vector<Case> cases = {
      {R"(1 in device.attributes["resource.kubernetes.io"].numaNode)", true},
      {R"(2 in device.attributes["resource.kubernetes.io"].numaNode)", false},
      {R"(device.attributes["resource.kubernetes.io"].numaNode == [0, 1])", true},
      {R"(device.attributes["resource.kubernetes.io"].numaNode == [1, 0])", false},
      {R"(size(device.attributes["resource.kubernetes.io"].numaNode) == 2)", true},
      {R"(device.attributes["resource.kubernetes.io"].numaNode[1] == 1)", true},
      {R"("pci0000:01" in device.attributes["resource.kubernetes.io"].pcieRoot)", true},
      {R"(false in device.attributes["cpu.example.com"].smt)", true},
      {R"(device.attributes["cpu.example.com"].firmware[0] == semver("1.2.0"))", true},
      {R"(device.attributes["cpu.example.com"].firmware[1].isLessThan(semver("2.0.0")))", true},
      // A list compared with a scalar is unequal, not an error (CEL's heterogeneous equality).
      {R"(device.attributes["resource.kubernetes.io"].numaNode == 0)", false},
      {R"(device.attributes["resource.kubernetes.io"].numaNode[2] == 1)", false,
       "index out of bounds"},
      // The scalars are as before.
      {R"(device.attributes["cpu.example.com"].socket == 0)", true},
      {R"(device.attributes["cpu.example.com"].model == "epyc")", true},
  };
  return cases;
}

// The macros iterate a list attribute only when its type is dyn, that is with the gate.
const std::vector<Case>& macroCases() {
  static const std::vector<Case> cases = {
      {R"(device.attributes["resource.kubernetes.io"].numaNode.exists(n, n > 0))", true},
      {R"(device.attributes["resource.kubernetes.io"].numaNode.all(n, n > 0))", false},
      {R"(device.attributes["resource.kubernetes.io"].pcieRoot.exists(r, r.startsWith("pci")))",
       true},
      {R"(device.attributes["cpu.example.com"].firmware.exists(v,
            v.isGreaterThan(semver("1.9.0"))))",
       true},
      {R"(device.attributes["cpu.example.com"].firmware.all(v, v.major() >= 1))", true},
  };
  return cases;
}

TEST(CelListAttributes, ListsAreCelListsWithTheGate) {
  expectCases(listCases(), Features{.listTypeAttributes = true});
  expectCases(macroCases(), Features{.listTypeAttributes = true});
}

TEST(CelListAttributes, ListsAreCelListsWithoutTheGate) {
  expectCases(listCases(), Features{});
  std::vector<Case> refused = macroCases();
  for (Case& c : refused) {
    c.compileError =
        "expression of type 'any' cannot be range of a comprehension (must be list, map, or "
        "dynamic)";
  }
  expectCases(refused, Features{});
}

TEST(CelListAttributes, IncludesWithTheGate) {
  expectCases(
      {
          {R"(device.attributes["resource.kubernetes.io"].numaNode.includes(1))", true},
          {R"(device.attributes["resource.kubernetes.io"].numaNode.includes(7))", false},
          {R"(device.attributes["resource.kubernetes.io"].pcieRoot.includes("pci0000:00"))", true},
          {R"(device.attributes["cpu.example.com"].smt.includes(true))", true},
          {R"(device.attributes["cpu.example.com"].firmware.includes(semver("2.0.0-rc.1")))", true},
          // A scalar includes what it equals: selectors keep working when a driver turns a
          // scalar into a list.
          {R"(device.attributes["cpu.example.com"].socket.includes(0))", true},
          {R"(device.attributes["cpu.example.com"].socket.includes(1))", false},
          {R"(device.attributes["cpu.example.com"].model.includes("epyc"))", true},
          // Another type is no match.
          {R"(device.attributes["resource.kubernetes.io"].numaNode.includes("1"))", false},
          {R"(device.attributes["cpu.example.com"].firmware.includes("1.2.0"))", false},
          {R"(device.attributes["cpu.example.com"].missing.includes(1))", false,
           "no such key: missing"},
      },
      Features{.listTypeAttributes = true});
}

TEST(CelListAttributes, IncludesOnLongLists) {
  std::string list = "[";
  for (int i = 0; i < 49; ++i) list += (i > 0 ? ", " : "") + std::to_string(i);
  list += "]";
  expectCases({{list + ".includes(3)", true},
               {list + ".includes(48)", false,
                "'includes' function cannot be applied to lists longer than 48 values"}},
              Features{.listTypeAttributes = true});
}

TEST(CelListAttributes, NoIncludesWithoutTheGate) {
  expectCases({{R"(device.attributes["resource.kubernetes.io"].numaNode.includes(1))", false, "",
                "undeclared reference to 'includes' (in container '')"}},
              Features{});
}

// The attribute's type is the unknown one: "any", and "dyn" with the gate (so a selector that
// is only an attribute, or dyn(), may yield the unknown type).
TEST(CelListAttributes, TheUnknownTypeFollowsTheGate) {
  expectCases({{R"(dyn(true))", true}}, Features{.listTypeAttributes = true});
  expectCases({{R"(dyn(true))", false, "", "must evaluate to bool or the unknown type, not dyn"}},
              Features{});
  expectCases({{R"(device.attributes["cpu.example.com"].missing)", false, "no such key"}},
              Features{.listTypeAttributes = true});
}

// As a scalar version does, a list item that is not semver fails every selector on the device.
TEST(CelListAttributes, ABadVersionInAListFailsTheDevice) {
  const api::DeviceAttributes attributes = {
      {"firmware", A{A::Versions{A::Version{"1.0.0"}, A::Version{"01.0"}}}}};
  const api::DeviceCapacities capacity;
  const DeviceView view{kDriver, &attributes, &capacity, false};
  const CompileResult compiled = compile("true", Features{.listTypeAttributes = true});
  ASSERT_TRUE(compiled.program);
  EXPECT_THAT(compiled.program->evaluate(view).error,
              HasSubstr("attribute firmware: parse semantic version: "));
}

TEST(CelListAttributes, TheCacheKeepsItsFeatures) {
  Cache with(Features{.listTypeAttributes = true});
  Cache without;
  const std::string e = R"(device.attributes["cpu.example.com"].socket.includes(0))";
  EXPECT_TRUE(with.get(e).program);
  EXPECT_FALSE(without.get(e).program);
}

}  // namespace
}  // namespace ksched::cel
