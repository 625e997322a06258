#include "sim/memory_cluster.h"

#include <cctype>
#include <chrono>
#include <cstddef>
#include <optional>

#include <ksched/api/rfc3339.h>

namespace ksched::sim {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The objects of `others` a watch of `path` ("/apis/<group>/<version>/<plural>",
// "/api/v1/<plural>", optionally "/namespaces/<ns>/" before the plural) would list.
std::vector<UnstructuredPtr> watchedObjects(const Cluster& cluster, const std::string& path,
                                            std::set<std::string>& kinds) {
  std::string rest = path;
  std::string apiVersion;
  if (rest.starts_with("/apis/")) {
    rest = rest.substr(6);
    const size_t g = rest.find('/');
    const size_t v = g == std::string::npos ? g : rest.find('/', g + 1);
    if (v == std::string::npos) return {};
    apiVersion = rest.substr(0, v);
    rest = rest.substr(v + 1);
  } else if (rest.starts_with("/api/v1/")) {
    apiVersion = "v1";
    rest = rest.substr(8);
  } else {
    return {};
  }
  std::string ns;
  if (rest.starts_with("namespaces/")) {
    rest = rest.substr(11);
    const size_t s = rest.find('/');
    if (s == std::string::npos) return {};
    ns = rest.substr(0, s);
    rest = rest.substr(s + 1);
  }
  std::vector<UnstructuredPtr> out;
  for (const auto& [key, objects] : cluster.others) {
    if (!key.starts_with(apiVersion + "/")) continue;
    const std::string kind = lower(key.substr(apiVersion.size() + 1));
    if (rest != kind + "s" && rest != kind + "es" && rest != kind) continue;
    kinds.insert(key);
    for (const auto& o : objects) {
      if (ns.empty() || o->metadata.namespace_ == ns) out.push_back(o);
    }
  }
  return out;
}

ApiError notFound(const api::Pod& pod) {
  return ApiError{404, "NotFound", "pods \"" + keyOf(pod) + "\" not found"};
}

// JSON patch operations "test" and "remove" on /status/conditions/<i>[/<field>]; the error,
// if one fails or is of another kind.
std::optional<std::string> applyConditionOps(api::Pod& pod, const nlohmann::json& ops) {
  static constexpr std::string_view kPrefix = "/status/conditions/";
  for (const auto& op : ops) {
    if (!op.is_object()) return "a JSON patch operation must be an object";
    const std::string kind = op.value("op", "");
    const std::string path = op.value("path", "");
    if (!path.starts_with(kPrefix)) return "unsupported path " + path;
    std::string rest = path.substr(kPrefix.size());
    const std::string field =
        rest.find('/') == std::string::npos ? "" : rest.substr(rest.find('/') + 1);
    rest = rest.substr(0, rest.find('/'));
    size_t i = 0;
    if (rest.empty() || rest.find_first_not_of("0123456789") != std::string::npos ||
        (i = std::stoul(rest)) >= pod.status.conditions.size()) {
      return "no condition at " + path;
    }
    auto& c = pod.status.conditions[i];
    if (kind == "remove" && field.empty()) {
      pod.status.conditions.erase(pod.status.conditions.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (kind == "test") {
      const std::string* have = field == "type"      ? &c.type
                                : field == "status"  ? &c.status
                                : field == "reason"  ? &c.reason
                                : field == "message" ? &c.message
                                                     : nullptr;
      const auto want = op.find("value");
      if (have == nullptr || want == op.end() || !want->is_string() ||
          want->get<std::string>() != *have) {
        return "test failed at " + path;
      }
    } else {
      return "unsupported operation " + kind + " at " + path;
    }
  }
  return std::nullopt;
}

// A merge patch of the scheduler's status writes (nominatedNodeName, the extended resource
// claim's status, conditions, annotations) applied to `pod`. Throws nlohmann::json::exception
// on a malformed one.
void applyStatusPatch(api::Pod& pod, const nlohmann::json& patch) {
  if (auto s = patch.find("status"); s != patch.end() && s->is_object()) {
    if (auto n = s->find("nominatedNodeName"); n != s->end()) {
      pod.status.nominatedNodeName = n->is_string() ? n->get<std::string>() : "";
    }
    if (auto e = s->find("extendedResourceClaimStatus"); e != s->end() && e->is_object()) {
      api::PodExtendedResourceClaimStatus ext;
      ext.resourceClaimName = e->value("resourceClaimName", "");
      for (const auto& m : e->value("requestMappings", nlohmann::json::array())) {
        ext.requestMappings.push_back({m.value("containerName", ""), m.value("resourceName", ""),
                                       m.value("requestName", "")});
      }
      pod.status.extendedResourceClaimStatus = std::move(ext);
    }
    if (auto cs = s->find("conditions"); cs != s->end() && cs->is_array()) {
      for (const auto& c : *cs) {
        api::PodCondition pc;
        pc.type = c.value("type", "");
        pc.status = c.value("status", "");
        pc.reason = c.value("reason", "");
        pc.message = c.value("message", "");
        std::erase_if(pod.status.conditions,
                      [&](const api::PodCondition& x) { return x.type == pc.type; });
        pod.status.conditions.push_back(std::move(pc));
      }
    }
  }
  if (auto m = patch.find("metadata"); m != patch.end() && m->is_object()) {
    if (auto a = m->find("annotations"); a != m->end() && a->is_object()) {
      for (const auto& [k, v] : a->items()) {
        if (v.is_string()) pod.metadata.annotations[k] = v.get<std::string>();
      }
    }
  }
}

}  // namespace

std::string keyOf(const api::Pod& p) { return p.metadata.namespace_ + "/" + p.metadata.name; }

MemoryCluster::MemoryCluster(const Cluster& cluster, bool victimsBecomePending, uint64_t& recreated,
                             std::function<void(const std::string& uid)> onRecreated,
                             StaticClusterListers& listers)
    : cluster_(cluster),
      victimsBecomePending_(victimsBecomePending),
      recreated_(recreated),
      onRecreated_(std::move(onRecreated)),
      // Called with mu_ held.
      volumes_(listers, [this](std::string_view node) -> const api::Labels* {
        if (nodeLabels_.empty()) {
          for (const NodePtr& n : cluster_.nodes) {
            nodeLabels_.emplace(n->metadata.name, &n->metadata.labels);
          }
        }
        auto it = nodeLabels_.find(node);
        return it == nodeLabels_.end() ? nullptr : it->second;
      }) {}

void MemoryCluster::deliverFeed() {
  for (;;) {
    std::vector<std::function<void()>> batch;
    {
      std::lock_guard lock(mu_);
      if (feed_.empty()) break;
      batch.swap(feed_);
    }
    for (auto& f : batch) f();
  }
}

std::function<void(std::function<void()>)> MemoryCluster::deliverer() {
  return [this](std::function<void()> f) { enqueue(std::move(f)); };
}

std::shared_ptr<const ObjectStore> MemoryCluster::watch(const ObjectWatch& w,
                                                        ObjectEventHandlers handlers) {
  std::lock_guard lock(mu_);
  // Files may hold any served version of the kind: every one is watched.
  auto objects = watchedObjects(cluster_, w.path, watchedKinds_);
  std::vector<std::string> paths{w.path};
  for (const auto& alt : w.alternatives) {
    auto more = watchedObjects(cluster_, alt, watchedKinds_);
    objects.insert(objects.end(), more.begin(), more.end());
    paths.push_back(alt);
  }
  // The resourceclaim controller's part (claims from templates) reads the templates.
  if (w.path.ends_with("/resourceclaims")) {
    for (const auto& [key, kindObjects] : cluster_.others) {
      if (key.starts_with("resource.k8s.io/") && key.ends_with("/ResourceClaimTemplate")) {
        watchedKinds_.insert(key);
      }
    }
  }
  return watched_.watch(std::move(paths), std::move(objects), std::move(handlers));
}

PodPtr MemoryCluster::insert(const PodPtr& given) {
  PodPtr p = given;
  // Outside the lock: the claims' watches see them added at once, and their handlers may read.
  if (!p->spec.resourceClaims.empty()) {
    auto copy = std::make_shared<api::Pod>(*p);
    if (watched_.generateClaims(*copy, cluster_.others)) p = std::move(copy);
  }
  std::lock_guard lock(mu_);
  pods_[p->metadata.uid] = p;
  keys_[p->metadata.uid] = keyOf(*p);
  uidByKey_[keys_[p->metadata.uid]] = p->metadata.uid;
  order_.push_back(p->metadata.uid);
  return p;
}

std::string MemoryCluster::freeUid(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  const std::string base = "sim-" + pod.metadata.namespace_ + "-" + pod.metadata.name;
  std::string uid = base;
  for (int i = 1; pods_.contains(uid); ++i) uid = base + "-" + std::to_string(i);
  return uid;
}

bool MemoryCluster::contains(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return pods_.contains(uid);
}

PodPtr MemoryCluster::latest(const std::string& uid) const {
  std::lock_guard lock(mu_);
  if (auto it = pods_.find(uid); it != pods_.end()) return it->second;
  if (auto it = lastSeen_.find(uid); it != lastSeen_.end()) return it->second;
  return nullptr;
}

bool MemoryCluster::gone(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return gone_.contains(uid);
}

bool MemoryCluster::placed(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(uid);
  return it != pods_.end() && !it->second->spec.nodeName.empty();
}

std::string MemoryCluster::key(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = keys_.find(uid);
  return it == keys_.end() ? "" : it->second;
}

std::vector<std::string> MemoryCluster::devicesOf(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  return watched_.devicesOf(pod);
}

std::vector<std::pair<std::string, Victim>> MemoryCluster::victims() const {
  std::lock_guard lock(mu_);
  return victims_;
}

std::vector<std::pair<std::string, size_t>> MemoryCluster::unreadKinds() const {
  std::lock_guard lock(mu_);
  std::vector<std::pair<std::string, size_t>> out;
  for (const auto& [kind, objects] : cluster_.others) {
    if (!watchedKinds_.contains(kind)) out.emplace_back(kind, objects.size());
  }
  return out;
}

void MemoryCluster::writeBack(Cluster& out) const {
  std::lock_guard lock(mu_);
  std::vector<PodPtr> pods;
  pods.reserve(order_.size());
  for (const auto& uid : order_) {
    if (auto it = pods_.find(uid); it != pods_.end()) pods.push_back(it->second);
  }
  out.pods = std::move(pods);
  watched_.writeBack(out.others);
  volumes_.writeBack(out);
}

ApiResult MemoryCluster::bindPod(const api::Pod& pod, const std::string& nodeName) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it == pods_.end()) return notFound(pod);
  if (!it->second->spec.nodeName.empty()) {
    return ApiError{
        409, "Conflict",
        "pod " + keyOf(pod) + " is already assigned to node \"" + it->second->spec.nodeName + "\""};
  }
  auto bound = std::make_shared<api::Pod>(*it->second);
  bound->spec.nodeName = nodeName;
  bound->status.nominatedNodeName.clear();
  std::erase_if(bound->status.conditions,
                [](const api::PodCondition& c) { return c.type == "PodScheduled"; });
  // As the apiserver's binding: the condition turns True now (the load-aware plugins count a pod
  // bound in an earlier run from then).
  bound->status.conditions.push_back(
      {"PodScheduled", "True", "", "", api::formatRFC3339(std::chrono::system_clock::now())});
  PodPtr old = it->second;
  it->second = bound;
  enqueue([this, old, bound] { core_->onPodUpdate(old, bound); });
  return std::nullopt;
}

ApiResult MemoryCluster::deletePod(const api::Pod& pod) {
  std::shared_ptr<api::Pod> again;
  {
    std::lock_guard lock(mu_);
    auto it = pods_.find(pod.metadata.uid);
    if (it == pods_.end()) return notFound(pod);
    PodPtr old = it->second;
    pods_.erase(it);
    lastSeen_[old->metadata.uid] = old;
    gone_.insert(old->metadata.uid);
    victims_.emplace_back(old->metadata.uid, Victim{old->metadata.namespace_, old->metadata.name,
                                                    old->spec.nodeName, ""});
    enqueue([this, old] { core_->onPodDelete(old); });
    watched_.releaseClaimsOf(*old, deliverer());
    if (victimsBecomePending_) {
      again = std::make_shared<api::Pod>(*old);
      again->spec.nodeName.clear();
      again->metadata.uid = old->metadata.uid + "-r" + std::to_string(++recreated_);
      again->metadata.deletionTimestamp.reset();
      again->status = api::PodStatus{};
      again->status.phase = "Pending";
      keys_[again->metadata.uid] = keys_[old->metadata.uid];
    }
  }
  if (!again) return std::nullopt;
  // The copy's template claims are generated anew, as for a pod of the cluster (outside the
  // lock, as insert() does).
  if (!again->spec.resourceClaims.empty()) watched_.generateClaims(*again, cluster_.others);
  {
    std::lock_guard lock(mu_);
    PodPtr stored = again;
    pods_[stored->metadata.uid] = stored;
    order_.push_back(stored->metadata.uid);
    enqueue([this, stored] { core_->onPodAdd(stored); });
  }
  if (onRecreated_) onRecreated_(again->metadata.uid);
  return std::nullopt;
}

ApiResult MemoryCluster::patchPodStatus(const api::Pod& pod, const nlohmann::json& patch,
                                        std::string_view /*contentType*/) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(pod.metadata.uid);
  if (it == pods_.end()) return notFound(pod);
  auto next = std::make_shared<api::Pod>(*it->second);
  if (patch.is_array()) {
    // A JSON patch: the scheduler's removal of a condition, guarded by tests.
    if (auto error = applyConditionOps(*next, patch)) return ApiError{422, "Invalid", *error};
  } else {
    try {
      applyStatusPatch(*next, patch);
    } catch (const nlohmann::json::exception& e) {
      return ApiError{422, "Invalid", e.what()};
    }
  }
  PodPtr old = it->second;
  it->second = next;
  enqueue([this, old, next] { core_->onPodUpdate(old, next); });
  return std::nullopt;
}

// metrics.k8s.io's collections ("/apis/metrics.k8s.io/v1beta1/nodes" is NodeMetrics), as
// metrics-server answers them: the readings of Cluster::others, read as of now. Their
// timestamps move forward together so that the newest is now: a file's readings are the
// cluster as it is, and a reading older than the others stays as much older (staleAfter).
static std::optional<nlohmann::json> metricsList(const Cluster& cluster, const std::string& path,
                                                 std::set<std::string>& kinds) {
  constexpr std::string_view kPrefix = "/apis/metrics.k8s.io/";
  if (!path.starts_with(kPrefix)) return std::nullopt;
  const std::string rest = path.substr(kPrefix.size());
  const size_t slash = rest.find('/');
  if (slash == std::string::npos) return std::nullopt;
  const std::string version = rest.substr(0, slash);
  const std::string plural = rest.substr(slash + 1);
  const std::string kind = plural == "nodes" ? "NodeMetrics" : plural == "pods" ? "PodMetrics" : "";
  if (kind.empty()) return std::nullopt;
  const std::string key = "metrics.k8s.io/" + version + "/" + kind;
  kinds.insert(key);
  nlohmann::json list = {{"kind", kind + "List"},
                         {"apiVersion", "metrics.k8s.io/" + version},
                         {"metadata", nlohmann::json::object()},
                         {"items", nlohmann::json::array()}};
  auto it = cluster.others.find(key);
  if (it == cluster.others.end()) return list;
  std::optional<api::TimePoint> newest;
  for (const auto& o : it->second) {
    const auto t = o->object.find("timestamp");
    if (t == o->object.end() || !t->is_string()) continue;
    if (auto at = api::parseRFC3339(t->get<std::string>()); at && (!newest || *at > *newest)) {
      newest = at;
    }
  }
  const auto shift =
      newest ? std::chrono::system_clock::now() - *newest : api::TimePoint::duration{};
  // Quantities a YAML file wrote as numbers (cpu: 3) are strings on the wire.
  const auto quantities = [](nlohmann::json& usage) {
    if (!usage.is_object()) return;
    for (auto& q : usage) {
      if (q.is_number()) q = q.dump();
    }
  };
  for (const auto& o : it->second) {
    nlohmann::json item = o->object;
    if (auto u = item.find("usage"); u != item.end()) quantities(*u);
    if (auto cs = item.find("containers"); cs != item.end() && cs->is_array()) {
      for (auto& c : *cs) {
        if (c.is_object() && c.contains("usage")) quantities(c["usage"]);
      }
    }
    if (auto t = item.find("timestamp"); t != item.end() && t->is_string()) {
      if (auto at = api::parseRFC3339(t->get<std::string>())) {
        *t = api::formatRFC3339(*at + shift);
      }
    }
    list["items"].push_back(std::move(item));
  }
  return list;
}

ApiResult MemoryCluster::get(const std::string& path, nlohmann::json* out) {
  std::lock_guard lock(mu_);
  if (auto list = metricsList(cluster_, path, watchedKinds_)) {
    if (out != nullptr) *out = std::move(*list);
    return std::nullopt;
  }
  constexpr std::string_view kNamespaces = "/api/v1/namespaces/";
  if (const size_t pods = path.find("/pods/");
      path.starts_with(kNamespaces) && pods != std::string::npos) {
    const std::string key =
        path.substr(kNamespaces.size(), pods - kNamespaces.size()) + "/" + path.substr(pods + 6);
    auto it = uidByKey_.find(key);
    if (it == uidByKey_.end() || gone_.contains(it->second)) {
      return ApiError{404, "NotFound", "pods \"" + path.substr(pods + 6) + "\" not found"};
    }
    if (out != nullptr) {
      *out = {{"metadata", {{"name", path.substr(pods + 6)}, {"uid", it->second}}}};
    }
    return std::nullopt;
  }
  return watched_.get(path, out);
}

ApiResult MemoryCluster::patch(const std::string& path, const nlohmann::json& patch,
                               nlohmann::json* out, std::string_view /*contentType*/) {
  std::lock_guard lock(mu_);
  if (VolumeController::handles(path)) {
    return volumes_.patch(
        path, patch, out,
        [this](const ClusterEvent& e, const EventObject& o, const EventObject& n) {
          enqueue([this, e, o, n] { core_->onClusterEvent(e, o, n); });
        });
  }
  return watched_.patch(path, patch, out, deliverer());
}

ApiResult MemoryCluster::create(const std::string& path, const nlohmann::json& object,
                                nlohmann::json* out) {
  std::lock_guard lock(mu_);
  return watched_.create(path, object, out, deliverer());
}

ApiResult MemoryCluster::remove(const std::string& path, const nlohmann::json& preconditions) {
  std::lock_guard lock(mu_);
  return watched_.remove(path, preconditions, deliverer());
}

}  // namespace ksched::sim
