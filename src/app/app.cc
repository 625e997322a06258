// ksched::app::run: the daemon's wiring. Reads the flags and the --config file, connects, starts
// the scheduler (informers, queue, loop, binders) and shuts down cleanly on SIGTERM/SIGINT.
//
// With leader election (the default), informers start at once (a follower keeps a warm cache)
// but pods are only popped and bound once this instance holds the Lease. Losing the Lease ends
// the process at once with exit code 1 ("leaderelection lost"); SIGTERM/SIGINT stops
// scheduling, drains the binders, releases the Lease and exits 0.
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/app.h>

#include "app/explain_cli.h"
#include "app/simulate_cli.h"
#include "client/config.h"
#include "client/rest_client.h"
#include "config/command_line.h"
#include "config/policy.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "framework/framework.h"
#include "leaderelection/leader_elector.h"
#include "metrics/metrics.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "server/server.h"

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

void logStopped(const ksched::scheduler::Scheduler& sched,
                const ksched::scheduler::ShutdownReport& report) {
  auto st = sched.stats();
  spdlog::info(
      "stopped: {} attempts, {} bound, {} unschedulable, {} errors; {} events sent, {} dropped",
      st.attempts, st.scheduled, st.unschedulable, st.errors, report.eventsSent,
      report.eventsDropped);
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

}  // namespace

namespace ksched::app {

int run(int argc, char** argv, const Registry& outOfTree) {
  Registry registry = plugins::inTreeRegistry();
  try {
    registry.merge(outOfTree);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "out-of-tree plugins: %s\n", e.what());
    return 1;
  }
  if (argc >= 2 && std::string_view(argv[1]) == "simulate") {
    return runSimulate(std::vector<std::string>(argv + 2, argv + argc), outOfTree);
  }
  if (argc >= 2 && std::string_view(argv[1]) == "explain") {
    return runExplain(std::vector<std::string>(argv + 2, argv + argc), registry);
  }
  // Installed as kubectl-ksched, the binary is a kubectl plugin with explain as its one command.
  if (std::string_view prog(argv[0]); prog.substr(prog.rfind('/') + 1) == "kubectl-ksched") {
    std::fputs(explainUsage().c_str(),
               argc >= 2 && std::string_view(argv[1]) == "--help" ? stdout : stderr);
    return argc >= 2 && std::string_view(argv[1]) == "--help" ? 0 : 1;
  }
  const auto parsed = config::parseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  const config::CommandLine& flags = parsed.flags;
  if (flags.help) {
    std::fputs(config::usage().c_str(), stdout);
    return 0;
  }
  if (flags.version) {
    std::puts("ksched v" KSCHED_VERSION);
    return 0;
  }
  if (!parsed.errors.empty()) {
    for (const auto& e : parsed.errors) std::fprintf(stderr, "%s\n", e.c_str());
    std::fputs("Run 'ksched --help' for the flags.\n", stderr);
    return 1;
  }
  std::vector<std::string> gateErrors;
  std::vector<std::string> gateWarnings;
  flags.featureGates.check(gateErrors, gateWarnings);
  if (!gateErrors.empty()) {
    for (const auto& e : gateErrors) std::fprintf(stderr, "%s\n", e.c_str());
    return 1;
  }
  spdlog::set_pattern("%^%L%m%d %H:%M:%S.%f%$ %t %v");
  spdlog::set_level(flags.verbosity >= 6   ? spdlog::level::trace
                    : flags.verbosity >= 2 ? spdlog::level::debug
                                           : spdlog::level::info);
  if (const std::string changed = flags.featureGates.changed(); !changed.empty()) {
    spdlog::info("feature gates: {}", changed);
  }
  for (const auto& w : gateWarnings) spdlog::warn("{}", w);

  // The whole configuration is checked before anything is contacted.
  std::vector<std::string> warnings;
  // --policy-configmap: read once, before anything else starts (as v1.20, no retry loop).
  auto readPolicyConfigMap = [&flags](const config::ClientConnectionConfiguration& connection,
                                      const std::string& ns, const std::string& name) {
    client::Config cfg = client::resolveConfig(connection.kubeconfig, flags.master);
    client::RestClient rest(cfg);
    nlohmann::json cm;
    try {
      cm = rest.get("/api/v1/namespaces/" + ns + "/configmaps/" + name);
    } catch (const client::ApiError& e) {
      throw std::runtime_error(std::string("couldn't get policy config map: ") + e.what());
    }
    const auto data = cm.value("data", nlohmann::json::object());
    auto it = data.find(config::kPolicyConfigMapKey);
    if (it == data.end() || !it->is_string()) {
      throw std::runtime_error("missing policy config map value at key \"" +
                               std::string(config::kPolicyConfigMapKey) + "\"");
    }
    return it->get<std::string>();
  };
  auto loaded = config::resolveConfiguration(flags, config::wiringCheck(registry), warnings,
                                             readPolicyConfigMap);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  if (!loaded.ok()) {
    std::fprintf(stderr, "invalid configuration%s%s:\n", flags.configFile.empty() ? "" : " in ",
                 flags.configFile.c_str());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  %s\n", e.c_str());
    return 1;
  }
  const config::SchedulerConfiguration& componentConfig = *loaded.config;
  for (const auto& note : componentConfig.notes) {
    spdlog::info("configuration{}{}: {}", note.pointer.empty() ? "" : " ", note.pointer, note.text);
  }
  if (!flags.writeConfigTo.empty()) {
    std::ofstream out(flags.writeConfigTo, std::ios::trunc);
    out << config::toYaml(componentConfig);
    out.close();
    if (!out) {
      std::fprintf(stderr, "cannot write %s: %s\n", flags.writeConfigTo.c_str(),
                   std::strerror(errno));
      return 1;
    }
    spdlog::info("wrote configuration to {}", flags.writeConfigTo);
    return 0;
  }
  const config::LeaderElectionConfiguration& leaderElection = componentConfig.leaderElection;
  const config::ServingOptions& serving = flags.serving;
  if (auto err = server::checkTlsOptions(serving); serving.securePort != 0 && !err.empty()) {
    std::fprintf(stderr, "%s\n", err.c_str());
    return 1;
  }
  spdlog::debug("leader election: elect={} lease={} renew={} retry={} lock={}/{}/{}",
                leaderElection.leaderElect, config::formatDuration(leaderElection.leaseDuration),
                config::formatDuration(leaderElection.renewDeadline),
                config::formatDuration(leaderElection.retryPeriod), leaderElection.resourceLock,
                leaderElection.resourceNamespace, leaderElection.resourceName);
  spdlog::debug("secure serving: {}:{} (cert-dir \"{}\", cert \"{}\")", serving.bindAddress,
                serving.securePort, serving.certDir, serving.tlsCertFile);

  // Signals are taken synchronously by the main thread; every other thread has them blocked.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  client::Config cfg;
  try {
    cfg = client::resolveConfig(componentConfig.clientConnection.kubeconfig, flags.master);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  cfg.qps = componentConfig.clientConnection.qps;
  cfg.burst = componentConfig.clientConnection.burst;
  // The client reads its TLS material now: a CA or client certificate that is not PEM is a
  // ConfigError.
  std::unique_ptr<client::RestClient> restClient;
  try {
    restClient = std::make_unique<client::RestClient>(cfg);
  } catch (const client::ConfigError& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  client::RestClient& rest = *restClient;
  try {
    const auto v = rest.get("/version");
    const auto gitVersion = v.is_object() ? v.find("gitVersion") : v.end();
    spdlog::info("ksched v{} connected to {} (Kubernetes {})", KSCHED_VERSION, cfg.server,
                 gitVersion != v.end() && gitVersion->is_string() ? gitVersion->get<std::string>()
                                                                  : std::string("?"));
  } catch (const client::ApiError& e) {
    spdlog::error("cannot reach the API server: {}", e.what());
    return 1;
  }

  // Leader election is checked before anything is started.
  const std::string identity = instanceId();
  leaderelection::Config electionConfig;
  if (leaderElection.leaderElect) {
    if (leaderElection.resourceLock != "leases") {
      spdlog::error("leader election: resourceLock \"{}\" is not supported, use \"leases\"",
                    leaderElection.resourceLock);
      return 1;
    }
    electionConfig.identity = identity;
    electionConfig.ns = leaderElection.resourceNamespace;
    electionConfig.name = leaderElection.resourceName;
    electionConfig.leaseDuration = leaderElection.leaseDuration;
    electionConfig.renewDeadline = leaderElection.renewDeadline;
    electionConfig.retryPeriod = leaderElection.retryPeriod;
    electionConfig.releaseOnCancel = true;
    if (auto err = leaderelection::validate(electionConfig); !err.empty()) {
      spdlog::error("leader election: {}", err);
      return 1;
    }
  }

  // Events get their own client and limiter so that they never starve bindings.
  client::RestClient eventsRest(cfg);
  scheduler::Options opts;
  opts.instanceId = identity;
  opts.features = componentConfig.featureGates;
  opts.profiles = config::frameworkProfiles(componentConfig);
  opts.parallelism = componentConfig.parallelism;
  opts.percentageOfNodesToScore = componentConfig.percentageOfNodesToScore;
  opts.extenders = componentConfig.extenders;
  opts.diagnosisAnnotation = flags.diagnosisAnnotation;
  opts.shutdownGracePeriod =
      std::chrono::duration_cast<std::chrono::milliseconds>(flags.shutdownGracePeriod);
  opts.queue.podInitialBackoff = std::chrono::seconds(componentConfig.podInitialBackoffSeconds);
  opts.queue.podMaxBackoff = std::chrono::seconds(componentConfig.podMaxBackoffSeconds);
  // Outlives the scheduler and the server, which record into it.
  metrics::SchedulerMetrics schedMetrics;
  opts.metrics = &schedMetrics;
  std::unique_ptr<scheduler::Scheduler> sched;
  try {
    sched = std::make_unique<scheduler::Scheduler>(rest, eventsRest, registry, opts);
  } catch (const framework::FrameworkError& e) {
    spdlog::error("invalid configuration:\n{}", e.what());
    return 1;
  }

  // HTTPS endpoints, up before the informers so that /readyz says 503 until they synced.
  std::atomic<leaderelection::LeaderElector*> electorForHealth{nullptr};
  server::Hooks hooks;
  hooks.metrics = &schedMetrics;
  hooks.ready = [&sched] { return sched->informersSynced(); };
  hooks.livezLeaderCheck = [&electorForHealth]() -> std::string {
    auto* e = electorForHealth.load();
    return e == nullptr ? std::string() : e->check();
  };
  const std::string configz =
      nlohmann::json{{"componentconfig", config::toJson(componentConfig)}}.dump();
  hooks.configz = [&configz] { return configz; };
  hooks.explain = [&sched](const std::string& ns, const std::string& name,
                           const std::string& node) -> std::pair<int, std::string> {
    try {
      return {200, scheduler::toJson(sched->explain(ns, name, node)).dump(2)};
    } catch (const scheduler::ExplainError& e) {
      return {e.httpCode(),
              server::statusBody(e.httpCode(), e.httpCode() == 404 ? "NotFound" : "BadRequest",
                                 e.what())};
    }
  };
  std::unique_ptr<server::Server> srv;  // stopped before the scheduler goes (hooks use it)
  try {
    if (serving.securePort != 0) hooks.access = server::makeAccessControl(serving, cfg);
    raiseOpenFileLimit();
    srv = server::Server::start(serving, hooks);
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
  if (!leaderElection.leaderElect) {
    sched->startScheduling();
    int sig = 0;
    sigwait(&sigs, &sig);
    spdlog::info("received {}, shutting down", strsignal(sig));
    logStopped(*sched, sched->stop());
    return 0;
  }

  // Leader election has its own client and limiter (no retries inside: the elector retries every
  // retryPeriod, and a request must not outlive the renew deadline).
  client::RestClient::Options electionClientOptions;
  electionClientOptions.maxRetries = 0;
  electionClientOptions.requestTimeout = std::max<std::chrono::seconds>(
      std::chrono::seconds(1),
      std::chrono::duration_cast<std::chrono::seconds>(leaderElection.renewDeadline));
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
    sched->startScheduling();
  };
  electionConfig.onStoppedLeading = [&schedMetrics, lease = electionConfig.name] {
    schedMetrics.setLeader(lease, false);
  };
  electionConfig.onNewLeader = [&identity](const std::string& holder) {
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
  const scheduler::ShutdownReport report = sched->stop();
  {
    // The release is one update: an apiserver that does not answer gets kReleaseTimeout.
    client::AbortAt cutOff(std::chrono::steady_clock::now() + kReleaseTimeout, {&electionRest});
    electionThread.request_stop();
    electionThread.join();
  }
  if (led && elector.leader().empty())
    spdlog::info("leaderelection: released lease {}", leaseClient.describe());
  logStopped(*sched, report);
  return 0;
}

}  // namespace ksched::app
