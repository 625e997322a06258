#include "plugins/inter_pod_affinity/affinity_terms.h"

#include <algorithm>
#include <utility>

namespace ksched::plugins::interpodaffinity {
namespace {

using api::SelectorOperator;

const std::vector<api::PodAffinityTerm> kNoTerms;
const std::vector<api::WeightedPodAffinityTerm> kNoWeightedTerms;

bool contains(const std::vector<std::string>& values, const std::string& v) noexcept {
  return std::find(values.begin(), values.end(), v) != values.end();
}

bool requirementMatches(const api::LabelSelectorRequirement& r,
                        const api::Labels& labels) noexcept {
  auto it = labels.find(r.key);
  const bool found = it != labels.end();
  switch (r.operator_) {
    case SelectorOperator::kIn:
      return found && contains(r.values, it->second);
    case SelectorOperator::kNotIn:
      return !found || !contains(r.values, it->second);
    case SelectorOperator::kExists:
      return found;
    case SelectorOperator::kDoesNotExist:
      return !found;
    case SelectorOperator::kGt:
    case SelectorOperator::kLt:
      return false;  // not a label selector operator
  }
  return false;
}

// matchLabelKeys / mismatchLabelKeys of `t` with the owner's values.
bool labelKeysMatch(const api::PodAffinityTerm& t, const api::Labels& owner,
                    const api::Labels& labels) noexcept {
  for (const std::string& key : t.matchLabelKeys) {
    auto o = owner.find(key);
    if (o == owner.end()) continue;
    auto it = labels.find(key);
    if (it == labels.end() || it->second != o->second) return false;
  }
  for (const std::string& key : t.mismatchLabelKeys) {
    auto o = owner.find(key);
    if (o == owner.end()) continue;
    auto it = labels.find(key);
    if (it != labels.end() && it->second == o->second) return false;
  }
  return true;
}

const api::PodAffinity* podAffinity(const api::Pod& pod) noexcept {
  const auto& a = pod.spec.affinity;
  return a && a->podAffinity ? &*a->podAffinity : nullptr;
}

const api::PodAntiAffinity* podAntiAffinity(const api::Pod& pod) noexcept {
  const auto& a = pod.spec.affinity;
  return a && a->podAntiAffinity ? &*a->podAntiAffinity : nullptr;
}

}  // namespace

bool labelSelectorMatches(const api::LabelSelector& s, const api::Labels& labels) noexcept {
  for (const auto& [key, value] : s.matchLabels) {
    auto it = labels.find(key);
    if (it == labels.end() || it->second != value) return false;
  }
  return std::all_of(s.matchExpressions.begin(), s.matchExpressions.end(),
                     [&labels](const auto& r) { return requirementMatches(r, labels); });
}

const std::vector<api::PodAffinityTerm>& requiredAffinityTerms(const api::Pod& pod) noexcept {
  const api::PodAffinity* a = podAffinity(pod);
  return a != nullptr ? a->requiredDuringSchedulingIgnoredDuringExecution : kNoTerms;
}

const std::vector<api::PodAffinityTerm>& requiredAntiAffinityTerms(const api::Pod& pod) noexcept {
  const api::PodAntiAffinity* a = podAntiAffinity(pod);
  return a != nullptr ? a->requiredDuringSchedulingIgnoredDuringExecution : kNoTerms;
}

const std::vector<api::WeightedPodAffinityTerm>& preferredAffinityTerms(
    const api::Pod& pod) noexcept {
  const api::PodAffinity* a = podAffinity(pod);
  return a != nullptr ? a->preferredDuringSchedulingIgnoredDuringExecution : kNoWeightedTerms;
}

const std::vector<api::WeightedPodAffinityTerm>& preferredAntiAffinityTerms(
    const api::Pod& pod) noexcept {
  const api::PodAntiAffinity* a = podAntiAffinity(pod);
  return a != nullptr ? a->preferredDuringSchedulingIgnoredDuringExecution : kNoWeightedTerms;
}

bool existingTermMatches(const api::PodAffinityTerm& t, const api::Pod& owner, const api::Pod& pod,
                         const api::Labels& podNamespaceLabels) noexcept {
  if (!t.labelSelector) return false;
  const std::string& ns = pod.metadata.namespace_;
  bool nsMatches = false;
  if (t.namespaces.empty() && !t.namespaceSelector) {
    nsMatches = ns == owner.metadata.namespace_;
  } else {
    nsMatches =
        contains(t.namespaces, ns) ||
        (t.namespaceSelector && labelSelectorMatches(*t.namespaceSelector, podNamespaceLabels));
  }
  return nsMatches && labelSelectorMatches(*t.labelSelector, pod.metadata.labels) &&
         labelKeysMatch(t, owner.metadata.labels, pod.metadata.labels);
}

bool IncomingTerm::matches(const api::Pod& pod) const noexcept {
  if (!selector) return false;
  if (!allNamespaces &&
      !std::binary_search(namespaces.begin(), namespaces.end(), pod.metadata.namespace_)) {
    return false;
  }
  return labelSelectorMatches(*selector, pod.metadata.labels);
}

IncomingTerm resolveIncomingTerm(const api::PodAffinityTerm& t, const api::Pod& owner,
                                 const ClusterListers& listers, int32_t weight) {
  IncomingTerm out;
  out.topologyKey = t.topologyKey;
  out.weight = weight;
  if (t.labelSelector) {
    out.selector = *t.labelSelector;
    const api::Labels& labels = owner.metadata.labels;
    for (const std::string& key : t.matchLabelKeys) {
      if (auto it = labels.find(key); it != labels.end()) {
        out.selector->matchExpressions.push_back({key, SelectorOperator::kIn, {it->second}});
      }
    }
    for (const std::string& key : t.mismatchLabelKeys) {
      if (auto it = labels.find(key); it != labels.end()) {
        out.selector->matchExpressions.push_back({key, SelectorOperator::kNotIn, {it->second}});
      }
    }
  }
  if (t.namespaces.empty() && !t.namespaceSelector) {
    out.namespaces.push_back(owner.metadata.namespace_);
    return out;
  }
  out.namespaces = t.namespaces;
  if (t.namespaceSelector) {
    if (t.namespaceSelector->empty()) {
      out.allNamespaces = true;
    } else {
      for (const auto& ns : listers.namespaces()) {
        if (labelSelectorMatches(*t.namespaceSelector, ns->metadata.labels)) {
          out.namespaces.push_back(ns->metadata.name);
        }
      }
    }
  }
  std::sort(out.namespaces.begin(), out.namespaces.end());
  out.namespaces.erase(std::unique(out.namespaces.begin(), out.namespaces.end()),
                       out.namespaces.end());
  return out;
}

std::vector<IncomingTerm> resolveIncomingTerms(const std::vector<api::PodAffinityTerm>& terms,
                                               const api::Pod& owner,
                                               const ClusterListers& listers) {
  std::vector<IncomingTerm> out;
  out.reserve(terms.size());
  for (const auto& t : terms) out.push_back(resolveIncomingTerm(t, owner, listers));
  return out;
}

std::vector<IncomingTerm> resolveIncomingTerms(
    const std::vector<api::WeightedPodAffinityTerm>& terms, const api::Pod& owner,
    const ClusterListers& listers) {
  std::vector<IncomingTerm> out;
  out.reserve(terms.size());
  for (const auto& t : terms) {
    out.push_back(resolveIncomingTerm(t.podAffinityTerm, owner, listers, t.weight));
  }
  return out;
}

bool matchesAll(const std::vector<IncomingTerm>& terms, const api::Pod& pod) noexcept {
  if (terms.empty()) return false;
  return std::all_of(terms.begin(), terms.end(),
                     [&pod](const IncomingTerm& t) { return t.matches(pod); });
}

api::Labels namespaceLabels(const ClusterListers& listers, const std::string& ns) {
  auto n = listers.getNamespace(ns);
  return n ? n->metadata.labels : api::Labels{};
}

void TopologyCounts::add(const api::Labels& nodeLabels, const std::string& key, int64_t delta,
                         bool dropZero) {
  auto label = nodeLabels.find(key);
  if (label == nodeLabels.end()) return;
  auto& values = counts_[key];
  int64_t& c = values[label->second];
  c += delta;
  if (dropZero && c == 0) {
    values.erase(label->second);
    if (values.empty()) counts_.erase(key);
  }
}

void TopologyCounts::merge(const TopologyCounts& other) {
  for (const auto& [key, values] : other.counts_) {
    auto& mine = counts_[key];
    for (const auto& [value, c] : values) mine[value] += c;
  }
}

int64_t TopologyCounts::get(const std::string& key, const std::string& value) const noexcept {
  auto k = counts_.find(key);
  if (k == counts_.end()) return 0;
  auto v = k->second.find(value);
  return v == k->second.end() ? 0 : v->second;
}

int64_t TopologyCounts::atNode(const api::Labels& nodeLabels,
                               const std::string& key) const noexcept {
  auto label = nodeLabels.find(key);
  return label == nodeLabels.end() ? 0 : get(key, label->second);
}

bool TopologyCounts::anyPositive(const api::Labels& nodeLabels) const noexcept {
  return std::any_of(counts_.begin(), counts_.end(), [&nodeLabels](const auto& kv) {
    auto label = nodeLabels.find(kv.first);
    if (label == nodeLabels.end()) return false;
    auto v = kv.second.find(label->second);
    return v != kv.second.end() && v->second > 0;
  });
}

int64_t TopologyCounts::sumAtNode(const api::Labels& nodeLabels) const noexcept {
  int64_t sum = 0;
  for (const auto& [key, values] : counts_) {
    auto label = nodeLabels.find(key);
    if (label == nodeLabels.end()) continue;
    if (auto v = values.find(label->second); v != values.end()) sum += v->second;
  }
  return sum;
}

std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> TopologyCounts::entries()
    const {
  std::vector<std::pair<std::pair<std::string, std::string>, int64_t>> out;
  for (const auto& [key, values] : counts_) {
    for (const auto& [value, c] : values) out.push_back({{key, value}, c});
  }
  return out;
}

}  // namespace ksched::plugins::interpodaffinity
