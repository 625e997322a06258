// The daemon, `ksched explain` and `ksched simulate` build the scheduler core's options from one
// mapping (scheduler/options_from_config.h): for a configuration that sets every field the
// mapping reads, the three agree on those fields, and differ only where a mode means to.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "app/daemon.h"
#include "app/explain_cli.h"
#include "config/command_line.h"
#include "config/profile.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "plugins/registry.h"
#include "scheduler/options_from_config.h"
#include "sim/run.h"

namespace ksched {
namespace {

using std::chrono::seconds;

constexpr const char* kConfig = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 4
percentageOfNodesToScore: 42
podInitialBackoffSeconds: 3
podMaxBackoffSeconds: 30
profiles:
- schedulerName: default-scheduler
- schedulerName: packed
  plugins:
    multiPoint:
      disabled:
      - name: PodTopologySpread
    score:
      enabled:
      - name: NodeResourcesFit
        weight: 5
extenders:
- urlPrefix: http://127.0.0.1:8888/
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  ignorable: true
)";

config::SchedulerConfiguration configuration() {
  auto loaded =
      config::loadConfig(kConfig, "test.yaml", config::wiringCheck(plugins::inTreeRegistry()));
  EXPECT_TRUE(loaded.ok()) << (loaded.errors.empty() ? "" : loaded.errors[0]);
  return loaded.ok() ? *loaded.config : config::SchedulerConfiguration{};
}

// A profile as text: its name and, per extension point, the plugins enabled and disabled.
std::string describe(const config::Profile& p) {
  std::string out = p.schedulerName + ":";
  for (const auto& point : config::kExtensionPoints) {
    const config::PluginSet& set = p.plugins.*point.set;
    out += " " + std::string(point.field) + "[";
    for (const auto& r : set.enabled) out += r.name + "/" + std::to_string(r.weight) + " ";
    for (const auto& r : set.disabled) out += "-" + r.name + " ";
    out += "]";
  }
  return out;
}

std::vector<std::string> describe(const std::vector<config::Profile>& profiles) {
  std::vector<std::string> out;
  for (const auto& p : profiles) out.push_back(describe(p));
  return out;
}

TEST(SchedulerOptionsTest, TheMappingReadsEveryField) {
  const config::SchedulerConfiguration cc = configuration();
  config::CommandLine flags;
  flags.diagnosisAnnotation = true;
  flags.shutdownGracePeriod = seconds(7);
  const scheduler::Options o = scheduler::optionsFromConfig(cc, flags);
  EXPECT_EQ(o.parallelism, 4);
  EXPECT_EQ(o.percentageOfNodesToScore, 42);
  EXPECT_EQ(o.queue.podInitialBackoff, seconds(3));
  EXPECT_EQ(o.queue.podMaxBackoff, seconds(30));
  ASSERT_EQ(o.extenders.size(), 1U);
  EXPECT_EQ(o.extenders, cc.extenders);
  EXPECT_EQ(describe(o.profiles), describe(config::frameworkProfiles(cc)));
  ASSERT_EQ(o.profiles.size(), 2U);
  EXPECT_EQ(o.profiles[1].schedulerName, "packed");
  EXPECT_TRUE(o.diagnosisAnnotation);
  EXPECT_EQ(o.shutdownGracePeriod, seconds(7));
}

TEST(SchedulerOptionsTest, DaemonExplainAndSimulateAgreeOnTheSharedFields) {
  const config::SchedulerConfiguration cc = configuration();
  const scheduler::Options mapped = scheduler::optionsFromConfig(cc);
  metrics::SchedulerMetrics m;
  const scheduler::Options daemon = app::daemonOptions(cc, config::CommandLine{}, "me", &m);
  const scheduler::Options explain = app::explainOptions(cc);
  const scheduler::Options simulate = sim::coreOptions(cc, sim::Options{}, /*preemption=*/true);

  for (const auto* o : {&daemon, &explain, &simulate}) {
    EXPECT_EQ(o->percentageOfNodesToScore, 42);
    EXPECT_EQ(o->queue.podInitialBackoff, seconds(3));
    EXPECT_EQ(o->queue.podMaxBackoff, seconds(30));
    EXPECT_EQ(describe(o->profiles), describe(mapped.profiles));
  }
  // The daemon calls the extenders; explain and simulate never do, on purpose.
  EXPECT_EQ(daemon.extenders, cc.extenders);
  EXPECT_TRUE(explain.extenders.empty());
  EXPECT_TRUE(simulate.extenders.empty());
  // Simulate evaluates in one order, for the same answer from the same seed.
  EXPECT_EQ(daemon.parallelism, 4);
  EXPECT_EQ(explain.parallelism, 4);
  EXPECT_EQ(simulate.parallelism, 1);
  // What each mode sets of its own.
  EXPECT_EQ(daemon.instanceId, "me");
  EXPECT_EQ(daemon.metrics, &m);
  EXPECT_EQ(explain.binderThreads, 1);
  EXPECT_TRUE(simulate.synchronous);
  EXPECT_TRUE(simulate.diagnosisAnnotation);
  EXPECT_TRUE(static_cast<bool>(simulate.queue.clock));
}

TEST(SchedulerOptionsTest, SimulateWithoutPreemptionDisablesEveryPostFilter) {
  const config::SchedulerConfiguration cc = configuration();
  const scheduler::Options o = sim::coreOptions(cc, sim::Options{}, /*preemption=*/false);
  for (const auto& p : o.profiles) {
    EXPECT_TRUE(p.plugins.postFilter.enabled.empty()) << p.schedulerName;
    ASSERT_EQ(p.plugins.postFilter.disabled.size(), 1U);
    EXPECT_EQ(p.plugins.postFilter.disabled[0].name, "*");
  }
}

}  // namespace
}  // namespace ksched
