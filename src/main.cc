// ksched: wiring only. Connects, starts the scheduler (informers, queue, loop, binders) and
// shuts down cleanly on SIGTERM/SIGINT.
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>

#include "client/config.h"
#include "client/rest_client.h"
#include "framework/framework.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"

namespace {

struct Flags {
  std::string kubeconfig;
  std::string master;
  int verbosity = 0;
  double qps = 50;  // kube-scheduler's clientConnection defaults
  int burst = 100;
};

void usage() {
  std::puts(
      "Usage: ksched [flags]\n"
      "\n"
      "  --kubeconfig string   path to a kubeconfig (default: in-cluster, then $KUBECONFIG,\n"
      "                        then ~/.kube/config)\n"
      "  --master string       the address of the Kubernetes API server (overrides kubeconfig)\n"
      "  --kube-api-qps float  QPS to use while talking with kube-apiserver (default 50)\n"
      "  --kube-api-burst int  burst to use while talking with kube-apiserver (default 100)\n"
      "  -v, --v int           log verbosity (0 quiet ... 4 per-pod ... 10 everything)\n"
      "  --version             print the version and exit\n"
      "  -h, --help            this help");
}

// Accepts "--flag value" and "--flag=value", one or two leading dashes, like kube-scheduler.
int parseFlags(int argc, char** argv, Flags& f) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    std::string name = a;
    std::string value;
    bool hasValue = false;
    if (auto eq = a.find('='); eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      hasValue = true;
    }
    while (!name.empty() && name.front() == '-') name.erase(0, 1);
    auto take = [&](std::string& out) {
      if (hasValue) {
        out = value;
        return true;
      }
      if (i + 1 >= argc) return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    if (name == "help" || name == "h") {
      usage();
      return 0;
    } else if (name == "version") {
      std::puts("ksched v" KSCHED_VERSION);
      return 0;
    } else if (name == "kubeconfig") {
      if (!take(f.kubeconfig)) return std::fprintf(stderr, "--kubeconfig: needs a value\n"), 1;
    } else if (name == "master") {
      if (!take(f.master)) return std::fprintf(stderr, "--master: needs a value\n"), 1;
    } else if (name == "kube-api-qps" || name == "kube-api-burst") {
      if (!take(v)) return std::fprintf(stderr, "--%s: needs a value\n", name.c_str()), 1;
      try {
        if (name == "kube-api-qps") {
          f.qps = std::stod(v);
        } else {
          f.burst = std::stoi(v);
        }
      } catch (const std::exception&) {
        return std::fprintf(stderr, "--%s: \"%s\" is not a number\n", name.c_str(), v.c_str()), 1;
      }
    } else if (name == "v") {
      if (!take(v)) return std::fprintf(stderr, "-v: needs a value\n"), 1;
      try {
        f.verbosity = std::stoi(v);
      } catch (const std::exception&) {
        return std::fprintf(stderr, "-v: \"%s\" is not an integer\n", v.c_str()), 1;
      }
    } else {
      std::fprintf(stderr, "unknown flag: %s\n", argv[i]);
      usage();
      return 1;
    }
  }
  return -1;
}

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
  Flags flags;
  if (int rc = parseFlags(argc, argv, flags); rc >= 0) return rc;
  spdlog::set_pattern("%^%L%m%d %H:%M:%S.%f%$ %t %v");
  spdlog::set_level(flags.verbosity >= 6   ? spdlog::level::trace
                    : flags.verbosity >= 2 ? spdlog::level::debug
                                           : spdlog::level::info);

  // Signals are taken synchronously by the main thread; every other thread has them blocked.
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  using namespace ksched;
  client::Config cfg;
  try {
    cfg = client::resolveConfig(flags.kubeconfig, flags.master);
  } catch (const std::exception& e) {
    spdlog::error("{}", e.what());
    return 1;
  }
  cfg.qps = flags.qps;
  cfg.burst = flags.burst;
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
  spdlog::info("synced: {} nodes, {} pods; scheduling pods of schedulerName {}", sched->nodeCount(),
               sched->podCount(), config::kDefaultSchedulerName);
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
