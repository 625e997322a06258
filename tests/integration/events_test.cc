// Events against the real apiserver: repeats aggregated into a series, aggregation state that
// does not outlive the pods, events that keep pace with bindings at full speed, and a shutdown
// that ends on time whether or not the apiserver answers.
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <regex>
#include <set>

#include "cluster.h"
#include "daemon.h"
#include "objects.h"
#include "running_scheduler.h"
#include "scheduler/event_recorder.h"
#include "scheduling.h"

// A sanitizer build: gcc defines __SANITIZE_*__, clang answers __has_feature.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define KSCHED_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define KSCHED_TEST_SANITIZED 1
#endif
#endif
#ifndef KSCHED_TEST_SANITIZED
#define KSCHED_TEST_SANITIZED 0
#endif

namespace ksched::testing {
namespace {

using scheduler::ApiEventRecorder;

api::Pod regarding(const std::string& ns, const std::string& name, const std::string& uid) {
  api::Pod p;
  p.metadata.namespace_ = ns;
  p.metadata.name = name;
  p.metadata.uid = uid;
  return p;
}

std::vector<nlohmann::json> eventsOf(RestClient& c, const std::string& ns) {
  return c.list("/apis/events.k8s.io/v1/namespaces/" + ns + "/events").items;
}

void deleteEvents(RestClient& c, const std::string& ns) {
  try {
    c.del("/apis/events.k8s.io/v1/namespaces/" + ns + "/events");
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) throw;
  }
}

TEST(EventRecorder, RepeatsBecomeOneEventWithASeriesAndForgetDropsTheState) {
  auto& admin = TestCluster::get().admin();
  const std::string ns = "ev-series";
  ensureNamespace(admin, ns);
  deleteEvents(admin, ns);
  RestClient client(TestCluster::get().config("scheduler"));
  ApiEventRecorder::Options opts;
  opts.seriesFlush = std::chrono::seconds(0);  // series updates go out on the next idle second
  ApiEventRecorder rec(client, "default-scheduler", "test", opts);

  const auto pod = regarding(ns, "p", "uid-series-p");
  for (int i = 0; i < 3; ++i) rec.event(pod, "Warning", "FailedScheduling", "Scheduling", "full");
  rec.event(pod, "Warning", "FailedScheduling", "Scheduling", "another message");
  rec.flushForTest();
  EXPECT_EQ(rec.sent(), 2u);
  EXPECT_EQ(rec.seriesTracked(), 2u);
  std::map<std::string, int> countByNote;
  ASSERT_TRUE(eventually(
      [&] {
        countByNote.clear();
        for (const auto& e : eventsOf(admin, ns)) {
          countByNote[e.value("note", "")] =
              e.contains("series") ? e["series"].value("count", 0) : 1;
        }
        return countByNote["full"] == 3;
      },
      10s));
  EXPECT_EQ(countByNote, (std::map<std::string, int>{{"another message", 1}, {"full", 3}}));
  const auto first = eventsOf(admin, ns);
  for (const auto& e : first) {
    EXPECT_EQ(e["regarding"].value("uid", ""), "uid-series-p");
    EXPECT_EQ(e.value("reportingController", ""), "default-scheduler");
  }

  // A repeat after the pod is forgotten (bound, say) is a new Event; nothing is tracked for it
  // once it is forgotten again.
  rec.event(pod, "Warning", "FailedScheduling", "Scheduling", "full");
  rec.flushForTest();
  EXPECT_EQ(rec.sent(), 2u);  // still aggregated: not forgotten yet
  rec.forget(pod.metadata.uid);
  rec.flushForTest();
  EXPECT_EQ(rec.seriesTracked(), 0u);
  ASSERT_TRUE(eventually(
      [&] {
        for (const auto& e : eventsOf(admin, ns)) {
          if (e.value("note", "") == "full" && e.contains("series") &&
              e["series"].value("count", 0) == 4)
            return true;
        }
        return false;
      },
      10s))
      << "forget() sends the pending series update";
  rec.event(pod, "Warning", "FailedScheduling", "Scheduling", "full");
  rec.flushForTest();
  EXPECT_EQ(rec.sent(), 3u);
  EXPECT_EQ(rec.dropped(), 0u);
  EXPECT_EQ(rec.shutdown(std::chrono::steady_clock::now() + 5s), 0u);
  deleteEvents(admin, ns);
}

TEST(EventRecorder, ShutdownWithTheApiserverUnreachableEndsAtTheDeadlineAndCountsTheDrops) {
  // An apiserver that is gone: nothing listens on the port.
  auto cfg = TestCluster::get().config("scheduler");
  cfg.server = "https://127.0.0.1:1";
  RestClient client(cfg);
  std::map<std::string, int> droppedBy;
  std::mutex mu;
  ApiEventRecorder::Options opts;
  opts.onDropped = [&](std::string_view reason) {
    std::lock_guard lock(mu);
    ++droppedBy[std::string(reason)];
  };
  ApiEventRecorder rec(client, "default-scheduler", "test", opts);
  for (int i = 0; i < 500; ++i) {
    rec.event(regarding("ns", "p-" + std::to_string(i), "uid-gone-" + std::to_string(i)), "Normal",
              "Scheduled", "Binding", "Successfully assigned ns/p to n");
  }
  const auto start = std::chrono::steady_clock::now();
  const auto deadline = start + 500ms;
  // What Scheduler::stop() does at the deadline: cut off the requests still retrying.
  client::AbortAt cutOff(deadline, {&client});
  const uint64_t dropped = rec.shutdown(deadline);
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 2s);
  EXPECT_EQ(rec.sent(), 0u);
  EXPECT_EQ(rec.dropped(), 500u);
  {
    std::lock_guard lock(mu);
    EXPECT_EQ(droppedBy[std::string(ApiEventRecorder::kDropShutdown)], static_cast<int>(dropped));
    EXPECT_EQ(droppedBy[std::string(ApiEventRecorder::kDropShutdown)] +
                  droppedBy[std::string(ApiEventRecorder::kDropSendFailed)],
              500);
  }
  EXPECT_GE(dropped, 490u);  // at most the first attempt of each sender failed before

  // After shutdown nothing is queued, and an event is counted as dropped at once.
  rec.event(regarding("ns", "late", "uid-late"), "Normal", "Scheduled", "Binding", "late");
  EXPECT_EQ(rec.dropped(), 501u);
}

TEST(EventRecorder, AFullQueueDropsNewEventsAndCountsThem) {
  auto cfg = TestCluster::get().config("scheduler");
  cfg.server = "https://127.0.0.1:1";
  RestClient client(cfg);
  std::atomic<int> queueFull{0};
  ApiEventRecorder::Options opts;
  opts.maxQueued = 10;
  opts.senders = 1;
  opts.onDropped = [&](std::string_view reason) {
    if (reason == ApiEventRecorder::kDropQueueFull) ++queueFull;
  };
  ApiEventRecorder rec(client, "default-scheduler", "test", opts);
  // The sender takes one and retries it; ten more fill the queue; the rest are dropped.
  for (int i = 0; i < 31; ++i) {
    rec.event(regarding("ns", "p", "uid-full"), "Normal", "Scheduled", "Binding",
              "note " + std::to_string(i));
  }
  EXPECT_GE(queueFull.load(), 20);
  EXPECT_LE(queueFull.load(), 21);
  client.abort();
  (void)rec.shutdown(std::chrono::steady_clock::now());
  EXPECT_EQ(rec.dropped(), 31u);
}

// The issue's operator run: 100 nodes, 1500 pods bound at full speed (client QPS 5000). Events
// are sent in parallel, so nearly all of them exist one second after the last binding.
TEST(Events, KeepPaceWith1500PodsBoundAtFullSpeed) {
  auto& admin = TestCluster::get().admin();
  deleteAllNodes(admin);
  const std::string ns = "ev-pace";
  ensureNamespace(admin, ns);
  constexpr int kNodes = 100, kPods = 1500;
  parallelFor(kNodes, 8, [&](int i) {
    admin.post("/api/v1/nodes", sizedNode("ev-pace-" + std::to_string(i), "32", "64Gi"));
  });

  // One round: 1500 pending pods, a scheduler started on them; how many Scheduled events exist
  // one second after the last binding.
  auto round = [&](int r) -> size_t {
    deleteAllPods(admin, ns);
    EXPECT_TRUE(eventually([&] { return listPods(admin, ns).empty(); }, 60s));
    deleteEvents(admin, ns);
    const std::string prefix = "r" + std::to_string(r) + "-";
    parallelFor(kPods, 8, [&](int i) {
      admin.post("/api/v1/namespaces/" + ns + "/pods",
                 sizedPod(ns, prefix + std::to_string(i), "10m"));
    });
    auto opts = RunningScheduler::defaultOptions();
    opts.binderThreads = 16;
    const auto started = std::chrono::steady_clock::now();
    RunningScheduler sched(opts);
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    while (sched->stats().scheduled < static_cast<uint64_t>(kPods) &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(2ms);
    }
    const auto lastBound = std::chrono::steady_clock::now();
    EXPECT_EQ(sched->stats().scheduled, static_cast<uint64_t>(kPods));
    std::this_thread::sleep_until(lastBound + 1s);
    std::set<std::string> scheduled;
    for (const auto& e : eventsOf(admin, ns)) {
      if (e.value("reason", "") == "Scheduled") scheduled.insert(e["regarding"].value("name", ""));
    }
    sched->events().flushForTest();
    EXPECT_EQ(sched->events().dropped(), 0u);
    // Bound pods leave no aggregation state behind.
    EXPECT_EQ(sched->events().seriesTracked(), 0u);
    EXPECT_EQ(eventsByPod(admin, ns, "Scheduled").size(), static_cast<size_t>(kPods));
    std::printf(
        "round %d: %d pods bound in %.2f s (informers' sync included); Scheduled events "
        "existing 1 s after the last binding: %zu\n",
        r, kPods, std::chrono::duration<double>(lastBound - started).count(), scheduled.size());
    return scheduled.size();
  };
  // The apiserver's CPU sets the pace; a machine busy with something else can slow one round,
  // so a second round is allowed. A single sender (the old recorder) misses by half every time;
  // 80 % tells 8 senders from one with room for a busy machine: with a compiler running beside
  // it on 2 cores, rounds gave 91 % and 97 %, and with the other integration shard's control
  // plane beside it (ctest --parallel 2) 89 % and 89 % (alone: 100 %). Sanitizer builds run the
  // scheduler, senders included, several times slower beside the same apiserver, so their pace says
  // how fast the machine is (70 % to 100 % on the same machine on different days): there the pace
  // is only printed, and every event must still exist and none be dropped (checked in each round).
  constexpr size_t kWant = kPods * 80 / 100;
  size_t best = round(1);
#if KSCHED_TEST_SANITIZED
  std::printf("pace not asserted in a sanitizer build: %zu of %d (%d wanted in a plain build)\n",
              best, kPods, static_cast<int>(kWant));
#else
  if (best < kWant) best = std::max(best, round(2));
  EXPECT_GE(best, kWant);
#endif
  deleteAllPods(admin, ns);
  deleteEvents(admin, ns);
  deleteAllNodes(admin);
}

// SIGTERM while pods are being bound, and the apiserver gone a second later: the daemon stops
// within its grace period (5 s by default), says how many events it dropped, and exits 0.
TEST(Shutdown, SigtermThenApiserverGoneExitsZeroWithinTenSeconds) {
  auto& cluster = TestCluster::get();
  auto& admin = cluster.admin();
  deleteAllNodes(admin);
  const std::string ns = "shutdown-gone";
  ensureNamespace(admin, ns);
  deleteAllPods(admin, ns);
  constexpr int kPods = 1500;
  parallelFor(100, 8, [&](int i) {
    admin.post("/api/v1/nodes", sizedNode("sd-" + std::to_string(i), "32", "64Gi"));
  });
  parallelFor(kPods, 8, [&](int i) {
    admin.post("/api/v1/namespaces/" + ns + "/pods", sizedPod(ns, "p-" + std::to_string(i), "10m"));
  });

  struct Restart {  // the apiserver comes back whatever happens below
    TestCluster& c;
    ~Restart() {
      c.ctl("start-apiserver");
      EXPECT_TRUE(eventually(
          [&] {
            try {
              c.admin().get("/version");
              return true;
            } catch (const std::exception&) {
              return false;
            }
          },
          60s));
      deleteAllPods(c.admin(), "shutdown-gone");
      deleteAllNodes(c.admin());
    }
  };
  Daemon d(cluster.dir() + "/shutdown-gone.log",
           {"--kubeconfig", cluster.kubeconfig("scheduler"), "--leader-elect=false",
            "--secure-port=0", "--kube-api-qps=5000", "--kube-api-burst=5000", "-v=4"});
  // SIGTERM in the middle of the run, with bindings and their events in flight.
  ASSERT_TRUE(eventually(
      [&] {
        const std::string log = d.log();
        size_t bound = 0;
        for (size_t at = 0; (at = log.find("bound pod", at)) != std::string::npos; ++at) ++bound;
        return bound >= kPods / 2;
      },
      60s))
      << d.log();
  const auto termAt = std::chrono::steady_clock::now();
  d.signal(SIGTERM);
  std::this_thread::sleep_for(1s);
  Restart restart{cluster};
  cluster.ctl("stop-apiserver");
  const int rc = d.wait(15s);
  const auto took = std::chrono::steady_clock::now() - termAt;
  const std::string log = d.log();
  EXPECT_EQ(rc, 0) << log;
  EXPECT_LT(took, 10s) << log;
  std::smatch m;
  ASSERT_TRUE(
      std::regex_search(log, m, std::regex(R"(stopped: .* (\d+) events sent, (\d+) dropped)")))
      << log;
  std::printf("exited %.1f s after SIGTERM; %s events sent, %s dropped\n",
              std::chrono::duration<double>(took).count(), m[1].str().c_str(), m[2].str().c_str());
}

}  // namespace
}  // namespace ksched::testing
