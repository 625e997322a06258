// The daemon (daemon.h). With leader election (the default), informers start at once (a follower
// keeps a warm cache) but pods are only popped and bound once this instance holds the Lease.
// Losing the Lease ends the process at once with exit code 1 ("leaderelection lost");
// SIGTERM/SIGINT stops scheduling, drains the binders, releases the Lease and exits 0.
#include "app/daemon.h"

#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <thread>
#include <utility>

#include "client/config.h"
#include "client/rest_client.h"
#include "framework/framework.h"
#include "leaderelection/leader_elector.h"
#include "scheduler/options_from_config.h"
#include "scheduler/scheduler.h"
#include "server/server.h"

namespace ksched::app {
namespace {

// "<hostname>_<uuid>", like kube-scheduler's leader-election identity.
std::string instanceId() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::random_device rd;
  std::mt19937_64 rng(rd());
  uint64_t a = rng(), b = rng();
  char uuid[40];
  std::snprintf(uuid, sizeof uuid, "%08x-%04x-4%03x-%04x-%012llx", static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff), static_cast<unsigned>(a & 0xfff),
                static_cast<unsigned>((b >> 48) & 0x3fff) | 0x8000,
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return std::string(host) + "_" + uuid;
}

// How long the Lease release (one update) may take on shutdown.
constexpr std::chrono::seconds kReleaseTimeout{2};

void logStopped(const scheduler::Scheduler& sched, const scheduler::ShutdownReport& report) {
  auto st = sched.stats();
  spdlog::info(
      "stopped: {} attempts, {} bound, {} unschedulable, {} errors; {} events sent, {} dropped "
      "({} at shutdown)",
      st.attempts, st.scheduled, st.unschedulable, st.errors, report.eventsSent,
      report.eventsDroppedTotal, report.eventsDropped);
}

// The soft limit on open files up to the hard one, as Go programs (kube-scheduler) start: each
// caller of the secure port holds a socket, and a flood of them must not starve the apiserver
// connections of descriptors.
void raiseOpenFileLimit() {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= rl.rlim_max) return;
  rl.rlim_cur = rl.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &rl) != 0) {
    spdlog::warn("raising the open file limit: {}", std::strerror(errno));
  }
}

// The scheduler's REST client and what it was made from.
struct Connection {
  client::Config cfg;
  std::unique_ptr<client::RestClient> rest;
};

// The client of clientConnection (and --master), once the apiserver answered GET /version;
// nullopt (logged) when the kubeconfig, the TLS material or the apiserver fails.
std::optional<Connection> connect(const config::CommandLine& flags,
                                  const config::SchedulerConfiguration& config) {
  Connection c;
  try {
    c.cfg = client::resolveConfig(config.clientConnection.kubeconfig, flags.master);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return std::nullopt;
  }
  c.cfg.qps = config.clientConnection.qps;
  c.cfg.burst = config.clientConnection.burst;
  // The client reads its TLS material now: a CA or client certificate that is not PEM is a
  // ConfigError.
  try {
    c.rest = std::make_unique<client::RestClient>(c.cfg);
  } catch (const client::ConfigError& e) {
    spdlog::error("{}", e.what());
    return std::nullopt;
  }
  try {
    const auto v = c.rest->get("/version");
    const auto gitVersion = v.is_object() ? v.find("gitVersion") : v.end();
    spdlog::info("ksched v{} connected to {} (Kubernetes {})", KSCHED_VERSION, c.cfg.server,
                 gitVersion != v.end() && gitVersion->is_string() ? gitVersion->get<std::string>()
                                                                  : std::string("?"));
  } catch (const client::ApiError& e) {
    spdlog::error("cannot reach the API server: {}", e.what());
    return std::nullopt;
  }
  return c;
}

// The elector's settings for `identity`, checked before anything is started: nullopt (logged)
// when they cannot be used. Without leader election, the defaults (unused).
std::optional<leaderelection::Config> electionConfigFor(
    const config::LeaderElectionConfiguration& leaderElection, const std::string& identity) {
  leaderelection::Config c;
  if (!leaderElection.leaderElect) return c;
  if (leaderElection.resourceLock != "leases") {
    spdlog::error("leader election: resourceLock \"{}\" is not supported, use \"leases\"",
                  leaderElection.resourceLock);
    return std::nullopt;
  }
  c.identity = identity;
  c.ns = leaderElection.resourceNamespace;
  c.name = leaderElection.resourceName;
  c.leaseDuration = leaderElection.leaseDuration;
  c.renewDeadline = leaderElection.renewDeadline;
  c.retryPeriod = leaderElection.retryPeriod;
  c.releaseOnCancel = true;
  if (auto err = leaderelection::validate(c); !err.empty()) {
    spdlog::error("leader election: {}", err);
    return std::nullopt;
  }
  return c;
}

// What the HTTPS endpoints serve: the scheduler's readiness and explain, its metrics, the
// elector's health (none while `elector` is null) and the configuration (/configz).
server::Hooks serverHooks(scheduler::Scheduler& sched, metrics::SchedulerMetrics& schedMetrics,
                          std::atomic<leaderelection::LeaderElector*>& elector,
                          const config::SchedulerConfiguration& config) {
  server::Hooks hooks;
  hooks.metrics = [&schedMetrics] { return schedMetrics.scrape(); };
  hooks.ready = [&sched] { return sched.informersSynced(); };
  hooks.livezLeaderCheck = [&elector]() -> std::string {
    auto* e = elector.load();
    return e == nullptr ? std::string() : e->check();
  };
  hooks.configz = [configz = nlohmann::json{{"componentconfig", config::toJson(config)}}.dump()] {
    return configz;
  };
  hooks.explain = [&sched](const std::string& ns, const std::string& name,
                           const std::string& node) -> std::pair<int, std::string> {
    try {
      return {200, scheduler::toJson(sched.explain(ns, name, node)).dump(2)};
    } catch (const scheduler::ExplainError& e) {
      return {e.httpCode(),
              server::statusBody(e.httpCode(), e.httpCode() == 404 ? "NotFound" : "BadRequest",
                                 e.what())};
    }
  };
  return hooks;
}

// Without leader election: schedules at once, until SIGTERM/SIGINT.
int scheduleUntilSignal(scheduler::Scheduler& sched, const sigset_t& sigs) {
  sched.startScheduling();
  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("received {}, shutting down", strsignal(sig));
  logStopped(sched, sched.stop());
  return 0;
}

// With leader election: schedules while this instance holds the Lease, until SIGTERM/SIGINT
// (then drains, releases the Lease and returns 0); a lost Lease ends the process with 1.
// `electorForHealth` points at the elector while it runs.
int scheduleWhileLeading(scheduler::Scheduler& sched, const sigset_t& sigs,
                         const client::Config& cfg, leaderelection::Config electionConfig,
                         metrics::SchedulerMetrics& schedMetrics,
                         std::atomic<leaderelection::LeaderElector*>& electorForHealth) {
  // Leader election has its own client and limiter (no retries inside: the elector retries every
  // retryPeriod, and a request must not outlive the renew deadline).
  client::RestClient::Options electionClientOptions;
  electionClientOptions.maxRetries = 0;
  electionClientOptions.requestTimeout = std::max<std::chrono::seconds>(
      std::chrono::seconds(1),
      std::chrono::duration_cast<std::chrono::seconds>(electionConfig.renewDeadline));
  electionClientOptions.connectTimeout =
      std::min(electionClientOptions.connectTimeout, electionClientOptions.requestTimeout);
  client::RestClient electionRest(cfg, electionClientOptions);
  leaderelection::ApiLeaseClient leaseClient(electionRest, electionConfig.ns, electionConfig.name);
  std::mutex startMu;
  bool terminating = false;  // guarded by startMu
  bool led = false;          // guarded by startMu
  schedMetrics.setLeader(electionConfig.name, false);
  electionConfig.onStartedLeading = [&sched, &startMu, &terminating, &led, &schedMetrics,
                                     lease = electionConfig.name] {
    std::lock_guard lock(startMu);
    if (terminating) return;
    led = true;
    schedMetrics.setLeader(lease, true);
    spdlog::info("started leading: scheduling");
    sched.startScheduling();
  };
  electionConfig.onStoppedLeading = [&schedMetrics, lease = electionConfig.name] {
    schedMetrics.setLeader(lease, false);
  };
  electionConfig.onNewLeader = [identity = electionConfig.identity](const std::string& holder) {
    if (holder != identity) spdlog::info("leaderelection: new leader elected: {}", holder);
  };
  leaderelection::LeaderElector elector(electionConfig, leaseClient);
  electorForHealth = &elector;
  struct DetachHealth {
    std::atomic<leaderelection::LeaderElector*>& p;
    ~DetachHealth() { p = nullptr; }
  } detachHealth{electorForHealth};
  std::jthread electionThread([&elector, &startMu, &terminating](std::stop_token st) {
    pthread_setname_np(pthread_self(), "leaderelection");
    if (elector.run(st)) return;
    {
      std::lock_guard lock(startMu);
      if (terminating) return;
    }
    // Another instance may already be scheduling: stop at once, without draining.
    spdlog::error("leaderelection lost");
    spdlog::default_logger()->flush();
    std::_Exit(1);
  });

  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("received {}, shutting down", strsignal(sig));
  {
    std::lock_guard lock(startMu);
    terminating = true;
  }
  // Still holding the Lease (renewals go on) while the binders drain; then give it up.
  const scheduler::ShutdownReport report = sched.stop();
  {
    // The release is one update: an apiserver that does not answer gets kReleaseTimeout.
    client::AbortAt cutOff(std::chrono::steady_clock::now() + kReleaseTimeout, {&electionRest});
    electionThread.request_stop();
    electionThread.join();
  }
  if (led && elector.leader().empty())
    spdlog::info("leaderelection: released lease {}", leaseClient.describe());
  logStopped(sched, report);
  return 0;
}

}  // namespace

scheduler::Options daemonOptions(const config::SchedulerConfiguration& config,
                                 const config::CommandLine& flags, const std::string& identity,
                                 metrics::SchedulerMetrics* metrics) {
  scheduler::Options opts = scheduler::optionsFromConfig(config, flags);
  opts.instanceId = identity;
  opts.metrics = metrics;
  return opts;
}

int runDaemon(const config::CommandLine& flags, const config::SchedulerConfiguration& config,
              const Registry& registry) {
  // Signals are taken synchronously by the main thread; every other thread has them blocked.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  std::optional<Connection> connection = connect(flags, config);
  if (!connection) return 1;
  const std::string identity = instanceId();
  const std::optional<leaderelection::Config> electionConfig =
      electionConfigFor(config.leaderElection, identity);
  if (!electionConfig) return 1;

  // Events get their own client and limiter so that they never starve bindings.
  client::RestClient eventsRest(connection->cfg);
  // Outlives the scheduler and the server, which record into it.
  metrics::SchedulerMetrics schedMetrics;
  const scheduler::Options opts = daemonOptions(config, flags, identity, &schedMetrics);
  std::unique_ptr<scheduler::Scheduler> sched;
  try {
    sched = std::make_unique<scheduler::Scheduler>(*connection->rest, eventsRest, registry, opts);
  } catch (const framework::FrameworkError& e) {
    spdlog::error("invalid configuration:\n{}", e.what());
    return 1;
  }

  // HTTPS endpoints, up before the informers so that /readyz says 503 until they synced.
  std::atomic<leaderelection::LeaderElector*> electorForHealth{nullptr};
  server::Hooks hooks = serverHooks(*sched, schedMetrics, electorForHealth, config);
  std::unique_ptr<server::Server> srv;  // stopped before the scheduler goes (hooks use it)
  try {
    if (flags.serving.securePort != 0) {
      hooks.access = server::makeAccessControl(flags.serving, connection->cfg);
    }
    raiseOpenFileLimit();
    srv = server::Server::start(flags.serving, hooks);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  struct StopServerFirst {
    std::unique_ptr<server::Server>& srv;
    ~StopServerFirst() { srv.reset(); }
  } stopServerFirst{srv};

  if (!sched->startInformers(std::chrono::seconds(60))) {
    spdlog::error("{}", sched->syncError());
    return 1;
  }
  std::string names;
  for (const auto& p : opts.profiles) names += (names.empty() ? "" : ", ") + p.schedulerName;
  spdlog::info("synced: {} nodes, {} pods; scheduling pods of schedulerName {}", sched->nodeCount(),
               sched->podCount(), names);
  if (!config.leaderElection.leaderElect) return scheduleUntilSignal(*sched, sigs);
  return scheduleWhileLeading(*sched, sigs, connection->cfg, *electionConfig, schedMetrics,
                              electorForHealth);
}

}  // namespace ksched::app
