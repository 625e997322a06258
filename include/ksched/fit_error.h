// Why a pod fit no node, and upstream's FailedScheduling text for it (upstream framework.FitError
// and Diagnosis). Shared by the scheduling loop and PostFilter plugins (preemption reports the
// dry run's failure the same way).
#pragma once

#include <set>
#include <string>

#include <ksched/plugin.h>

namespace ksched {

// Why no node fit: per-node statuses and the plugins that rejected the pod.
struct Diagnosis {
  NodeToStatus nodeToStatus;
  std::set<std::string, std::less<>> unschedulablePlugins;
  std::string preFilterMsg;
  std::string postFilterMsg;
};

struct FitError {
  int numAllNodes = 0;
  Diagnosis diagnosis;
  // Upstream's text: "0/5 nodes are available: 2 node(s) had untolerated taint(s), 3
  // Insufficient cpu." — one count per distinct reason over all nodes, sorted as strings; a
  // PreFilter rejection replaces the list; a PostFilter message is appended. Without any reason
  // (nodes an extender dropped silently) the text is "0/3 nodes are available:".
  [[nodiscard]] std::string message() const;
};

}  // namespace ksched
