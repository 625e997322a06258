// ksched: wiring only. Reads the flags and the --config file, connects, starts the scheduler
// (informers, queue, loop, binders) and shuts down cleanly on SIGTERM/SIGINT.
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "client/config.h"
#include "client/rest_client.h"
#include "config/command_line.h"
#include "config/scheduler_config.h"
#include "framework/framework.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"

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

}  // namespace

int main(int argc, char** argv) {
  using namespace ksched;
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
  spdlog::set_pattern("%^%L%m%d %H:%M:%S.%f%$ %t %v");
  spdlog::set_level(flags.verbosity >= 6   ? spdlog::level::trace
                    : flags.verbosity >= 2 ? spdlog::level::debug
                                           : spdlog::level::info);

  // The whole configuration is checked before anything is contacted.
  std::vector<std::string> warnings;
  auto loaded = config::resolveConfiguration(flags, plugins::inTreeRegistry(), warnings);
  for (const auto& w : warnings) spdlog::warn("{}", w);
  if (!loaded.ok()) {
    std::fprintf(stderr, "invalid configuration%s%s:\n", flags.configFile.empty() ? "" : " in ",
                 flags.configFile.c_str());
    for (const auto& e : loaded.errors) std::fprintf(stderr, "  %s\n", e.c_str());
    return 1;
  }
  const config::SchedulerConfiguration& componentConfig = *loaded.config;
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
  if (!componentConfig.extenders.empty()) {
    spdlog::warn("{} extender(s) configured: ksched does not call extenders yet, ignoring them",
                 componentConfig.extenders.size());
  }
  // For leader election and the HTTPS endpoints (not served yet).
  const config::LeaderElectionConfiguration& leaderElection = componentConfig.leaderElection;
  const config::ServingOptions& serving = flags.serving;
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
  client::RestClient rest(cfg);
  try {
    auto v = rest.get("/version");
    spdlog::info("ksched v{} connected to {} (Kubernetes {})", KSCHED_VERSION, cfg.server,
                 v.value("gitVersion", "?"));
  } catch (const client::ApiError& e) {
    spdlog::error("cannot reach the API server: {}", e.what());
    return 1;
  }

  // Events get their own client and limiter so that they never starve bindings.
  client::RestClient eventsRest(cfg);
  scheduler::Options opts;
  opts.instanceId = instanceId();
  opts.profiles = config::frameworkProfiles(componentConfig);
  opts.parallelism = componentConfig.parallelism;
  opts.percentageOfNodesToScore = componentConfig.percentageOfNodesToScore;
  opts.queue.podInitialBackoff = std::chrono::seconds(componentConfig.podInitialBackoffSeconds);
  opts.queue.podMaxBackoff = std::chrono::seconds(componentConfig.podMaxBackoffSeconds);
  std::unique_ptr<scheduler::Scheduler> sched;
  try {
    sched =
        std::make_unique<scheduler::Scheduler>(rest, eventsRest, plugins::inTreeRegistry(), opts);
  } catch (const framework::FrameworkError& e) {
    spdlog::error("invalid configuration:\n{}", e.what());
    return 1;
  }
  if (!sched->startInformers(std::chrono::seconds(60))) {
    spdlog::error("informers did not sync within 60 s");
    return 1;
  }
  std::string names;
  for (const auto& p : opts.profiles) names += (names.empty() ? "" : ", ") + p.schedulerName;
  spdlog::info("synced: {} nodes, {} pods; scheduling pods of schedulerName {}", sched->nodeCount(),
               sched->podCount(), names);
  sched->startScheduling();

  int sig = 0;
  sigwait(&sigs, &sig);
  spdlog::info("received {}, shutting down", strsignal(sig));
  sched->stop();
  auto st = sched->stats();
  spdlog::info("stopped: {} attempts, {} bound, {} unschedulable, {} errors", st.attempts,
               st.scheduled, st.unschedulable, st.errors);
  return 0;
}
