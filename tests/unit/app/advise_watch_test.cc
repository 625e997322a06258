// advise --watch's state between rounds (app/advise_watch.h): the gauges follow the last plan,
// and a drift warns each node the moves leave once, until a plan is back under the threshold.
#include "app/advise_watch.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

namespace ksched::app {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

advise::Plan balance(std::initializer_list<std::pair<const char*, const char*>> moves) {
  advise::Plan p;
  p.goal = "--balance";
  p.balance = advise::Plan::Balance{10, moves.size(), 0};
  for (const auto& [from, to] : moves) {
    p.moves.push_back({"default", std::string("pod-") + from, from, to, {}, "balance: hot"});
  }
  return p;
}

TEST(AdviseWatch, ADriftWarnsEachNodeOnceUntilAPlanIsBackUnderTheThreshold) {
  WatchState s;
  using Nodes = std::set<std::string>;
  EXPECT_EQ(s.planned(balance({{"n1", "n3"}}), 2, 1), Nodes{});  // 1 move < 2: no drift
  EXPECT_EQ(s.planned(balance({{"n1", "n3"}, {"n2", "n4"}}), 2, 2), (Nodes{"n1", "n2"}));
  EXPECT_EQ(s.planned(balance({{"n1", "n3"}, {"n2", "n4"}}), 2, 3), Nodes{});
  // A node the drift now reaches is warned; the others were already.
  EXPECT_EQ(s.planned(balance({{"n1", "n3"}, {"n5", "n4"}}), 2, 4), Nodes{"n5"});
  EXPECT_EQ(s.planned(balance({}), 2, 5), Nodes{});
  EXPECT_EQ(s.planned(balance({{"n1", "n3"}, {"n2", "n4"}}), 2, 6), (Nodes{"n1", "n2"}));
}

TEST(AdviseWatch, TheGaugesFollowTheLastPlan) {
  WatchState s;
  (void)s.planned(balance({{"n1", "n3"}, {"n1", "n4"}, {"n2", "n4"}}), 1, 1796064175);
  std::string t = s.scrape();
  EXPECT_THAT(t, HasSubstr("ksched_advise_plan_moves{goal=\"--balance\"} 3\n"));
  EXPECT_THAT(t,
              HasSubstr("ksched_advise_plan_moves_off_node{goal=\"--balance\",node=\"n1\"} 2\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_nodes_over_band{goal=\"--balance\"} 3\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_drifted{goal=\"--balance\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_last_plan_timestamp_seconds 1796064175\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_plans_total{result=\"planned\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("process_resident_memory_bytes"));
  // A node the next plan moves nothing off loses its series.
  (void)s.planned(balance({{"n2", "n4"}}), 2, 1796064235);
  s.failed();
  t = s.scrape();
  EXPECT_THAT(t, Not(HasSubstr("node=\"n1\"")));
  EXPECT_THAT(t,
              HasSubstr("ksched_advise_plan_moves_off_node{goal=\"--balance\",node=\"n2\"} 1\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_drifted{goal=\"--balance\"} 0\n"));
  EXPECT_THAT(t, HasSubstr("ksched_advise_plans_total{result=\"error\"} 1\n"));
}

TEST(AdviseWatch, TheEventNamesTheGoalTheMovesAndTheFirstOffTheNode) {
  const advise::Plan p = balance({{"n1", "n3"}, {"n2", "n4"}, {"n1", "n4"}});
  const nlohmann::json e = driftEvent("n1", p, 2);
  EXPECT_EQ(e["type"], "Warning");
  EXPECT_EQ(e["reason"], "Drifted");
  EXPECT_EQ(e["metadata"]["namespace"], "default");
  EXPECT_EQ(e["involvedObject"]["kind"], "Node");
  EXPECT_EQ(e["involvedObject"]["name"], "n1");
  EXPECT_EQ(e["message"],
            "ksched advise (--balance): 3 moves planned (--drift-moves 2), 2 off this node, the "
            "first: default/pod-n1 to n3 (balance: hot)");
}

}  // namespace
}  // namespace ksched::app
