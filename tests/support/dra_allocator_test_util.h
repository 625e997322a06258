// The DRA allocator's table tests: a case (claims, classes, slices, devices in use, the node) with
// what upstream expects, the runner that allocates it, and the parameterized fixture the table's
// files instantiate. Objects and the stand-in CEL compiler are in dra_test_objects.h.
#pragma once

#include <gtest/gtest.h>

#include <cctype>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/allocator.h"
#include "tests/support/dra_test_objects.h"

namespace ksched::plugins::dra::testutil {

// ---- A table case and its runner -----------------------------------------------------------

struct Case {
  Features features = Features::none();
  bool realCel = false;  // the selectors through the real evaluator, not fakeCompile
  std::vector<api::ResourceClaim> claims;
  std::vector<DeviceId> allocated;  // in use by other claims
  ConsumedCapacity consumed;        // shared allocations of other claims
  std::vector<api::DeviceClass> classes;
  std::vector<api::ResourceSlice> slices;
  api::Node node = testutil::node(kNode1, kRegion1);
  DeviceScoring scoring;  // off, as upstream

  // nullopt: not allocated on this node (unschedulable unless wantError is set).
  std::optional<std::vector<api::AllocationResult>> want;
  std::string wantError;                                   // a substring of the error
  std::string wantMessage = std::string(kCannotAllocate);  // unschedulable: the status text
  std::string wantReason;                                  // unschedulable: the reason, exactly
  int64_t wantSteps = 0;                                   // 0: not checked
};

// Builds the Allocator for the case and allocates on its node; shareIDs become kFixedShareId.
inline Result run(const Case& c,
                  Allocator::Clock::time_point deadline = Allocator::Clock::time_point::max()) {
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  for (const auto& s : c.slices) slices.push_back(std::make_shared<const api::ResourceSlice>(s));
  DeviceSet inUse(c.allocated.begin(), c.allocated.end());
  AllocatorInputs in;
  for (const auto& claim : c.claims) in.claims.push_back(&claim);
  in.deviceClass = [&c](std::string_view name) -> const api::DeviceClass* {
    for (const auto& cls : c.classes) {
      if (cls.metadata.name == name) return &cls;
    }
    return nullptr;
  };
  in.slices = slices;
  in.inUse = &inUse;
  in.consumedCapacity = &c.consumed;
  if (c.realCel) {
    const cel::Features celFeatures{.listTypeAttributes = c.features.listTypeAttributes};
    in.compile = [celFeatures](std::string_view e) { return cel::compile(e, celFeatures); };
  } else {
    in.compile = fakeCompile;
  }
  in.features = c.features;
  in.scoring = c.scoring;
  // The slices indexed once and shared by two allocators, as DynamicResources shares the index
  // between cycles: what the first one caches per cycle must not change the second's answer.
  in.sliceIndex = indexSlices(slices);
  {
    const Allocator earlier(AllocatorInputs{in});
    (void)earlier.allocate(c.node, deadline);
  }
  const Allocator allocator(std::move(in));
  Result r = allocator.allocate(c.node, deadline);
  for (auto& a : r.allocations) {
    for (auto& d : a.devices) {
      if (d.shareID) d.shareID = kFixedShareId;
    }
  }
  return r;
}

// Checks a case's expectations; names the case in failures.
inline void expectCase(const std::string& name, const Case& c) {
  SCOPED_TRACE(name);
  const Result r = run(c);
  if (!c.wantError.empty()) {
    EXPECT_EQ(r.code, Result::Code::kError) << r.message << r.reason;
    EXPECT_NE(r.message.find(c.wantError), std::string::npos) << r.message;
  } else if (c.want) {
    ASSERT_EQ(r.code, Result::Code::kAllocated) << r.message << "\n" << r.reason;
    ASSERT_EQ(r.allocations.size(), c.want->size());
    for (size_t i = 0; i < c.want->size(); ++i) {
      EXPECT_EQ(r.allocations[i], (*c.want)[i]) << "claim " << i << " got:\n"
                                                << describe(r.allocations[i]) << "want:\n"
                                                << describe((*c.want)[i]);
    }
  } else {
    EXPECT_EQ(r.code, Result::Code::kUnschedulable) << r.message;
    EXPECT_EQ(r.message, c.wantMessage);
    if (!c.wantReason.empty()) {
      EXPECT_EQ(r.reason, c.wantReason);
    }
  }
  if (c.wantSteps > 0) {
    EXPECT_EQ(r.steps, c.wantSteps);
  }
}

// The upstream table, split over several files: each instantiates DraUpstreamTable with its cases
// (TEST_P(DraUpstreamTable, Allocates) is in allocator_test.cc).
using NamedCase = std::pair<std::string, Case>;
class DraUpstreamTable : public ::testing::TestWithParam<NamedCase> {};

inline std::string caseName(const ::testing::TestParamInfo<NamedCase>& info) {
  std::string s = info.param.first;
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.claims.size() << " claim(s), " << c.slices.size() << " slice(s)";
}

}  // namespace ksched::plugins::dra::testutil
