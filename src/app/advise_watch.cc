#include "app/advise_watch.h"

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <ctime>
#include <map>
#include <nlohmann/json.hpp>

#include <ksched/api/rfc3339.h>

#include "client/rest_client.h"
#include "metrics/metrics.h"
#include "server/access.h"
#include "server/server.h"

namespace ksched::app {

struct WatchState::Metrics {
  std::shared_ptr<prometheus::Registry> registry = std::make_shared<prometheus::Registry>();
  prometheus::Family<prometheus::Gauge>& gauge(const std::string& name, const std::string& help) {
    return prometheus::BuildGauge().Name(name).Help(help).Register(*registry);
  }
  prometheus::Family<prometheus::Gauge>& moves =
      gauge("ksched_advise_plan_moves", "Moves the last plan has.");
  prometheus::Family<prometheus::Gauge>& movesOff =
      gauge("ksched_advise_plan_moves_off_node", "Moves the last plan has off each node.");
  prometheus::Family<prometheus::Gauge>& toFree = gauge(
      "ksched_advise_nodes_to_free", "Nodes the last plan frees (--free-nodes, --scale-down).");
  prometheus::Family<prometheus::Gauge>& overBand =
      gauge("ksched_advise_nodes_over_band", "Nodes above the band before the moves (--balance).");
  prometheus::Family<prometheus::Gauge>& overSkew =
      gauge("ksched_advise_constraints_over_max_skew",
            "Topology spread constraints above their maxSkew before the moves (--spread).");
  prometheus::Family<prometheus::Gauge>& drifted =
      gauge("ksched_advise_drifted", "1 while the last plan has --drift-moves moves or more.");
  prometheus::Gauge& duration =
      gauge("ksched_advise_plan_duration_seconds", "How long the last plan took.").Add({});
  prometheus::Gauge& last = gauge("ksched_advise_last_plan_timestamp_seconds",
                                  "When the last plan ended, in Unix seconds.")
                                .Add({});
  prometheus::Family<prometheus::Counter>& plans = prometheus::BuildCounter()
                                                       .Name("ksched_advise_plans_total")
                                                       .Help("Rounds, by result.")
                                                       .Register(*registry);
  prometheus::Counter& planned = plans.Add({{"result", "planned"}});
  prometheus::Counter& errors = plans.Add({{"result", "error"}});
  std::map<std::string, prometheus::Gauge*> offNode;  // the children of movesOff
  metrics::ProcessCollector process;
};

WatchState::WatchState() : m_(std::make_unique<Metrics>()) {}
WatchState::~WatchState() = default;

std::set<std::string> WatchState::planned(const advise::Plan& plan, size_t driftMoves,
                                          double unixSeconds) {
  const std::map<std::string, std::string> goal{{"goal", plan.goal}};
  m_->moves.Add(goal).Set(static_cast<double>(plan.moves.size()));
  std::map<std::string, int> off;
  for (const auto& mv : plan.moves) ++off[mv.from];
  for (auto it = m_->offNode.begin(); it != m_->offNode.end();) {
    if (off.contains(it->first)) {
      ++it;
    } else {
      m_->movesOff.Remove(it->second);
      it = m_->offNode.erase(it);
    }
  }
  for (const auto& [node, n] : off) {
    auto& g = m_->offNode[node];
    if (g == nullptr) g = &m_->movesOff.Add({{"goal", plan.goal}, {"node", node}});
    g->Set(n);
  }
  if (plan.balance) {
    m_->overBand.Add(goal).Set(static_cast<double>(plan.balance->overBefore));
  } else if (plan.goal == "--spread") {
    size_t over = 0;
    for (const auto& k : plan.skews) over += k.before > k.maxSkew ? 1 : 0;
    m_->overSkew.Add(goal).Set(static_cast<double>(over));
  } else if (plan.forPod.empty()) {
    m_->toFree.Add(goal).Set(static_cast<double>(plan.cordon.size()));
  }
  const bool drift = !plan.moves.empty() && plan.moves.size() >= driftMoves;
  m_->drifted.Add(goal).Set(drift ? 1 : 0);
  m_->duration.Set(plan.seconds);
  m_->last.Set(unixSeconds);
  m_->planned.Increment();
  if (!drift) {
    warned_.clear();
    return {};
  }
  std::set<std::string> warn;
  for (const auto& [node, n] : off) {
    if (warned_.insert(node).second) warn.insert(node);
  }
  return warn;
}

void WatchState::failed() { m_->errors.Increment(); }

std::string WatchState::scrape() const {
  auto families = m_->registry->Collect();
  for (auto& f : m_->process.Collect()) families.push_back(std::move(f));
  return prometheus::TextSerializer().Serialize(families);
}

nlohmann::json driftEvent(const std::string& node, const advise::Plan& plan, size_t driftMoves) {
  std::string first;
  size_t off = 0;
  for (const auto& m : plan.moves) {
    if (m.from != node) continue;
    if (off++ == 0) first = m.namespace_ + "/" + m.name + " to " + m.to + " (" + m.why + ")";
  }
  const std::string now = api::formatRFC3339(std::chrono::system_clock::now());
  return {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"generateName", node + "."}, {"namespace", "default"}}},
      {"involvedObject", {{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", node}}},
      {"reason", "Drifted"},
      {"message", "ksched advise (" + plan.goal + "): " + std::to_string(plan.moves.size()) +
                      " moves planned (--drift-moves " + std::to_string(driftMoves) + "), " +
                      std::to_string(off) + " off this node, the first: " + first},
      {"type", "Warning"},
      {"source", {{"component", "ksched-advise"}}},
      {"reportingComponent", "ksched-advise"},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1}};
}

int watchPlans(client::RestClient& rest, const client::Config& cfg, const WatchOptions& o,
               const std::function<advise::Plan()>& plan,
               const std::function<void(const std::string&)>& say) {
  sigset_t sigs;
  sigemptyset(&sigs);
  sigaddset(&sigs, SIGTERM);
  sigaddset(&sigs, SIGINT);
  pthread_sigmask(SIG_BLOCK, &sigs, nullptr);

  WatchState state;
  std::atomic<bool> ready{false};
  server::Hooks hooks;
  hooks.metrics = [&state] { return state.scrape(); };
  hooks.ready = [&ready] { return ready.load(); };
  std::unique_ptr<server::Server> srv;
  try {
    if (o.serving.securePort != 0) hooks.access = server::makeAccessControl(o.serving, cfg);
    srv = server::Server::start(o.serving, hooks);
  } catch (const std::exception& e) {
    say(std::string("serving: ") + e.what());
    return 1;
  }
  if (srv) say("serving /metrics on port " + std::to_string(srv->port()));
  for (int round = 1;; ++round) {
    try {
      const advise::Plan p = plan();
      const auto warn = state.planned(
          p, o.driftMoves,
          std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
              .count());
      ready = true;
      char line[160];
      std::snprintf(line, sizeof line, "round %d: %s: %zu moves, planned in %.2f s", round,
                    p.goal.c_str(), p.moves.size(), p.seconds);
      say(line);
      for (const auto& node : warn) {
        try {
          rest.create("/api/v1/namespaces/default/events", driftEvent(node, p, o.driftMoves));
          say("warned: node " + node + " (Drifted)");
        } catch (const std::exception& e) {
          say("warning: no Event on node " + node + ": " + e.what());
        }
      }
    } catch (const std::exception& e) {
      state.failed();
      say("round " + std::to_string(round) + " failed: " + e.what());
    }
    const auto s = std::chrono::duration_cast<std::chrono::seconds>(o.every);
    const timespec wait{static_cast<time_t>(s.count()),
                        static_cast<long>((o.every - s).count() * 1'000'000)};
    int sig = -1;
    do {
      sig = sigtimedwait(&sigs, nullptr, &wait);
    } while (sig < 0 && errno == EINTR);
    if (sig > 0) {
      say("stopping");
      if (srv) srv->stop();
      return 0;
    }
  }
}

}  // namespace ksched::app
