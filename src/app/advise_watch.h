// ksched advise --watch: the plan made again every interval over the live cluster, published
// as metrics on an HTTPS endpoint (the daemon's serving: /metrics, /healthz, /livez, /readyz),
// with a Warning Event on each node the plan moves pods off once the plan has drifted to
// --drift-moves moves or more. Nothing is changed otherwise; runs until SIGTERM or SIGINT.
//
// Metrics (gauges of the last plan, labelled with the goal, "--balance" say):
//   ksched_advise_plan_moves              moves planned
//   ksched_advise_plan_moves_off_node     moves planned off each node ({goal, node})
//   ksched_advise_nodes_to_free           nodes the plan frees (--free-nodes, --scale-down)
//   ksched_advise_nodes_over_band         nodes above the band (--balance)
//   ksched_advise_constraints_over_max_skew  topology spread constraints above maxSkew (--spread)
//   ksched_advise_drifted                 1 while the plan has --drift-moves moves or more
//   ksched_advise_plan_duration_seconds   how long the last plan took
//   ksched_advise_last_plan_timestamp_seconds  when it ended (Unix seconds)
// and ksched_advise_plans_total{result="planned"|"error"} (a counter), plus the process metrics.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <set>
#include <string>

#include "advise/plan.h"
#include "config/command_line.h"

namespace ksched::client {
class RestClient;
struct Config;
}  // namespace ksched::client

namespace ksched::app {

struct WatchOptions {
  std::chrono::milliseconds every{60'000};  // --watch-interval
  size_t driftMoves = 1;                    // --drift-moves
  config::ServingOptions serving;           // --secure-port (default 10258), --bind-address
};

// The metrics of the plans so far, and the drift: what a round changes. Unit-tested apart from
// the loop.
class WatchState {
 public:
  WatchState();
  ~WatchState();
  WatchState(const WatchState&) = delete;
  WatchState& operator=(const WatchState&) = delete;

  // A plan was made at `unixSeconds`: the gauges follow it. Returns the nodes to warn about:
  // the nodes moves leave, while the plan has `driftMoves` moves or more, not warned about
  // since the plan last drifted (none once it is back under).
  std::set<std::string> planned(const advise::Plan& plan, size_t driftMoves, double unixSeconds);
  // A round that could not plan (the cluster unreadable, say).
  void failed();
  // The text exposition of every metric.
  [[nodiscard]] std::string scrape() const;

 private:
  struct Metrics;
  std::unique_ptr<Metrics> m_;
  std::set<std::string> warned_;  // nodes warned about in this drift
};

// The Warning Event on `node` for `plan` (Node events go to namespace "default", as the
// kubelet's do).
[[nodiscard]] nlohmann::json driftEvent(const std::string& node, const advise::Plan& plan,
                                        size_t driftMoves);

// Runs until SIGTERM or SIGINT (blocked in every thread; call before starting any): `plan`
// every o.every, the metrics served, Events posted through `rest`. `say` gets a line per round.
// Returns 0, or 1 when serving cannot start.
int watchPlans(client::RestClient& rest, const client::Config& cfg, const WatchOptions& o,
               const std::function<advise::Plan()>& plan,
               const std::function<void(const std::string&)>& say);

}  // namespace ksched::app
