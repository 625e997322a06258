#include <memory>
#include <optional>
#include <string_view>

#include <ksched/api/workloads.h>
#include <ksched/helper/default_selector.h>

namespace ksched::plugins::helper {
namespace {

// ANDs the requirements of a workload's label selector (nil or invalid: nothing added, as
// upstream ignores selectors that yield no requirements).
void addRequirements(api::Selector& selector, const std::optional<api::LabelSelector>& ls) {
  if (!ls || !api::labelSelectorError(*ls).empty()) return;
  for (const auto& [k, v] : ls->matchLabels) selector.add(k, api::SelectorOperator::kIn, {v});
  for (const api::LabelSelectorRequirement& r : ls->matchExpressions) {
    selector.add(r.key, r.operator_, r.values);
  }
}

template <typename T>
std::shared_ptr<const T> findByName(const ObjectList<T>& list, std::string_view name) {
  for (const auto& o : list) {
    if (o->metadata.name == name) return o;
  }
  return nullptr;
}

// The union of the selectors of the Services that select the pod.
api::Labels servicesLabelSet(const api::Pod& pod, const ClusterListers& listers) {
  api::Labels set;
  for (const auto& svc : podServices(pod, listers)) {
    for (const auto& [k, v] : *svc->spec.selector) set[k] = v;
  }
  return set;
}

// v1.20's GetPodReplicaSets / GetPodStatefulSets: the workloads whose (non-empty) selector
// matches the pod's labels; none at all if one selector of the namespace is invalid.
template <typename T>
ObjectList<T> selectingWorkloads(const api::Pod& pod, const ObjectList<T>& all) {
  ObjectList<T> out;
  if (pod.metadata.labels.empty()) return out;
  for (const auto& w : all) {
    if (w->spec.selector && !api::labelSelectorError(*w->spec.selector).empty()) return {};
    const api::Selector selector = api::Selector::compile(w->spec.selector);
    if (selector.isEverything() || !selector.matches(pod.metadata.labels)) continue;
    out.push_back(w);
  }
  return out;
}

}  // namespace

ObjectList<api::Service> podServices(const api::Pod& pod, const ClusterListers& listers) {
  ObjectList<api::Service> out;
  for (const auto& svc : listers.services(pod.metadata.namespace_)) {
    if (!svc->spec.selector) continue;
    if (api::Selector::fromSet(*svc->spec.selector).matches(pod.metadata.labels)) {
      out.push_back(svc);
    }
  }
  return out;
}

api::Selector defaultSelector(const api::Pod& pod, const ClusterListers& listers) {
  const std::string& ns = pod.metadata.namespace_;
  api::Labels set = servicesLabelSet(pod, listers);
  api::Selector selector = api::Selector::fromSet(set);

  const api::OwnerReference* owner = nullptr;
  for (const api::OwnerReference& ref : pod.metadata.ownerReferences) {
    if (ref.controller) {
      owner = &ref;
      break;
    }
  }
  if (owner == nullptr) return selector;
  if (owner->apiVersion == "v1" && owner->kind == "ReplicationController") {
    if (auto rc = findByName(listers.replicationControllers(ns), owner->name)) {
      for (const auto& [k, v] : rc->spec.selector) set[k] = v;
      selector = api::Selector::fromSet(set);
    }
  } else if (owner->apiVersion == "apps/v1" && owner->kind == "ReplicaSet") {
    if (auto rs = findByName(listers.replicaSets(ns), owner->name)) {
      addRequirements(selector, rs->spec.selector);
    }
  } else if (owner->apiVersion == "apps/v1" && owner->kind == "StatefulSet") {
    if (auto ss = findByName(listers.statefulSets(ns), owner->name)) {
      addRequirements(selector, ss->spec.selector);
    }
  }
  return selector;
}

api::Selector legacyDefaultSelector(const api::Pod& pod, const ClusterListers& listers) {
  const std::string& ns = pod.metadata.namespace_;
  api::Labels set = servicesLabelSet(pod, listers);
  if (!pod.metadata.labels.empty()) {
    for (const auto& rc : listers.replicationControllers(ns)) {
      const api::Labels& rcSelector = rc->spec.selector;
      if (rcSelector.empty() || !api::Selector::fromSet(rcSelector).matches(pod.metadata.labels)) {
        continue;
      }
      for (const auto& [k, v] : rcSelector) set[k] = v;
    }
  }
  api::Selector selector = api::Selector::fromSet(set);
  for (const auto& rs : selectingWorkloads(pod, listers.replicaSets(ns))) {
    addRequirements(selector, rs->spec.selector);
  }
  for (const auto& ss : selectingWorkloads(pod, listers.statefulSets(ns))) {
    addRequirements(selector, ss->spec.selector);
  }
  return selector;
}

}  // namespace ksched::plugins::helper
