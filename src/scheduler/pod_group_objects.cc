// The PodGroups the pod-group cycle reads (GenericWorkload): the core's view of the PodGroup
// watch, and the PodGroupInitiallyScheduled condition it writes.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/rfc3339.h>

#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {

namespace {

// Handlers keeping `objects` (guarded by `mu`, by "<namespace>/<name>") from a watch of kind T;
// an object that does not decode is logged and its last good version kept.
template <typename T>
ObjectEventHandlers keepGroups(const char* kind, std::mutex& mu,
                               std::unordered_map<std::string, std::shared_ptr<const T>>& objects) {
  auto put = [kind, &mu, &objects](const UnstructuredPtr& o) {
    try {
      auto g = std::make_shared<const T>(api::decode<T>(o->object));
      std::lock_guard lock(mu);
      objects[api::groupKey(g->metadata.namespace_, g->metadata.name)] = std::move(g);
    } catch (const api::DecodeError& e) {
      spdlog::warn("{} {}/{} not read: {}", kind, o->metadata.namespace_, o->metadata.name,
                   e.what());
    }
  };
  ObjectEventHandlers h;
  h.onAdd = put;
  h.onUpdate = [put](const UnstructuredPtr&, const UnstructuredPtr& n) { put(n); };
  h.onDelete = [&mu, &objects](const UnstructuredPtr& o) {
    std::lock_guard lock(mu);
    objects.erase(api::groupKey(o->metadata.namespace_, o->metadata.name));
  };
  return h;
}

}  // namespace

void SchedulerCore::watchPodGroups() {
  if (!podGroupCycles_ || !env_.watchObjects) return;
  podGroupWatch_ =
      env_.watchObjects(ObjectWatch{.kind = "PodGroup",
                                    .path = std::string(api::kPodGroupsV1beta1),
                                    .labelSelector = "",
                                    .alternatives = {std::string(api::kPodGroupsV1alpha2)},
                                    .optional = true},
                        keepGroups("PodGroup", podGroupsMu_, podGroups_));
  if (!options_.features.enabled(features::Feature::kCompositePodGroup)) return;
  compositeWatch_ =
      env_.watchObjects(ObjectWatch{.kind = "CompositePodGroup",
                                    .path = std::string(api::kCompositePodGroupsV1alpha3),
                                    .labelSelector = "",
                                    .alternatives = {},
                                    .optional = true},
                        keepGroups("CompositePodGroup", podGroupsMu_, composites_));
}

namespace {

// Upstream's limit on a tree's depth (KEP-6012).
constexpr int kMaxGroupTreeDepth = 4;

// The children of the CompositePodGroup `parent` of `ns`, in name order.
void addChildren(
    GroupNode& node, const std::string& ns,
    const std::unordered_map<std::string, std::shared_ptr<const api::PodGroup>>& podGroups,
    const std::unordered_map<std::string, std::shared_ptr<const api::CompositePodGroup>>&
        composites,
    int depth) {
  std::map<std::string, GroupNode> children;
  for (const auto& [key, cpg] : composites) {
    const auto& parent = cpg->spec.parentCompositePodGroupName;
    if (cpg->metadata.namespace_ != ns || !parent || *parent != node.info.name) continue;
    GroupNode c;
    c.info = PodGroupInfo{.ns = ns, .name = cpg->metadata.name, .composite = cpg};
    if (depth < kMaxGroupTreeDepth) addChildren(c, ns, podGroups, composites, depth + 1);
    children.emplace("c/" + cpg->metadata.name, std::move(c));
  }
  for (const auto& [key, pg] : podGroups) {
    const auto& parent = pg->spec.parentCompositePodGroupName;
    if (pg->metadata.namespace_ != ns || !parent || *parent != node.info.name) continue;
    GroupNode c;
    c.info = PodGroupInfo{.ns = ns, .name = pg->metadata.name, .podGroup = pg};
    children.emplace("p/" + pg->metadata.name, std::move(c));
  }
  for (auto& [name, c] : children) node.children.push_back(std::move(c));
}

}  // namespace

std::string SchedulerCore::groupTree(const std::string& ns, const std::string& podGroup,
                                     GroupNode& root) const {
  std::lock_guard lock(podGroupsMu_);
  auto pg = podGroups_.find(api::groupKey(ns, podGroup));
  if (pg == podGroups_.end()) {
    return fmt::format("failed to get pod group state: pod group {:?} not found", podGroup);
  }
  const auto& parentName = pg->second->spec.parentCompositePodGroupName;
  if (!options_.features.enabled(features::Feature::kCompositePodGroup) || !parentName) {
    root.info = PodGroupInfo{.ns = ns, .name = podGroup, .podGroup = pg->second};
    return "";
  }
  // Up to the root, then its whole tree down.
  std::shared_ptr<const api::CompositePodGroup> top;
  std::string name = *parentName;
  for (int depth = 1;; ++depth) {
    auto it = composites_.find(api::groupKey(ns, name));
    if (it == composites_.end()) {
      return fmt::format(
          "failed to get composite pod group state: composite pod group {:?} "
          "not found",
          name);
    }
    if (depth > kMaxGroupTreeDepth) {
      return fmt::format("composite pod group {:?} is more than {} levels deep", name,
                         kMaxGroupTreeDepth);
    }
    top = it->second;
    if (!top->spec.parentCompositePodGroupName) break;
    name = *top->spec.parentCompositePodGroupName;
  }
  root.info = PodGroupInfo{.ns = ns, .name = top->metadata.name, .composite = top};
  addChildren(root, ns, podGroups_, composites_, 1);
  return "";
}

std::set<std::string, std::less<>> SchedulerCore::groupScope(const api::Pod& pod) const {
  const std::string& own = *pod.spec.podGroupName();
  std::set<std::string, std::less<>> scope{own};
  if (!options_.features.enabled(features::Feature::kCompositePodGroup)) return scope;
  GroupNode root;
  if (!groupTree(pod.metadata.namespace_, own, root).empty()) return scope;
  std::vector<const GroupNode*> stack{&root};
  while (!stack.empty()) {
    const GroupNode* n = stack.back();
    stack.pop_back();
    if (!n->composite()) scope.insert(n->info.name);
    for (const GroupNode& c : n->children) stack.push_back(&c);
  }
  return scope;
}

std::shared_ptr<const api::PodGroup> SchedulerCore::podGroupOf(const std::string& ns,
                                                               const std::string& name) const {
  std::lock_guard lock(podGroupsMu_);
  auto it = podGroups_.find(api::groupKey(ns, name));
  return it == podGroups_.end() ? nullptr : it->second;
}

void SchedulerCore::writePodGroupCondition(const api::PodGroup& pg, std::string status,
                                           std::string reason, std::string message) {
  writeGroupCondition("podgroups", pg.apiVersion, pg.metadata, pg.status,
                      api::Condition{.type = std::string(pg.initiallyScheduledType()),
                                     .status = std::move(status),
                                     .reason = std::move(reason),
                                     .message = std::move(message)});
}

void SchedulerCore::writePodGroupCondition(const api::CompositePodGroup& cpg, std::string status,
                                           std::string reason, std::string message) {
  writeGroupCondition("compositepodgroups", cpg.apiVersion, cpg.metadata, cpg.status,
                      api::Condition{.type = std::string(api::kCompositePodGroupInitiallyScheduled),
                                     .status = std::move(status),
                                     .reason = std::move(reason),
                                     .message = std::move(message)});
}

void SchedulerCore::writeGroupCondition(const std::string& resource, const std::string& apiVersion,
                                        const api::ObjectMeta& meta,
                                        const api::PodGroupStatus& current, api::Condition next) {
  {
    // The watch may not show this scheduler's own True yet.
    std::lock_guard lock(podGroupsMu_);
    if (next.status == "True") {
      podGroupsScheduled_.insert(meta.uid);
    } else if (podGroupsScheduled_.contains(meta.uid)) {
      return;
    }
  }
  std::vector<api::Condition> conditions = current.conditions;
  auto it = std::ranges::find_if(conditions,
                                 [&](const api::Condition& c) { return c.type == next.type; });
  if (it != conditions.end() && it->status == "True" && next.status != "True") return;
  next.lastTransitionTime = api::formatRFC3339(std::chrono::system_clock::now());
  if (meta.generation != 0) next.observedGeneration = meta.generation;
  if (it != conditions.end()) {
    if (it->status == next.status) next.lastTransitionTime = it->lastTransitionTime;
    if (*it == next) return;
    *it = next;
  } else {
    conditions.push_back(next);
  }
  if (!scheduling_.load()) return;  // a follower writes nothing
  nlohmann::json patch = {{"status", {{"conditions", conditions}}}};
  const std::string path = "/apis/" + apiVersion + "/namespaces/" + meta.namespace_ + "/" +
                           resource + "/" + meta.name + "/status";
  std::string kind = resource == "podgroups" ? "PodGroup" : "CompositePodGroup";
  auto task = [this, path, kind = std::move(kind), patch = std::move(patch)] {
    // A strategic merge patch, as upstream writes it; a group served as a custom resource
    // takes only a merge patch (415), which with the whole list of conditions says the same.
    ApiResult r = env_.api->patch(path, patch, nullptr, "application/strategic-merge-patch+json");
    if (r && r->code == 415) r = env_.api->patch(path, patch, nullptr);
    if (r) spdlog::warn("Failed to update {} status {}: {}", kind, path, r->message);
  };
  if (options_.synchronous) {
    handOn(std::move(task));
  } else {
    statusWriters_.submit(std::move(task));
  }
}

GroupExplanation SchedulerCore::explainGroup(const api::Pod& pod, const std::string& group) const {
  const std::string& ns = pod.metadata.namespace_;
  GroupExplanation g;
  g.podGroup = api::groupKey(ns, group);
  if (const auto pg = podGroupOf(ns, group)) {
    g.found = true;
    g.gang = pg->spec.schedulingPolicy.gang();
    g.minCount = pg->spec.schedulingPolicy.minCount();
    if (!pg->spec.topologyKeys.empty()) g.topologyKey = pg->spec.topologyKeys.front();
  }
  std::vector<PodPtr> members;
  {
    std::shared_lock lock(podsMu_);
    for (const auto& [key, p] : pods_) {
      const std::string* name = p->spec.podGroupName();
      if (p->metadata.namespace_ == ns && name != nullptr && *name == group) members.push_back(p);
    }
  }
  // By name, numbers by value: train-2 before train-10.
  std::sort(members.begin(), members.end(), [](const PodPtr& a, const PodPtr& b) {
    const std::string& x = a->metadata.name;
    const std::string& y = b->metadata.name;
    auto digit = [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; };
    size_t i = 0, j = 0;
    while (i < x.size() && j < y.size()) {
      if (digit(x[i]) && digit(y[j])) {
        size_t ei = i, ej = j;
        while (ei < x.size() && digit(x[ei])) ++ei;
        while (ej < y.size() && digit(y[ej])) ++ej;
        const std::string_view dx = std::string_view(x).substr(i, ei - i);
        const std::string_view dy = std::string_view(y).substr(j, ej - j);
        if (dx.size() != dy.size()) return dx.size() < dy.size();
        if (dx != dy) return dx < dy;
        i = ei;
        j = ej;
      } else {
        if (x[i] != y[j]) return x[i] < y[j];
        ++i;
        ++j;
      }
    }
    return x.size() - i < y.size() - j;
  });
  for (const PodPtr& p : members) {
    GroupExplanation::Member m{
        .pod = p->metadata.key(), .state = "queued", .node = "", .detail = ""};
    if (cache_.isAssumed(p->metadata.uid)) {
      m.state = "assumed";
      if (const PodInfoPtr cached = cache_.getPod(p->metadata.uid))
        m.node = cached->pod->spec.nodeName;
    } else if (assigned(*p)) {
      m.state = "bound";
      m.node = p->spec.nodeName;
    } else if (!p->spec.schedulingGates.empty()) {
      m.state = "gated";
      for (const auto& gate : p->spec.schedulingGates) {
        m.detail += (m.detail.empty() ? "schedulingGates: " : ", ") + gate;
      }
    } else if (Status s = preEnqueueStatus(*p); !s.ok()) {
      m.state = "gated";
      m.detail = (s.plugin().empty() ? "" : s.plugin() + ": ") + s.message();
    }
    g.members.push_back(std::move(m));
  }
  return g;
}

}  // namespace ksched::scheduler
