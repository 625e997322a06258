// Helpers shared by the pod_resources unit tests.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/pod_resources.h>

#include "tests/support/api_test_util.h"

namespace ksched::api::testing {

using Expected = std::map<std::string, std::string>;  // resource -> quantity string

inline void expectList(const ResourceList& got, const Expected& want) {
  EXPECT_EQ(got.size(), want.size());
  for (const auto& [name, q] : want) {
    SCOPED_TRACE(name);
    auto it = got.find(name);
    ASSERT_NE(it, got.end());
    EXPECT_EQ(it->second, Quantity::parse(q)) << "got " << it->second.toString();
  }
}

}  // namespace ksched::api::testing
