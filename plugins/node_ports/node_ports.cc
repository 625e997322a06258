#include "plugins/node_ports/node_ports.h"

#include <string>
#include <utility>

#include <ksched/api/pod.h>

namespace ksched::plugins {
namespace {

struct PreFilterState final : StateData {
  std::vector<api::ContainerPort> ports;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreFilterState>(*this);
  }
};

constexpr StateKey<PreFilterState> kPreFilterKey{NodePorts::kPreFilterStateKey};

void appendHostPorts(const api::Container& c, std::vector<api::ContainerPort>& out) {
  for (const auto& p : c.ports) {
    if (p.hostPort > 0) out.push_back(p);
  }
}

}  // namespace

std::vector<api::ContainerPort> NodePorts::hostPorts(const api::Pod& pod) {
  std::vector<api::ContainerPort> out;
  // Only init containers that run for the pod's whole life (sidecars) hold their ports.
  for (const auto& c : pod.spec.initContainers) {
    if (c.isRestartable()) appendHostPorts(c, out);
  }
  for (const auto& c : pod.spec.containers) appendHostPorts(c, out);
  return out;
}

bool NodePorts::fitsPorts(const std::vector<api::ContainerPort>& want, const NodeInfo& nodeInfo) {
  return fitsPorts(want, nodeInfo.usedPorts());
}

bool NodePorts::fitsPorts(const std::vector<api::ContainerPort>& want, const HostPortInfo& used) {
  for (const auto& p : want) {
    if (used.conflicts(p.hostIP, p.protocol, p.hostPort)) return false;
  }
  return true;
}

Status NodePorts::preFilter(CycleState& state, const api::Pod& pod, const NodeInfoLister& /*nodes*/,
                            PreFilterResult& /*result*/) {
  auto s = std::make_unique<PreFilterState>();
  s->ports = hostPorts(pod);
  if (s->ports.empty()) return Status::skip();
  state.write(kPreFilterKey, std::move(s));
  return {};
}

std::vector<std::string> NodePorts::explainRejection(const CycleState& state, const api::Pod& pod,
                                                     const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const PreFilterState* s = state.read(kPreFilterKey);
  for (const auto& p : s != nullptr ? s->ports : hostPorts(pod)) {
    if (!nodeInfo.usedPorts().conflicts(p.hostIP, p.protocol, p.hostPort)) continue;
    std::string text = "hostPort " + std::to_string(p.hostPort) + "/" +
                       (p.protocol.empty() ? std::string(api::kProtocolTCP) : p.protocol) + " on " +
                       (p.hostIP.empty() ? "0.0.0.0" : p.hostIP) + " is in use";
    for (const auto& existing : nodeInfo.pods()) {
      HostPortInfo held;
      for (const auto& q : hostPorts(*existing->pod)) held.add(q.hostIP, q.protocol, q.hostPort);
      if (held.conflicts(p.hostIP, p.protocol, p.hostPort)) {
        text += " by pod " + existing->pod->metadata.key();
        break;
      }
    }
    out.push_back(std::move(text));
  }
  return out;
}

Status NodePorts::filter(const CycleState& state, const api::Pod& /*pod*/,
                         const NodeInfo& nodeInfo) const {
  const PreFilterState* s = state.read(kPreFilterKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreFilterStateKey) +
                         "\" from cycleState: not found");
  }
  if (!fitsPorts(s->ports, nodeInfo)) return Status::unschedulable(std::string(kErrReason));
  return {};
}

std::vector<ClusterEventWithHint> NodePorts::eventsToRegister() const {
  return {
      {EventResource::kPod, kDelete, &isSchedulableAfterPodDeleted},
      {EventResource::kNode, kAdd},
  };
}

QueueingHint NodePorts::isSchedulableAfterPodDeleted(const api::Pod& pod, const EventObject& oldObj,
                                                     const EventObject& /*newObj*/) {
  const api::Pod* deleted = as<api::Pod>(oldObj);
  if (deleted == nullptr) return QueueingHint::kQueue;
  if (deleted->spec.nodeName.empty() && deleted->status.nominatedNodeName.empty()) {
    return QueueingHint::kSkip;
  }
  HostPortInfo freed;
  for (const auto& p : hostPorts(*deleted)) freed.add(p.hostIP, p.protocol, p.hostPort);
  if (freed.size() == 0) return QueueingHint::kSkip;
  return fitsPorts(hostPorts(pod), freed) ? QueueingHint::kSkip : QueueingHint::kQueue;
}

PluginFactory nodePortsFactory() {
  return makePluginFactory<NodePorts>([](Handle&) { return std::make_unique<NodePorts>(); });
}

}  // namespace ksched::plugins
