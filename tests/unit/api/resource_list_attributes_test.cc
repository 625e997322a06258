// The list forms of a device attribute (DRAListTypeAttributes, KEP 5491: `ints`, `bools`,
// `strings`, `versions`), decoded in every served version; the examples are the KEP's and
// kubernetes.io's (a GPU's supported models, a CPU's NUMA nodes and PCIe roots). The gate only
// matters to the allocator: decoding always reads them, so a slice is never dropped for a list.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/resource.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using A = DeviceAttribute;

// A slice of `version` whose one device has `attributes` (in v1beta1 under "basic").
std::string slice(std::string_view version, std::string_view attributes) {
  const std::string device = std::string(R"("attributes": )") + std::string(attributes);
  const std::string fields =
      version == "resource.k8s.io/v1beta1" ? std::string(R"("basic": {)") + device + "}" : device;
  return std::string(R"({"apiVersion": ")") + std::string(version) +
         R"(", "kind": "ResourceSlice", "metadata": {"name": "s"}, "spec": {"driver": )"
         R"("cpu.example.com", "nodeName": "n1", "pool": {"name": "p", "resourceSliceCount": 1},)"
         R"( "devices": [{"name": "cpu-0", )" +
         fields + "}]}}";
}

constexpr std::string_view kVersions[] = {"resource.k8s.io/v1", "resource.k8s.io/v1beta2",
                                          "resource.k8s.io/v1beta1"};

TEST(ResourceSliceListAttributes, EachListFormInEachVersion) {
  struct Case {
    std::string json;
    A want;
  };
  const Case cases[] = {
      {R"({"ints": [0, 1]})", A{A::Ints{0, 1}}},
      {R"({"ints": [-9223372036854775808, 9223372036854775807]})",
       A{A::Ints{INT64_MIN, INT64_MAX}}},
      {R"({"bools": [true, false, true]})", A{A::Bools{true, false, true}}},
      {R"({"strings": ["pci0000:01", "pci0000:02"]})", A{A::Strings{"pci0000:01", "pci0000:02"}}},
      {R"({"versions": ["1.0.0", "1.0.1-rc.1"]})",
       A{A::Versions{A::Version{"1.0.0"}, A::Version{"1.0.1-rc.1"}}}},
      // One item is still a list; a null scalar beside it is absent.
      {R"({"ints": [3], "int": null})", A{A::Ints{3}}},
  };
  for (std::string_view version : kVersions) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(version) + " " + c.json);
      const auto s =
          testing::decodeString<ResourceSlice>(slice(version, R"({"numa": )" + c.json + "}"));
      ASSERT_EQ(s.spec.devices.size(), 1u);
      const A& got = s.spec.devices[0].attributes.at("numa");
      EXPECT_EQ(got, c.want);
      EXPECT_TRUE(got.isList());
    }
  }
}

TEST(ResourceSliceListAttributes, ScalarsAreNoLists) {
  for (const char* json :
       {R"({"int": 1})", R"({"bool": true})", R"({"string": "a"})", R"({"version": "1.0.0"})"}) {
    const auto s = testing::decodeString<ResourceSlice>(
        slice("resource.k8s.io/v1", std::string(R"({"a": )") + json + "}"));
    EXPECT_FALSE(s.spec.devices[0].attributes.at("a").isList()) << json;
  }
}

// A list is one field among the eight: exactly one must be set, whichever kind.
TEST(ResourceSliceListAttributes, ExactlyOneOfTheEight) {
  const std::string exactlyOne =
      "exactly one of int, bool, string, version, ints, bools, strings, versions must be set";
  for (const char* json : {R"({"ints": [1], "strings": ["a"]})", R"({"int": 1, "ints": [1]})",
                           R"({"bools": [true], "versions": ["1.0.0"]})", R"({})"}) {
    for (std::string_view version : kVersions) {
      const std::string where = version == "resource.k8s.io/v1beta1"
                                    ? "spec.devices[0].basic.attributes[numa]: "
                                    : "spec.devices[0].attributes[numa]: ";
      EXPECT_EQ(testing::decodeError<ResourceSlice>(
                    slice(version, std::string(R"({"numa": )") + json + "}")),
                where + exactlyOne)
          << version << " " << json;
    }
  }
}

// A malformed list fails the slice as a malformed scalar does, naming the list and the item.
TEST(ResourceSliceListAttributes, MalformedListsNameTheItem) {
  struct Case {
    std::string json;
    std::string error;
  };
  const Case cases[] = {
      {R"({"ints": [1, "2"]})", "ints[1]: expected an integer, got string"},
      {R"({"ints": [1.5]})", "ints[0]: expected an integer, got 1.5"},
      {R"({"ints": [9223372036854775808]})",
       "ints[0]: expected an integer in range, got 9223372036854775808"},
      {R"({"bools": [true, 1]})", "bools[1]: expected a boolean, got number"},
      {R"({"strings": ["a", null]})", "strings[1]: expected a string, got null"},
      {R"({"versions": [1]})", "versions[0]: expected a string, got number"},
      {R"({"ints": 1})", "ints: expected an array, got number"},
      {R"({"strings": "a"})", "strings: expected an array, got string"},
      {R"({"bools": {}})", "bools: expected an array, got object"},
      // upstream's validation: a list attribute is never empty.
      {R"({"ints": []})", "ints: must not be empty"},
      {R"({"versions": []})", "versions: must not be empty"},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(testing::decodeError<ResourceSlice>(
                  slice("resource.k8s.io/v1", std::string(R"({"numa": )") + c.json + "}")),
              "spec.devices[0].attributes[numa]." + c.error)
        << c.json;
  }
  EXPECT_EQ(testing::decodeError<ResourceSlice>(
                slice("resource.k8s.io/v1beta1", R"({"numa": {"ints": [true]}})")),
            "spec.devices[0].basic.attributes[numa].ints[0]: expected an integer, got boolean");
}

// kubernetes.io's standard attributes: a CPU device next to scalars of other devices, as a LIST
// page serves it (no apiVersion on the item).
TEST(ResourceSliceListAttributes, ListItemWithoutApiVersion) {
  const nlohmann::json item = nlohmann::json::parse(R"({
    "metadata": {"name": "cpus"},
    "spec": {"driver": "cpu.example.com", "nodeName": "n1",
             "pool": {"name": "n1", "resourceSliceCount": 1},
             "devices": [
               {"name": "cpu-0", "basic": {"attributes": {
                  "resource.kubernetes.io/numaNode": {"ints": [0, 1]},
                  "resource.kubernetes.io/pcieRoot": {"strings": ["pci0000:00", "pci0000:01"]},
                  "socket": {"int": 0}}}},
               {"name": "cpu-1", "basic": {"attributes": {
                  "resource.kubernetes.io/numaNode": {"int": 2}}}}]}})");
  ResourceSlice s;
  decodeResource(item, "resource.k8s.io/v1beta1", s);
  ASSERT_EQ(s.spec.devices.size(), 2u);
  EXPECT_EQ(s.spec.devices[0].attributes.at("resource.kubernetes.io/numaNode"), (A{A::Ints{0, 1}}));
  EXPECT_EQ(s.spec.devices[0].attributes.at("resource.kubernetes.io/pcieRoot"),
            (A{A::Strings{"pci0000:00", "pci0000:01"}}));
  EXPECT_EQ(s.spec.devices[0].attributes.at("socket"), A{int64_t{0}});
  EXPECT_EQ(s.spec.devices[1].attributes.at("resource.kubernetes.io/numaNode"), A{int64_t{2}});
}

}  // namespace
}  // namespace ksched::api
