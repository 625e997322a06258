#include "extender/extenders.h"

#include <pthread.h>
#include <spdlog/spdlog.h>

#include <string_view>
#include <thread>
#include <unordered_map>

namespace ksched::extender {

Status findNodesThatPassExtenders(const ExtenderList& extenders, const api::Pod& pod,
                                  std::vector<const NodeInfo*>& feasible, NodeToStatus& statuses) {
  for (const auto& e : extenders) {
    if (feasible.empty()) break;
    if (!e->supportsFilter() || !e->isInterested(pod)) continue;
    std::vector<const NodeInfo*> nodes = feasible;
    FailedNodesMap failed, failedAndUnresolvable;
    if (Status s = e->filter(pod, nodes, failed, failedAndUnresolvable); !s.ok()) {
      if (e->isIgnorable()) {
        spdlog::info("skipping extender {} as it returned error and has ignorable flag set: {}",
                     e->name(), s.message());
        continue;
      }
      return s;
    }
    for (const auto& [node, reason] : failedAndUnresolvable) {
      std::vector<std::string> reasons;
      if (auto it = statuses.find(node); it != statuses.end()) reasons = it->second.reasons();
      reasons.push_back(reason);
      statuses.insert_or_assign(node,
                                Status(Code::kUnschedulableAndUnresolvable, std::move(reasons)));
    }
    for (const auto& [node, reason] : failed) {
      if (failedAndUnresolvable.contains(node)) continue;
      auto it = statuses.find(node);
      if (it == statuses.end()) {
        statuses.emplace(node, Status::unschedulable(reason));
      } else {
        std::vector<std::string> reasons = it->second.reasons();
        reasons.push_back(reason);
        it->second = Status(it->second.code(), std::move(reasons));
      }
    }
    feasible = std::move(nodes);
  }
  return {};
}

void addExtenderScores(const ExtenderList& extenders, const api::Pod& pod,
                       const std::vector<const NodeInfo*>& nodes, std::vector<int64_t>& scores) {
  std::vector<const Extender*> active;
  for (const auto& e : extenders) {
    if (e->supportsPrioritize() && e->isInterested(pod)) active.push_back(e.get());
  }
  if (active.empty()) return;
  std::vector<std::vector<HostPriority>> results(active.size());
  std::vector<char> ok(active.size(), 0);
  auto run = [&](size_t i) {
    Status s = active[i]->prioritize(pod, nodes, results[i]);
    if (!s.ok()) {
      spdlog::debug("extender {} gave no scores for {}/{}: {}", active[i]->name(),
                    pod.metadata.namespace_, pod.metadata.name, s.message());
      return;
    }
    ok[i] = 1;
  };
  {
    std::vector<std::jthread> others;
    others.reserve(active.size() - 1);
    for (size_t i = 1; i < active.size(); ++i) {
      others.emplace_back([&run, i] {
        pthread_setname_np(pthread_self(), "ext-prioritize");
        run(i);
      });
    }
    run(0);
  }  // joins
  std::unordered_map<std::string_view, size_t> index;
  index.reserve(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) index.emplace(nodes[i]->name(), i);
  for (size_t e = 0; e < active.size(); ++e) {
    if (!ok[e]) continue;
    const int64_t weight = active[e]->weight();
    for (const auto& hp : results[e]) {
      if (auto it = index.find(hp.host); it != index.end()) {
        scores[it->second] = saturatingAdd(scores[it->second], combinedScore(hp.score, weight));
      }
    }
  }
}

std::optional<Status> bindWithExtenders(const ExtenderList& extenders, const api::Pod& pod,
                                        const std::string& node) {
  for (const auto& e : extenders) {
    if (!e->isBinder() || !e->isInterested(pod)) continue;
    Status s = e->bind(pod, node);
    if (!s.ok() && e->isIgnorable()) {
      spdlog::info(
          "skipping extender {} in bind as it returned error and has ignorable flag set: {}",
          e->name(), s.message());
      continue;
    }
    return s;
  }
  return std::nullopt;
}

}  // namespace ksched::extender
