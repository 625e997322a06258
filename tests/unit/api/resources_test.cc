#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <ksched/api/resources.h>

#include "tests/support/api_test_util.h"

namespace ksched::api {
namespace {

using testing::decodeError;
using testing::decodeString;
using ::testing::HasSubstr;

ResourceList list(std::initializer_list<std::pair<const char*, const char*>> entries) {
  ResourceList out;
  for (const auto& [name, q] : entries) out.emplace(name, Quantity::parse(q));
  return out;
}

struct NameCase {
  std::string name;
  bool native;
  bool extended;
  bool hugePage;
  bool scalar;
};

TEST(ResourceNamesTest, Classifies) {
  const std::vector<NameCase> cases = {
      {"cpu", true, false, false, false},
      {"memory", true, false, false, false},
      {"ephemeral-storage", true, false, false, false},
      {"hugepages-2Mi", true, false, true, true},
      {"attachable-volumes-aws-ebs", true, false, false, true},
      {"example.com/gpu", false, true, false, true},
      {"nvidia.com/gpu", false, true, false, true},
      {"example.com/Gpu_1.x", false, true, false, true},
      {"kubernetes.io/batch-slots", true, false, false, true},
      {"foo.kubernetes.io/thing", true, false, false, true},
      {"requests.example.com/gpu", false, false, false, false},
      {"Example.com/gpu", false, false, false, false},
      {"a/b/c", false, false, false, false},
      {"example.com/", false, false, false, false},
      {"/gpu", false, false, false, false},
      {"example.com/-gpu", false, false, false, false},
      {"example..com/gpu", false, false, false, false},
      {"example.com/" + std::string(64, 'a'), false, false, false, false},
      {"example.com/" + std::string(63, 'a'), false, true, false, true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(isNativeResource(c.name), c.native);
    EXPECT_EQ(isExtendedResourceName(c.name), c.extended);
    EXPECT_EQ(isHugePageResourceName(c.name), c.hugePage);
    EXPECT_EQ(isScalarResourceName(c.name), c.scalar);
  }
}

TEST(ResourceListTest, DecodesQuantities) {
  auto l = decodeString<ResourceList>(
      R"({"cpu": "500m", "memory": "1Gi", "nvidia.com/gpu": 2, "pods": "110"})");
  ASSERT_EQ(l.size(), 4u);
  EXPECT_EQ(l.at("cpu").milliValue(), 500);
  EXPECT_EQ(l.at("memory").value(), 1'073'741'824);
  EXPECT_EQ(l.at("nvidia.com/gpu").value(), 2);
  EXPECT_EQ(quantityOf(l, "pods").value(), 110);
  EXPECT_TRUE(quantityOf(l, "ephemeral-storage").isZero());
}

struct ErrorCase {
  std::string name;
  std::string json;
  std::string message;
};

TEST(ResourceListTest, ErrorsNameTheResource) {
  const std::vector<ErrorCase> cases = {
      {"badQuantity", R"({"cpu": "abc"})", "cpu: quantity \"abc\""},
      {"badSuffix", R"({"memory": "1Kb"})", "memory: quantity \"1Kb\": unknown suffix"},
      {"wrongType", R"({"memory": true})", "memory: quantity: expected a string or a number"},
      {"notAnObject", R"(["cpu"])", "expected an object"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_THAT(decodeError<ResourceList>(c.json), HasSubstr(c.message));
  }
}

TEST(ResourceListTest, AddAndMax) {
  ResourceList a = list({{"cpu", "1"}, {"memory", "1Gi"}});
  addResourceList(a, list({{"cpu", "500m"}, {"example.com/gpu", "1"}}));
  EXPECT_EQ(a, list({{"cpu", "1500m"}, {"memory", "1Gi"}, {"example.com/gpu", "1"}}));

  ResourceList m = list({{"cpu", "1"}, {"memory", "2Gi"}});
  maxResourceList(m, list({{"cpu", "2"}, {"memory", "1Gi"}, {"pods", "3"}}));
  EXPECT_EQ(m, list({{"cpu", "2"}, {"memory", "2Gi"}, {"pods", "3"}}));
}

struct ResourceCase {
  std::string name;
  ResourceList input;
  Resource expected;
};

TEST(ResourceTest, FromList) {
  const std::vector<ResourceCase> cases = {
      {"empty", {}, {}},
      {"cpuRoundsUpToMilli", list({{"cpu", "1.0001"}}), Resource{1001, 0, 0, 0, {}}},
      {"memoryRoundsUpToBytes", list({{"memory", "1.5"}}), Resource{0, 2, 0, 0, {}}},
      {"all", list({{"cpu", "2"}, {"memory", "1Ki"}, {"ephemeral-storage", "1G"}, {"pods", "110"}}),
       Resource{2000, 1024, 1'000'000'000, 110, {}}},
      {"scalars",
       list({{"nvidia.com/gpu", "2"}, {"hugepages-2Mi", "4Mi"}, {"kubernetes.io/x", "1"}}),
       Resource{0,
                0,
                0,
                0,
                {{"hugepages-2Mi", 4'194'304}, {"kubernetes.io/x", 1}, {"nvidia.com/gpu", 2}}}},
      {"ignoresUnknown", list({{"storage", "1Gi"}, {"a/b/c", "1"}}), Resource{}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_EQ(Resource::fromList(c.input), c.expected);
  }
}

TEST(ResourceTest, AddSubAndMax) {
  Resource r =
      Resource::fromList(list({{"cpu", "1"}, {"memory", "1Gi"}, {"example.com/gpu", "1"}}));
  r.add(Resource{500, 1024, 10, 1, {{"example.com/gpu", 2}, {"example.com/fpga", 1}}});
  EXPECT_EQ(
      r, (Resource{1500, 1'073'742'848, 10, 1, {{"example.com/fpga", 1}, {"example.com/gpu", 3}}}));

  r.sub(Resource{1500, 1'073'742'848, 10, 1, {{"example.com/fpga", 1}, {"example.com/gpu", 3}}});
  EXPECT_TRUE(r.isZero());
  EXPECT_EQ(r.scalar.size(), 2u);  // kept at zero
  EXPECT_EQ(r.scalarValue("example.com/gpu"), 0);
  EXPECT_EQ(r.scalarValue("absent.com/x"), 0);

  Resource m{1000, 100, 0, 5, {{"example.com/gpu", 1}}};
  m.setMaxResource(
      list({{"cpu", "500m"}, {"memory", "1Ki"}, {"pods", "100"}, {"example.com/gpu", "4"}}));
  EXPECT_EQ(m, (Resource{1000, 1024, 0, 5, {{"example.com/gpu", 4}}}));
}

TEST(ResourceTest, SaturatesInsteadOfOverflowing) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  Resource r{kMax - 1, 0, 0, 0, {}};
  r.add(Resource{10, 0, 0, 0, {}});
  EXPECT_EQ(r.milliCPU, kMax);
  Resource low{std::numeric_limits<int64_t>::min() + 1, 0, 0, 0, {}};
  low.sub(Resource{10, 0, 0, 0, {}});
  EXPECT_EQ(low.milliCPU, std::numeric_limits<int64_t>::min());
}

TEST(ResourceTest, ToListRoundTrips) {
  const Resource r{1500, 2'147'483'648, 0, 110, {{"example.com/gpu", 2}, {"example.com/zero", 0}}};
  const ResourceList l = r.toList();
  EXPECT_EQ(l,
            list({{"cpu", "1500m"}, {"memory", "2Gi"}, {"pods", "110"}, {"example.com/gpu", "2"}}));
  EXPECT_EQ(Resource::fromList(l),
            (Resource{1500, 2'147'483'648, 0, 110, {{"example.com/gpu", 2}}}));
}

}  // namespace
}  // namespace ksched::api
