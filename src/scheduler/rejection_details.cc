#include "scheduler/rejection_details.h"

#include <algorithm>
#include <array>
#include <map>

#include <ksched/api/features.h>
#include <ksched/api/storage.h>
#include <ksched/api/taints.h>
#include <ksched/api/workloads.h>
#include <ksched/helper/node_affinity.h>
#include <ksched/helper/node_declared_features.h>
#include <ksched/helper/volume_conflict.h>
#include <ksched/plugin_names.h>

namespace ksched::scheduler {
namespace {

using api::SelectorOperator;
using Details = std::vector<std::string>;

std::string list(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) out += (i ? "," : "") + values[i];
  return out + "]";
}

// "zone In [a,b]", "gpu Exists".
std::string requirement(const std::string& key, SelectorOperator op,
                        const std::vector<std::string>& values) {
  std::string out = key + " " + std::string(api::toString(op));
  if (op != SelectorOperator::kExists && op != SelectorOperator::kDoesNotExist) {
    out += " " + list(values);
  }
  return out;
}

// "app=web", "app=web,tier In [a,b]"; "{}" selects every pod.
std::string selectorText(const std::optional<api::LabelSelector>& s) {
  if (!s) return "<no selector>";
  if (s->empty()) return "{}";
  std::string out;
  for (const auto& [k, v] : s->matchLabels) out += (out.empty() ? "" : ",") + k + "=" + v;
  for (const auto& r : s->matchExpressions) {
    out += (out.empty() ? "" : ",") + requirement(r.key, r.operator_, r.values);
  }
  return out;
}

// "node has zone=c" or "label zone missing".
std::string nodeHas(const api::Labels& labels, const std::string& key) {
  auto it = labels.find(key);
  return it == labels.end() ? "label " + key + " missing" : "node has " + key + "=" + it->second;
}

std::string taintText(const api::Taint& t) {
  return t.key + (t.value.empty() ? "" : "=" + t.value) + ":" + t.effect;
}

// Why a Gt/Lt toleration of the pod that names the taint's key and effect does not tolerate
// it: the gate is off, or a value is not an integer; "" when none applies.
std::string comparisonNote(const api::Pod& pod, const api::Taint& t, bool comparisonOperators) {
  for (const auto& tol : pod.spec.tolerations) {
    if (tol.operator_ != api::kTolerationOpGt && tol.operator_ != api::kTolerationOpLt) continue;
    if ((!tol.key.empty() && tol.key != t.key) || (!tol.effect.empty() && tol.effect != t.effect)) {
      continue;
    }
    if (!comparisonOperators) {
      return " (toleration operator " + tol.operator_ +
             " needs the TaintTolerationComparisonOperators feature gate)";
    }
    const std::string text =
        (tol.key.empty() ? "" : tol.key + " ") + tol.operator_ + " " + tol.value;
    if (!api::parseTolerationInteger(t.value)) {
      return " (toleration " + text + " compares integers; the taint's value is not one)";
    }
    if (!api::parseTolerationInteger(tol.value)) {
      return " (toleration " + text + ": its value is not an integer)";
    }
  }
  return "";
}

Details taints(const api::Pod& pod, const api::Node& node, bool comparisonOperators) {
  Details out;
  for (const auto& t : node.spec.taints) {
    if (!api::isDoNotScheduleTaint(t)) continue;
    if (api::tolerationsTolerateTaint(pod.spec.tolerations, t, comparisonOperators)) continue;
    out.push_back("taint " + taintText(t) + " not tolerated" +
                  comparisonNote(pod, t, comparisonOperators));
  }
  return out;
}

Details declaredFeatures(const api::Pod& pod, const NodeInfo& node) {
  Details out;
  const auto registry = plugins::helper::declaredFeatureRegistry();
  const auto missing = plugins::helper::requiredFeatures(pod).minus(node.declaredFeatures());
  const bool none = node.node() == nullptr || node.node()->status.declaredFeatures.empty();
  for (size_t i = 0; i < registry.size(); ++i) {
    if (!missing.contains(i)) continue;
    out.push_back("node does not declare " + std::string(registry[i].name) + " (the pod has " +
                  std::string(registry[i].neededWhen) + ")" +
                  (none ? "; the node declares no features (a kubelet older than 1.35?)" : ""));
  }
  return out;
}

Details nodeAffinity(const api::Pod& pod, const api::Node& node) {
  Details out;
  const api::Labels& labels = node.metadata.labels;
  for (const auto& [k, v] : pod.spec.nodeSelector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) {
      out.push_back("nodeSelector " + k + "=" + v + ": " + nodeHas(labels, k));
    }
  }
  const api::NodeSelector* required = plugins::helper::requiredNodeAffinity(pod);
  if (required != nullptr && !required->matches(node)) {
    const std::string prefix = "requiredDuringScheduling ";
    if (required->nodeSelectorTerms.empty())
      out.push_back(prefix + "has no terms: no node matches");
    const auto& terms = required->nodeSelectorTerms;
    for (size_t i = 0; i < terms.size(); ++i) {
      const std::string term = prefix + "term " + std::to_string(i);
      if (terms[i].empty()) {
        out.push_back(term + " is empty: no node matches");
        continue;
      }
      // The first requirement of the term the node fails, each judged by the SDK's matcher.
      for (const auto& r : terms[i].matchExpressions) {
        api::NodeSelectorTerm one;
        one.matchExpressions.push_back(r);
        if (one.matches(node)) continue;
        out.push_back(term + ": " + requirement(r.key, r.operator_, r.values) + ": " +
                      nodeHas(labels, r.key));
        break;
      }
      for (const auto& r : terms[i].matchFields) {
        api::NodeSelectorTerm one;
        one.matchFields.push_back(r);
        if (one.matches(node)) continue;
        out.push_back(term + ": " + requirement(r.key, r.operator_, r.values) + ": node is " +
                      node.metadata.name);
        break;
      }
    }
  }
  if (out.empty())
    out.push_back("node does not match the profile's addedAffinity (NodeAffinity args)");
  return out;
}

// The host ports a pod holds: its containers' and its sidecars' (restartable init containers).
std::vector<api::ContainerPort> hostPorts(const api::Pod& pod) {
  std::vector<api::ContainerPort> out;
  auto add = [&out](const api::Container& c) {
    for (const auto& p : c.ports) {
      if (p.hostPort > 0) out.push_back(p);
    }
  };
  for (const auto& c : pod.spec.initContainers) {
    if (c.isRestartable()) add(c);
  }
  for (const auto& c : pod.spec.containers) add(c);
  return out;
}

Details nodePorts(const api::Pod& pod, const NodeInfo& node) {
  Details out;
  for (const auto& p : hostPorts(pod)) {
    if (!node.usedPorts().conflicts(p.hostIP, p.protocol, p.hostPort)) continue;
    std::string text = "hostPort " + std::to_string(p.hostPort) + "/" +
                       (p.protocol.empty() ? std::string(api::kProtocolTCP) : p.protocol) + " on " +
                       (p.hostIP.empty() ? "0.0.0.0" : p.hostIP) + " is in use";
    for (const auto& existing : node.pods()) {
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

Details topologySpread(const api::Pod& pod, const api::Node& node, const NodeInfoLister& snapshot,
                       const features::Gates& gates) {
  struct Constraint {
    const api::TopologySpreadConstraint* spec;
    api::Selector selector;
    bool honorAffinity, honorTaints;
    int64_t self;
    std::map<std::string, int64_t, std::less<>> counts;  // domain -> matching pods
  };
  std::vector<Constraint> cs;
  for (const auto& c : pod.spec.topologySpreadConstraints) {
    if (c.whenUnsatisfiable != api::kDoNotSchedule) continue;
    api::Selector sel = api::Selector::compile(c.labelSelector);
    for (const auto& key : c.matchLabelKeys) {
      if (!gates.enabled(features::Feature::kMatchLabelKeysInPodTopologySpread)) break;
      auto it = pod.metadata.labels.find(key);
      if (it != pod.metadata.labels.end()) sel.add(key, SelectorOperator::kIn, {it->second});
    }
    const bool self = sel.matches(pod.metadata.labels);
    cs.push_back({&c,
                  std::move(sel),
                  !c.nodeAffinityPolicy || *c.nodeAffinityPolicy == api::kNodeInclusionPolicyHonor,
                  c.nodeTaintsPolicy && *c.nodeTaintsPolicy == api::kNodeInclusionPolicyHonor,
                  self ? 1 : 0,
                  {}});
  }
  Details out;
  const api::Labels& labels = node.metadata.labels;
  for (const auto& c : cs) {
    if (!labels.contains(c.spec->topologyKey)) {
      out.push_back("topologyKey " + c.spec->topologyKey + ": node has no label " +
                    c.spec->topologyKey);
    }
  }
  if (!out.empty() || cs.empty()) return out;
  // Matching pods per domain, over the nodes every constraint's key and policies admit.
  for (const NodeInfo* ni : snapshot.list()) {
    const api::Node* n = ni->node();
    if (n == nullptr) continue;
    const api::Labels& l = n->metadata.labels;
    if (!std::all_of(cs.begin(), cs.end(),
                     [&l](const Constraint& c) { return l.contains(c.spec->topologyKey); })) {
      continue;
    }
    const bool affinity = plugins::helper::podMatchesNodeSelectorAndAffinityTerms(pod, *n);
    const bool tolerated =
        api::findUntoleratedTaint(
            n->spec.taints, pod.spec.tolerations,
            gates.enabled(features::Feature::kTaintTolerationComparisonOperators),
            api::isDoNotScheduleTaint) == nullptr;
    for (auto& c : cs) {
      if ((c.honorAffinity && !affinity) || (c.honorTaints && !tolerated)) continue;
      int64_t matching = 0;
      if (!c.selector.isEverything() && !c.selector.isNothing()) {
        for (const auto& p : ni->pods()) {
          const api::ObjectMeta& m = p->pod->metadata;
          if (!m.deletionTimestamp && m.namespace_ == pod.metadata.namespace_ &&
              c.selector.matches(m.labels)) {
            ++matching;
          }
        }
      }
      c.counts[l.at(c.spec->topologyKey)] += matching;
    }
  }
  for (const auto& c : cs) {
    const std::string& value = labels.at(c.spec->topologyKey);
    auto it = c.counts.find(value);
    const int64_t here = it == c.counts.end() ? 0 : it->second;
    const int32_t minDomains = c.spec->minDomains.value_or(1);
    int64_t min = 0;
    if (static_cast<int64_t>(c.counts.size()) >= minDomains && !c.counts.empty()) {
      min = std::min_element(c.counts.begin(), c.counts.end(), [](const auto& a, const auto& b) {
              return a.second < b.second;
            })->second;
    }
    const int64_t skew = here + c.self - min;
    if (skew <= c.spec->maxSkew) continue;
    std::string text = "topologyKey " + c.spec->topologyKey + ", maxSkew " +
                       std::to_string(c.spec->maxSkew) + ": placing here makes skew " +
                       std::to_string(skew) + " (" + value + " has " + std::to_string(here) +
                       " matching pods, min " + std::to_string(min);
    if (static_cast<int64_t>(c.counts.size()) < minDomains) {
      text += ": " + std::to_string(c.counts.size()) + " domains, fewer than minDomains " +
              std::to_string(minDomains);
    }
    out.push_back(text + ")");
  }
  return out;
}

// A pod (anti-)affinity term of `owner` as InterPodAffinity reads it (see the plugin's
// affinity_terms.h): the selector with matchLabelKeys / mismatchLabelKeys from the owner's
// labels, and the namespaces it covers.
struct Term {
  const api::PodAffinityTerm* spec;
  api::Selector selector;
  const api::Pod* owner;

  Term(const api::PodAffinityTerm& t, const api::Pod& o) : spec(&t), owner(&o) {
    if (!t.labelSelector) return;  // selects no pod
    selector = api::Selector::compile(*t.labelSelector);
    const api::Labels& labels = o.metadata.labels;
    for (const auto& k : t.matchLabelKeys) {
      if (auto it = labels.find(k); it != labels.end()) {
        selector.add(k, SelectorOperator::kIn, {it->second});
      }
    }
    for (const auto& k : t.mismatchLabelKeys) {
      if (auto it = labels.find(k); it != labels.end()) {
        selector.add(k, SelectorOperator::kNotIn, {it->second});
      }
    }
  }
  [[nodiscard]] bool selects(const api::Pod& p, const ClusterListers* listers) const {
    if (!selector.matches(p.metadata.labels)) return false;
    const std::string& ns = p.metadata.namespace_;
    if (spec->namespaces.empty() && !spec->namespaceSelector) {
      return ns == owner->metadata.namespace_;
    }
    if (std::find(spec->namespaces.begin(), spec->namespaces.end(), ns) != spec->namespaces.end()) {
      return true;
    }
    if (!spec->namespaceSelector) return false;
    if (spec->namespaceSelector->empty()) return true;
    if (listers == nullptr) return false;
    auto n = listers->getNamespace(ns);
    return n != nullptr &&
           api::Selector::compile(*spec->namespaceSelector).matches(n->metadata.labels);
  }
  [[nodiscard]] std::string text() const {
    return selectorText(spec->labelSelector) + " on " + spec->topologyKey;
  }
};

// The pod's required affinity (or anti-affinity) terms; empty when it has none.
const std::vector<api::PodAffinityTerm>& required(const api::Pod& pod, bool anti) {
  static const std::vector<api::PodAffinityTerm> kNone;
  const auto& a = pod.spec.affinity;
  if (!a) return kNone;
  const auto& terms = anti ? a->podAntiAffinity : a->podAffinity;
  return terms ? terms->requiredDuringSchedulingIgnoredDuringExecution : kNone;
}

// Calls fn(nodeInfo, pod) for every pod (but `self`) on the nodes sharing `node`'s value of
// `key`, until fn returns true.
template <typename F>
void forEachPodInDomain(const NodeInfoLister& snapshot, const api::Node& node,
                        const std::string& key, const api::Pod& self, F&& fn) {
  const std::string& value = node.metadata.labels.at(key);
  for (const NodeInfo* ni : snapshot.list()) {
    if (ni->node() == nullptr) continue;
    auto it = ni->node()->metadata.labels.find(key);
    if (it == ni->node()->metadata.labels.end() || it->second != value) continue;
    for (const auto& p : ni->pods()) {
      if (!self.metadata.uid.empty() && p->pod->metadata.uid == self.metadata.uid) continue;
      if (fn(*ni, *p->pod)) return;
    }
  }
}

Details interPodAffinity(const api::Pod& pod, const api::Node& node, const NodeInfoLister& snapshot,
                         const ClusterListers* listers) {
  Details out;
  const api::Labels& labels = node.metadata.labels;
  const std::string& nodeName = node.metadata.name;
  auto where = [&nodeName](const NodeInfo& ni, const std::string& key, const std::string& value) {
    return ni.name() == nodeName ? std::string("this node")
                                 : "node " + ni.name() + " (" + key + "=" + value + ")";
  };

  // The pod's required affinity terms: a pod matching all of them in the node's domain.
  std::vector<Term> terms;
  for (const auto& t : required(pod, false)) {
    terms.emplace_back(t, pod);
  }
  auto matchesAll = [&](const api::Pod& p) {
    return std::all_of(terms.begin(), terms.end(),
                       [&](const Term& t) { return t.selects(p, listers); });
  };
  if (!terms.empty()) {
    bool anywhere = false;
    for (const NodeInfo* ni : snapshot.list()) {
      for (const auto& p : ni->pods())
        anywhere = anywhere || (p->pod->metadata.uid != pod.metadata.uid && matchesAll(*p->pod));
    }
    if (anywhere || !matchesAll(pod)) {
      for (const Term& t : terms) {
        const std::string& key = t.spec->topologyKey;
        if (!labels.contains(key)) {
          out.push_back("affinity term " + t.text() + ": node has no label " + key);
          continue;
        }
        bool found = false;
        forEachPodInDomain(snapshot, node, key, pod, [&](const NodeInfo&, const api::Pod& p) {
          return found = matchesAll(p);
        });
        if (found) continue;
        out.push_back("affinity term " + t.text() + ": no " +
                      (terms.size() > 1 ? "pod matching every affinity term" : "matching pod") +
                      " in " + key + "=" + labels.at(key) +
                      (anywhere ? "" : " (none in the cluster)"));
      }
    }
  }

  // The pod's required anti-affinity terms: a pod they select in the node's domain.
  for (const auto& spec : required(pod, true)) {
    const Term t(spec, pod);
    const std::string& key = spec.topologyKey;
    if (!labels.contains(key)) continue;
    forEachPodInDomain(snapshot, node, key, pod, [&](const NodeInfo& ni, const api::Pod& p) {
      if (!t.selects(p, listers)) return false;
      out.push_back("anti-affinity term " + t.text() + ": pod " + p.metadata.key() + " is on " +
                    where(ni, key, labels.at(key)));
      return true;
    });
  }

  // Existing pods whose required anti-affinity selects the pod, in the node's domain.
  for (const NodeInfo* ni : snapshot.havePodsWithRequiredAntiAffinityList()) {
    if (ni->node() == nullptr) continue;
    const api::Labels& theirs = ni->node()->metadata.labels;
    for (const auto& pi : ni->podsWithRequiredAntiAffinity()) {
      const api::Pod& owner = *pi->pod;
      if (!pod.metadata.uid.empty() && owner.metadata.uid == pod.metadata.uid) continue;
      for (const auto& spec : required(owner, true)) {
        const std::string& key = spec.topologyKey;
        auto mine = labels.find(key);
        auto other = theirs.find(key);
        if (mine == labels.end() || other == theirs.end() || mine->second != other->second) {
          continue;
        }
        const Term t(spec, owner);
        if (!t.selects(pod, listers)) continue;
        out.push_back("pod " + owner.metadata.key() + " on " + where(*ni, key, other->second) +
                      " has anti-affinity term " + t.text() + " that selects this pod");
      }
    }
  }
  return out;
}

std::string volumeSource(const api::Volume& v) {
  if (v.gcePersistentDisk) return "GCE PD " + v.gcePersistentDisk->pdName;
  if (v.awsElasticBlockStore) return "AWS EBS " + v.awsElasticBlockStore->volumeID;
  if (v.rbd) return "RBD " + v.rbd->pool + "/" + v.rbd->image;
  if (v.iscsi) return "iSCSI " + v.iscsi->iqn;
  return "";
}

// The "<namespace>/<claim>" of a volume's PVC (generic ephemeral volumes too), or "".
std::string claimKey(const api::Pod& pod, const api::Volume& v) {
  if (v.persistentVolumeClaim) {
    return pod.metadata.namespace_ + "/" + v.persistentVolumeClaim->claimName;
  }
  if (v.ephemeral) return pod.metadata.namespace_ + "/" + api::ephemeralVolumeClaimName(pod, v);
  return "";
}

Details volumeRestrictions(const api::Pod& pod, const NodeInfo& node,
                           const NodeInfoLister& snapshot, const ClusterListers* listers) {
  Details out;
  for (const auto& v : pod.spec.volumes) {
    const std::string source = volumeSource(v);
    if (source.empty()) continue;
    for (const auto& existing : node.pods()) {
      if (!plugins::helper::volumeConflicts(v, *existing->pod)) continue;
      out.push_back("volume " + v.name + " (" + source + ") is in use by pod " +
                    existing->pod->metadata.key());
      break;
    }
  }
  // ReadWriteOncePod claims used anywhere; the access mode needs the PVC.
  if (listers == nullptr) return out;
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    const std::string key = claimKey(pod, v);
    if (!snapshot.isPVCUsedByPods(key)) continue;
    auto pvc = listers->getPersistentVolumeClaim(pod.metadata.namespace_,
                                                 v.persistentVolumeClaim->claimName);
    if (pvc == nullptr) continue;
    const auto& modes = pvc->spec.accessModes;
    if (std::find(modes.begin(), modes.end(), api::kReadWriteOncePod) == modes.end()) continue;
    std::string text = "PVC " + key + " (ReadWriteOncePod) is in use";
    for (const NodeInfo* ni : snapshot.list()) {
      if (!ni->pvcRefCounts().contains(key)) continue;
      for (const auto& p : ni->pods()) {
        const auto& vs = p->pod->spec.volumes;
        if (std::any_of(vs.begin(), vs.end(),
                        [&](const api::Volume& w) { return claimKey(*p->pod, w) == key; })) {
          text += " by pod " + p->pod->metadata.key() + " on node " + ni->name();
          break;
        }
      }
      break;
    }
    out.push_back(std::move(text));
  }
  return out;
}

Details volumeZone(const api::Pod& pod, const api::Node& node, const ClusterListers* listers) {
  Details out;
  if (listers == nullptr) return out;
  constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kKeys{{
      {"topology.kubernetes.io/zone", "topology.kubernetes.io/zone"},
      {"failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone"},
      {"topology.kubernetes.io/region", "topology.kubernetes.io/region"},
      {"failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region"},
  }};
  const api::Labels& labels = node.metadata.labels;
  for (const auto& v : pod.spec.volumes) {
    if (!v.persistentVolumeClaim) continue;
    auto pvc = listers->getPersistentVolumeClaim(pod.metadata.namespace_,
                                                 v.persistentVolumeClaim->claimName);
    if (pvc == nullptr || pvc->spec.volumeName.empty()) continue;
    auto pv = listers->getPersistentVolume(pvc->spec.volumeName);
    if (pv == nullptr) continue;
    for (const auto& [key, ga] : kKeys) {
      auto want = pv->metadata.labels.find(std::string(key));
      if (want == pv->metadata.labels.end()) continue;
      auto have = labels.find(std::string(key));
      if (have == labels.end()) have = labels.find(std::string(ga));
      // A "__"-separated value is a set of zones.
      const std::string set = "__" + want->second + "__";
      if (have != labels.end() && set.find("__" + have->second + "__") != std::string::npos) {
        continue;
      }
      out.push_back("volume " + v.name + ": PV " + pv->metadata.name + " is in " +
                    std::string(key) + "=" + want->second + ", " +
                    (have == labels.end() ? "node has no " + std::string(ga) + " label"
                                          : "node has " + have->first + "=" + have->second));
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> rejectionDetails(std::string_view plugin, const api::Pod& pod,
                                          const NodeInfo& nodeInfo, const NodeInfoLister& snapshot,
                                          const ClusterListers* listers,
                                          const features::Gates& gates) {
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return {};
  if (plugin == names::kTaintToleration) {
    return taints(pod, *node,
                  gates.enabled(features::Feature::kTaintTolerationComparisonOperators));
  }
  if (plugin == names::kNodeDeclaredFeatures) return declaredFeatures(pod, nodeInfo);
  if (plugin == names::kNodeAffinity) return nodeAffinity(pod, *node);
  if (plugin == names::kNodePorts) return nodePorts(pod, nodeInfo);
  if (plugin == names::kPodTopologySpread) return topologySpread(pod, *node, snapshot, gates);
  if (plugin == names::kInterPodAffinity) return interPodAffinity(pod, *node, snapshot, listers);
  if (plugin == names::kVolumeRestrictions) {
    return volumeRestrictions(pod, nodeInfo, snapshot, listers);
  }
  if (plugin == names::kVolumeZone) return volumeZone(pod, *node, listers);
  if (plugin == names::kNodeUnschedulable && node->spec.unschedulable) {
    return {"node is cordoned (spec.unschedulable)"};
  }
  if (plugin == names::kNodeName && !pod.spec.nodeName.empty()) {
    return {"pod asks for node " + pod.spec.nodeName};
  }
  return {};
}

}  // namespace ksched::scheduler
