#include <gtest/gtest.h>

#include "plugins/registry.h"
#include "scheduler/scheduler.h"

namespace ksched::scheduler {
namespace {

class OtherSort final : public QueueSortPlugin {
 public:
  std::string_view name() const override { return "OtherSort"; }
  bool less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.timestamp < b.timestamp;
  }
};

Registry registry() {
  Registry r = plugins::inTreeRegistry();
  r.add("OtherSort", [](Handle&) { return std::make_unique<OtherSort>(); });
  return r;
}

std::string constructionError(std::vector<config::Profile> profiles) {
  client::Config cfg;
  cfg.server = "https://127.0.0.1:1";  // never contacted: nothing is started
  client::RestClient rest(cfg);
  Options o;
  o.profiles = std::move(profiles);
  o.binderThreads = 1;
  try {
    Scheduler s(rest, rest, registry(), o);
  } catch (const framework::FrameworkError& e) {
    return e.what();
  }
  return "";
}

TEST(SchedulerProfilesTest, ProfilesAreValidatedTogether) {
  EXPECT_EQ(constructionError({config::defaultProfile(features::Gates{}, "a"), config::defaultProfile(features::Gates{}, "b")}), "");
  EXPECT_EQ(constructionError({config::defaultProfile(features::Gates{}, "a"), config::defaultProfile(features::Gates{}, "a")}),
            "profiles[1].schedulerName: Duplicate value: \"a\"");
  EXPECT_EQ(constructionError({}), "profiles: at least one is needed");
  auto noSort = config::defaultProfile(features::Gates{}, "b");
  noSort.plugins.queueSort.disabled = {{"*", 0}};
  EXPECT_EQ(constructionError({config::defaultProfile(features::Gates{}, "a"), noSort}),
            "profiles[1].plugins.queueSort: no queue sort plugin is enabled");
  auto otherSort = config::defaultProfile(features::Gates{}, "b");
  otherSort.plugins.queueSort.enabled = {{"OtherSort", 0}};
  otherSort.plugins.queueSort.disabled = {{"PrioritySort", 0}};
  EXPECT_EQ(constructionError({config::defaultProfile(features::Gates{}, "a"), otherSort}),
            "profiles[1].plugins.queueSort: queueSort must be the same for all profiles");
}

}  // namespace
}  // namespace ksched::scheduler
