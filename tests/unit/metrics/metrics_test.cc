#include "metrics/metrics.h"

#include <gtest/gtest.h>

#include <string>

namespace ksched::metrics {
namespace {

// The value of the sample line `series` ("name{labels}") in `text`, or -1.
double sample(const std::string& text, const std::string& series) {
  const std::string key = "\n" + series + " ";
  auto pos = text.find(key);
  if (pos == std::string::npos) return -1;
  pos += key.size();
  return std::stod(text.substr(pos, text.find('\n', pos) - pos));
}

TEST(MetricsBuckets, ExponentialAsUpstream) {
  EXPECT_EQ(exponentialBuckets(0.001, 2, 4), (std::vector<double>{0.001, 0.002, 0.004, 0.008}));
  EXPECT_EQ(exponentialBuckets(1, 2, 5), (std::vector<double>{1, 2, 4, 8, 16}));
  EXPECT_TRUE(exponentialBuckets(1, 2, 0).empty());
}

TEST(MetricsProcess, ParsesStatWithSpacesAndParensInComm) {
  // Fields after comm: state(3) ... utime(14)=250 stime(15)=150 ... starttime(22)=1000 vsize(23)
  // rss(24)=300.
  const std::string stat =
      "4242 (ksched (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 12 0 1000 "
      "123456789 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
  auto st = parseProcessStat(stat, 100, 4096, 1700000000);
  ASSERT_TRUE(st.has_value());
  EXPECT_DOUBLE_EQ(st->cpuSeconds, 4.0);
  EXPECT_DOUBLE_EQ(st->residentBytes, 300.0 * 4096);
  EXPECT_DOUBLE_EQ(st->startTimeSeconds, 1700000010.0);
}

TEST(MetricsProcess, RejectsMalformedStat) {
  EXPECT_FALSE(parseProcessStat("4242 ksched S 1", 100, 4096, 0).has_value());
  EXPECT_FALSE(parseProcessStat("4242 (ksched) S 1 2 3", 100, 4096, 0).has_value());
  EXPECT_FALSE(parseProcessStat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 1 0 0 20 0 1 0 5 1 2", 100, 4096, 0)
                   .has_value());
}

TEST(MetricsProcess, BootTime) {
  EXPECT_EQ(parseBootTime("cpu  1 2 3\nintr 5\nbtime 1699999999\nprocesses 9\n"), 1699999999.0);
  EXPECT_FALSE(parseBootTime("cpu 1 2 3\n").has_value());
}

TEST(MetricsLeader, MasterStatusFollowsTheLease) {
  SchedulerMetrics m;
  EXPECT_EQ(m.scrape().find("leader_election_master_status{"), std::string::npos);
  m.setLeader("kube-scheduler", false);
  EXPECT_NE(m.scrape().find("leader_election_master_status{name=\"kube-scheduler\"} 0\n"),
            std::string::npos);
  m.setLeader("kube-scheduler", true);
  const std::string t = m.scrape();
  EXPECT_NE(t.find("leader_election_master_status{name=\"kube-scheduler\"} 1\n"), std::string::npos)
      << t;
  EXPECT_NE(t.find("# TYPE leader_election_master_status gauge"), std::string::npos);
}

TEST(MetricsProcess, ScrapeHasProcessFamilies) {
  SchedulerMetrics m;
  const std::string text = m.scrape();
  EXPECT_GT(sample(text, "process_cpu_seconds_total"), -1);
  EXPECT_GT(sample(text, "process_resident_memory_bytes"), 0);
  EXPECT_GT(sample(text, "process_start_time_seconds"), 1.6e9);
  EXPECT_GE(sample(text, "process_open_fds"), 3);
}

TEST(SchedulerMetricsTest, AttemptsByResultAndProfile) {
  SchedulerMetrics m;
  const auto& def = m.profile("default-scheduler");
  const auto& other = m.profile("other");
  EXPECT_EQ(&def, &m.profile("default-scheduler"));
  m.observeAttempt(def, Result::kScheduled, 0.0015);
  m.observeAttempt(def, Result::kScheduled, 0.5);
  m.observeAttempt(def, Result::kUnschedulable, 0.003);
  m.observeAttempt(other, Result::kError, 100);
  const std::string t = m.scrape();
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="scheduled"})"),
      2);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="unschedulable"})"),
      1);
  EXPECT_EQ(
      sample(t, R"(scheduler_schedule_attempts_total{profile="default-scheduler",result="error"})"),
      0);
  EXPECT_EQ(sample(t, R"(scheduler_schedule_attempts_total{profile="other",result="error"})"), 1);
  const std::string h =
      R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="default-scheduler",result="scheduled",le=")";
  EXPECT_EQ(sample(t, h + R"(0.001"})"), 0);
  EXPECT_EQ(sample(t, h + R"(0.002"})"), 1);
  EXPECT_EQ(sample(t, h + R"(0.512"})"), 2);
  EXPECT_EQ(sample(t, h + R"(16.384"})"), 2);
  EXPECT_EQ(sample(t, h + R"(+Inf"})"), 2);
  EXPECT_DOUBLE_EQ(
      sample(
          t,
          R"(scheduler_scheduling_attempt_duration_seconds_sum{profile="default-scheduler",result="scheduled"})"),
      0.5015);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_scheduling_attempt_duration_seconds_bucket{profile="other",result="error",le="16.384"})"),
      0);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_scheduling_attempt_duration_seconds_count{profile="other",result="error"})"),
      1);
}

TEST(SchedulerMetricsTest, PodScheduledAttemptsAndSli) {
  SchedulerMetrics m;
  m.observePodScheduled(1, 0.005);
  m.observePodScheduled(3, 2);
  m.observePodScheduled(20, 30);
  m.observePodScheduled(15, 1);
  const std::string t = m.scrape();
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_attempts_bucket{le="1"})"), 1);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_attempts_bucket{le="4"})"), 2);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_attempts_bucket{le="16"})"), 3);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_attempts_count)"), 4);
  EXPECT_EQ(
      sample(t, R"(scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="1",le="0.01"})"),
      1);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="3"})"), 1);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="15+"})"), 2);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_pod_scheduling_sli_duration_seconds_bucket{attempts="15+",le="5242.88"})"),
      2);
  EXPECT_EQ(sample(t, R"(scheduler_pod_scheduling_sli_duration_seconds_count{attempts="20"})"), -1);
}

TEST(SchedulerMetricsTest, QueueCacheAndGauges) {
  SchedulerMetrics m;
  m.incomingPod("active", "PodAdd");
  m.incomingPod("active", "PodAdd");
  m.incomingPod("backoff", "ScheduleAttemptFailure");
  size_t active = 7;
  const size_t id = m.addRefresher([&] {
    m.setPendingPods(active, 2, 3, 4);
    m.setCacheSize(5, 60, 10);
  });
  std::string t = m.scrape();
  EXPECT_EQ(sample(t, R"(scheduler_queue_incoming_pods_total{event="PodAdd",queue="active"})"), 2);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_queue_incoming_pods_total{event="ScheduleAttemptFailure",queue="backoff"})"),
      1);
  EXPECT_EQ(sample(t, R"(scheduler_pending_pods{queue="active"})"), 7);
  EXPECT_EQ(sample(t, R"(scheduler_pending_pods{queue="backoff"})"), 2);
  EXPECT_EQ(sample(t, R"(scheduler_pending_pods{queue="unschedulable"})"), 3);
  EXPECT_EQ(sample(t, R"(scheduler_pending_pods{queue="gated"})"), 4);
  EXPECT_EQ(sample(t, R"(scheduler_cache_size{type="assumed_pods"})"), 5);
  EXPECT_EQ(sample(t, R"(scheduler_cache_size{type="pods"})"), 60);
  EXPECT_EQ(sample(t, R"(scheduler_cache_size{type="nodes"})"), 10);
  m.removeRefresher(id);
  active = 100;
  t = m.scrape();
  EXPECT_EQ(sample(t, R"(scheduler_pending_pods{queue="active"})"), 7);
}

TEST(SchedulerMetricsTest, PreemptionPermitAndFramework) {
  SchedulerMetrics m;
  m.observePreemptionAttempt();
  m.observePreemptionAttempt();
  m.observePreemptionVictims(3);
  m.observePermitWait(true, 0.01);
  m.observePermitWait(false, 0.2);
  m.extensionPoint("Filter", "Success", "default-scheduler").Observe(0.00005);
  EXPECT_EQ(&m.extensionPoint("Filter", "Success", "default-scheduler"),
            &m.extensionPoint("Filter", "Success", "default-scheduler"));
  m.pluginExecution("NodeName", "Filter", "Success").Observe(0.00001);
  m.setUnschedulablePods("NodeResourcesFit", "default-scheduler", 4);
  const std::string t = m.scrape();
  EXPECT_EQ(sample(t, "scheduler_preemption_attempts_total"), 2);
  EXPECT_EQ(sample(t, R"(scheduler_preemption_victims_bucket{le="2"})"), 0);
  EXPECT_EQ(sample(t, R"(scheduler_preemption_victims_bucket{le="4"})"), 1);
  EXPECT_EQ(sample(t, R"(scheduler_preemption_victims_bucket{le="64"})"), 1);
  EXPECT_EQ(sample(t, R"(scheduler_permit_wait_duration_seconds_count{result="allowed"})"), 1);
  EXPECT_EQ(
      sample(t, R"(scheduler_permit_wait_duration_seconds_bucket{result="rejected",le="0.128"})"),
      0);
  EXPECT_EQ(
      sample(t, R"(scheduler_permit_wait_duration_seconds_bucket{result="rejected",le="0.256"})"),
      1);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",profile="default-scheduler",status="Success",le="0.0001"})"),
      1);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_framework_extension_point_duration_seconds_bucket{extension_point="Filter",profile="default-scheduler",status="Success",le="0.2048"})"),
      1);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_plugin_execution_duration_seconds_bucket{extension_point="Filter",plugin="NodeName",status="Success",le="1e-05"})"),
      1);
  EXPECT_EQ(
      sample(
          t,
          R"(scheduler_unschedulable_pods{plugin="NodeResourcesFit",profile="default-scheduler"})"),
      4);
}

}  // namespace
}  // namespace ksched::metrics
