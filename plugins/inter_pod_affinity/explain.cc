// InterPodAffinity's account of a rejection (FilterExplainer): the Filter's counts say that a
// domain has (or lacks) a matching pod, not which one, so the pods are looked up again in the
// snapshot with the terms as PreFilter resolved them.
#include <algorithm>

#include <ksched/helper/explain_text.h>

#include "plugins/inter_pod_affinity/state.h"

namespace ksched::plugins {
namespace {

using interpodaffinity::IncomingTerm;

std::string termText(const api::PodAffinityTerm& t) {
  return helper::selectorText(t.labelSelector) + " on " + t.topologyKey;
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

}  // namespace

std::vector<std::string> InterPodAffinity::explainRejection(const CycleState& state,
                                                            const api::Pod& pod,
                                                            const NodeInfo& nodeInfo) const {
  std::vector<std::string> out;
  const api::Node* node = nodeInfo.node();
  if (node == nullptr) return out;
  // The terms as PreFilter resolved them; resolved here when it did not run.
  interpodaffinity::PreFilterState resolved;
  const interpodaffinity::PreFilterState* s = state.read(interpodaffinity::kPreFilterKey);
  if (s == nullptr) {
    const ClusterListers& listers = handle_.listers();
    resolved.affinityTerms = interpodaffinity::resolveIncomingTerms(
        interpodaffinity::requiredAffinityTerms(pod), pod, listers);
    resolved.antiAffinityTerms = interpodaffinity::resolveIncomingTerms(
        interpodaffinity::requiredAntiAffinityTerms(pod), pod, listers);
    resolved.matchesOwnAffinity = matchesAll(resolved.affinityTerms, pod);
    resolved.namespaceLabels = interpodaffinity::namespaceLabels(listers, pod.metadata.namespace_);
    s = &resolved;
  }
  const NodeInfoLister& snapshot = handle_.snapshot();
  const api::Labels& labels = node->metadata.labels;
  const std::string& nodeName = node->metadata.name;
  auto where = [&nodeName](const NodeInfo& ni, const std::string& key, const std::string& value) {
    return ni.name() == nodeName ? std::string("this node")
                                 : "node " + ni.name() + " (" + key + "=" + value + ")";
  };

  // The pod's required affinity terms: a pod matching all of them in the node's domain.
  const auto& affinity = interpodaffinity::requiredAffinityTerms(pod);
  const std::vector<IncomingTerm>& terms = s->affinityTerms;
  auto matchesAll = [&terms](const api::Pod& p) { return interpodaffinity::matchesAll(terms, p); };
  if (!terms.empty()) {
    bool anywhere = false;
    for (const NodeInfo* ni : snapshot.list()) {
      for (const auto& p : ni->pods())
        anywhere = anywhere || (p->pod->metadata.uid != pod.metadata.uid && matchesAll(*p->pod));
    }
    if (anywhere || !s->matchesOwnAffinity) {
      for (size_t i = 0; i < terms.size(); ++i) {
        const std::string& key = terms[i].topologyKey;
        if (!labels.contains(key)) {
          out.push_back("affinity term " + termText(affinity[i]) + ": node has no label " + key);
          continue;
        }
        bool found = false;
        forEachPodInDomain(snapshot, *node, key, pod, [&](const NodeInfo&, const api::Pod& p) {
          return found = matchesAll(p);
        });
        if (found) continue;
        out.push_back("affinity term " + termText(affinity[i]) + ": no " +
                      (terms.size() > 1 ? "pod matching every affinity term" : "matching pod") +
                      " in " + key + "=" + labels.at(key) +
                      (anywhere ? "" : " (none in the cluster)"));
      }
    }
  }

  // The pod's required anti-affinity terms: a pod they select in the node's domain.
  const auto& anti = interpodaffinity::requiredAntiAffinityTerms(pod);
  for (size_t i = 0; i < s->antiAffinityTerms.size(); ++i) {
    const IncomingTerm& t = s->antiAffinityTerms[i];
    const std::string& key = t.topologyKey;
    if (!labels.contains(key)) continue;
    forEachPodInDomain(snapshot, *node, key, pod, [&](const NodeInfo& ni, const api::Pod& p) {
      if (!t.matches(p)) return false;
      out.push_back("anti-affinity term " + termText(anti[i]) + ": pod " + p.metadata.key() +
                    " is on " + where(ni, key, labels.at(key)));
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
      for (const auto& t : interpodaffinity::requiredAntiAffinityTerms(owner)) {
        const std::string& key = t.topologyKey;
        auto mine = labels.find(key);
        auto other = theirs.find(key);
        if (mine == labels.end() || other == theirs.end() || mine->second != other->second) {
          continue;
        }
        if (!interpodaffinity::existingTermMatches(t, owner, pod, s->namespaceLabels)) continue;
        out.push_back("pod " + owner.metadata.key() + " on " + where(*ni, key, other->second) +
                      " has anti-affinity term " + termText(t) + " that selects this pod");
      }
    }
  }
  return out;
}

}  // namespace ksched::plugins
