#include "plugins/pod_topology_spread/node_info_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <vector>

namespace ksched::plugins::spread {
namespace {

TEST(NodeInfoMap, FindPutEraseIfAgreeWithStdMap) {
  std::vector<NodeInfo> infos(200);
  NodeInfoMap<uint32_t> map;
  map.reserve(infos.size());
  std::map<const NodeInfo*, uint32_t> want;
  std::mt19937 rng(3);
  for (int step = 0; step < 20000; ++step) {
    const NodeInfo* key = &infos[rng() % infos.size()];
    const auto value = static_cast<uint32_t>(rng() % 4);
    if (rng() % 2 == 0) {
      map.put(key, value);
      want[key] = value;
    } else {
      map.eraseIf(key, value);
      if (auto it = want.find(key); it != want.end() && it->second == value) want.erase(it);
    }
    ASSERT_EQ(map.size(), want.size());
  }
  for (const NodeInfo& ni : infos) {
    const uint32_t* got = map.find(&ni);
    auto it = want.find(&ni);
    ASSERT_EQ(got != nullptr, it != want.end());
    if (got != nullptr) {
      EXPECT_EQ(*got, it->second);
    }
  }
}

TEST(NodeInfoMap, EmptyFindsNothing) {
  NodeInfoMap<int64_t> map;
  NodeInfo ni;
  EXPECT_EQ(map.find(&ni), nullptr);
  map.eraseIf(&ni, 0);
  EXPECT_EQ(map.size(), 0U);
}

}  // namespace
}  // namespace ksched::plugins::spread
