#include "plugins/dynamic_resources/dra_state.h"

#include <spdlog/spdlog.h>

#include <charconv>

#include <ksched/api/decode.h>
#include <ksched/api/features.h>

namespace ksched::plugins::dra {

namespace {

constexpr std::string_view kClaims = "resourceclaims";
constexpr std::string_view kSlices = "resourceslices";
constexpr std::string_view kClasses = "deviceclasses";

ObjectWatch watchOf(std::string kind, std::string_view plural) {
  ObjectWatch w;
  w.kind = std::move(kind);
  w.path = "/apis/resource.k8s.io/v1/" + std::string(plural);
  w.optional = true;  // clusters before 1.26 have no resource.k8s.io: no claims to allocate
  for (const char* v : {"v1beta2", "v1beta1"}) {
    w.alternatives.push_back("/apis/resource.k8s.io/" + std::string(v) + "/" + std::string(plural));
  }
  return w;
}

// resourceVersions are opaque, but this apiserver's are integers; a newer one is larger. An
// object that carries none (read from a file) is older than any version written.
bool atLeast(const std::string& rv, const std::string& than) {
  if (rv.empty()) return than.empty();
  int64_t a = 0;
  int64_t b = 0;
  const auto ra = std::from_chars(rv.data(), rv.data() + rv.size(), a);
  const auto rb = std::from_chars(than.data(), than.data() + than.size(), b);
  if (ra.ec != std::errc{} || rb.ec != std::errc{}) return rv != than;
  return a >= b;
}

}  // namespace

namespace {

// A watch's handlers: `apply` for an object added or updated (one that does not decode is
// logged and skipped), `gone` for one deleted.
ObjectEventHandlers handlersFor(std::string kind, std::function<void(const nlohmann::json&)> apply,
                                std::function<void(const api::ObjectMeta&)> gone) {
  auto applied = [kind = std::move(kind), apply = std::move(apply)](const UnstructuredPtr& o) {
    try {
      apply(o->object);
    } catch (const std::exception& e) {
      spdlog::warn("{} {}: skipped: {}", kind, o->metadata.key(), e.what());
    }
  };
  ObjectEventHandlers h;
  h.onAdd = applied;
  h.onUpdate = [applied](const UnstructuredPtr&, const UnstructuredPtr& o) { applied(o); };
  h.onDelete = [gone = std::move(gone)](const UnstructuredPtr& o) { gone(o->metadata); };
  return h;
}

}  // namespace

DraState::DraState(Handle& handle) : handle_(&handle) {
  stores_.push_back(handle.watchObjects(
      watchOf("ResourceClaim", kClaims),
      handlersFor(
          "ResourceClaim", [this](const nlohmann::json& j) { onClaim(j); },
          [this](const api::ObjectMeta& m) { onClaimDelete(m.namespace_, m.name); })));
  stores_.push_back(
      handle.watchObjects(watchOf("ResourceSlice", kSlices),
                          handlersFor(
                              "ResourceSlice", [this](const nlohmann::json& j) { onSlice(j); },
                              [this](const api::ObjectMeta& m) { onSliceDelete(m.name); })));
  stores_.push_back(
      handle.watchObjects(watchOf("DeviceClass", kClasses),
                          handlersFor(
                              "DeviceClass", [this](const nlohmann::json& j) { onClass(j); },
                              [this](const api::ObjectMeta& m) { onClassDelete(m.name); })));
  if (handle.features().enabled(features::Feature::kDRADeviceTaintRules)) {
    ObjectWatch w;
    w.kind = "DeviceTaintRule";
    w.path = "/apis/resource.k8s.io/v1/devicetaintrules";
    w.alternatives = {"/apis/resource.k8s.io/v1beta2/devicetaintrules",
                      "/apis/resource.k8s.io/v1alpha3/devicetaintrules"};
    w.optional = true;  // served only where the API is enabled
    stores_.push_back(handle.watchObjects(
        std::move(w), handlersFor(
                          "DeviceTaintRule", [this](const nlohmann::json& j) { onTaintRule(j); },
                          [this](const api::ObjectMeta& m) { onTaintRuleDelete(m.name); })));
  }
}

ClaimEntryPtr DraState::decodeClaim(const nlohmann::json& obj) {
  auto e = std::make_shared<ClaimEntry>();
  e->claim = std::make_shared<const api::ResourceClaim>(api::decode<api::ResourceClaim>(obj));
  e->raw = obj;
  return e;
}

ClaimEntryPtr DraState::effective(const Claims& c) { return c.assumed ? c.assumed : c.watched; }

void DraState::countLocked(const DeviceId& id, int delta) {
  int& n = counts_[id];
  const bool was = n > 0;
  n += delta;
  const bool is = n > 0;
  if (n <= 0) counts_.erase(id);
  if (was == is) return;
  if (inUse_.use_count() > 1) inUse_ = std::make_shared<DeviceSet>(*inUse_);  // a cycle holds it
  if (is) {
    inUse_->insert(id);
  } else {
    inUse_->erase(id);
  }
}

void DraState::recountLocked(const std::string& source, const api::ResourceClaim* claim) {
  std::vector<DeviceId> now;
  if (claim != nullptr && claim->status.allocation) {
    for (const auto& r : claim->status.allocation->devices) {
      if (r.adminAccess.value_or(false) || r.shareID) continue;
      now.push_back(DeviceId{r.driver, r.pool, r.device});
    }
  }
  auto it = contributions_.find(source);
  if (it != contributions_.end()) {
    if (it->second == now) return;
    for (const auto& id : it->second) countLocked(id, -1);
  }
  for (const auto& id : now) countLocked(id, +1);
  if (now.empty()) {
    if (it != contributions_.end()) contributions_.erase(it);
  } else {
    contributions_[source] = std::move(now);
  }
}

namespace {

// The uid of the pod `claim` was created for as its extended-resources claim, or "".
std::string extendedClaimOwner(const api::ResourceClaim& claim) {
  const auto a = claim.metadata.annotations.find(kExtendedResourceClaimAnnotation);
  if (a == claim.metadata.annotations.end() || a->second != "true") return {};
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.controller && o.kind == "Pod") return o.uid;
  }
  return {};
}

}  // namespace

void DraState::indexLocked(const std::string& key, const api::ResourceClaim* claim) {
  const std::string owner = claim == nullptr ? std::string() : extendedClaimOwner(*claim);
  if (!owner.empty()) {
    extendedClaims_[owner] = key;
    return;
  }
  for (auto it = extendedClaims_.begin(); it != extendedClaims_.end(); ++it) {
    if (it->second == key) {
      extendedClaims_.erase(it);
      return;
    }
  }
}

void DraState::rebuildExtendedLocked() {
  extended_.clear();
  for (const auto& [name, c] : classes_) {
    extended_[std::string(kDeviceClassPrefix) + name] = c;
  }
  for (const auto& [name, c] : classes_) {
    if (!c->spec.extendedResourceName) continue;
    ClassPtr& slot = extended_[*c->spec.extendedResourceName];
    if (slot && slot != c) {
      // Several classes name it: the newest wins, then the lowest name (a migration from one
      // class to another). RFC 3339 timestamps as served order as text.
      const auto& a = c->metadata.creationTimestamp;
      const auto& b = slot->metadata.creationTimestamp;
      if (a < b || (a == b && c->metadata.name >= slot->metadata.name)) continue;
    }
    slot = c;
  }
}

void DraState::noteVersionLocked(const nlohmann::json& obj) {
  if (auto v = obj.find("apiVersion"); v != obj.end() && v->is_string()) {
    const auto& text = v->get_ref<const std::string&>();
    if (text.starts_with("resource.k8s.io/")) apiVersion_ = text;
  }
}

ClassPtr DraState::classForExtendedResource(std::string_view resource) const {
  std::lock_guard lock(mu_);
  auto it = extended_.find(resource);
  return it == extended_.end() ? nullptr : it->second;
}

ClaimEntryPtr DraState::extendedResourceClaim(std::string_view podUid) const {
  std::lock_guard lock(mu_);
  auto it = extendedClaims_.find(std::string(podUid));
  if (it == extendedClaims_.end()) return nullptr;
  auto c = claims_.find(it->second);
  return c == claims_.end() ? nullptr : effective(c->second);
}

std::string DraState::apiVersion() const {
  std::lock_guard lock(mu_);
  return apiVersion_;
}

ClaimEntryPtr DraState::claim(std::string_view ns, std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = claims_.find(claimKey(ns, name));
  return it == claims_.end() ? nullptr : effective(it->second);
}

ClassPtr DraState::deviceClass(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = classes_.find(name);
  return it == classes_.end() ? nullptr : it->second;
}

namespace {

bool selects(const api::DeviceTaintRule& r, const api::ResourceSlice& s) {
  return (!r.driver || *r.driver == s.spec.driver) && (!r.pool || *r.pool == s.spec.pool.name);
}

// `slice` with the taints of the rules that select its devices (the slice itself when none).
SlicePtr patched(
    const SlicePtr& slice,
    const std::map<std::string, std::shared_ptr<const api::DeviceTaintRule>, std::less<>>& rules) {
  std::shared_ptr<api::ResourceSlice> copy;
  for (const auto& [name, rule] : rules) {
    if (!selects(*rule, *slice)) continue;
    for (size_t i = 0; i < slice->spec.devices.size(); ++i) {
      if (rule->device && *rule->device != slice->spec.devices[i].name) continue;
      if (!copy) copy = std::make_shared<api::ResourceSlice>(*slice);
      copy->spec.devices[i].taints.push_back(rule->taint);
    }
  }
  return copy ? SlicePtr(std::move(copy)) : slice;
}

}  // namespace

std::shared_ptr<const std::vector<SlicePtr>> DraState::slices() const {
  std::lock_guard lock(mu_);
  if (!sliceList_) {
    auto list = std::make_shared<std::vector<SlicePtr>>();
    list->reserve(slices_.size());
    for (const auto& [name, s] : slices_) {
      list->push_back(rules_.empty() ? s : patched(s, rules_));
    }
    sliceList_ = std::move(list);
  }
  return sliceList_;
}

void DraState::onTaintRule(const nlohmann::json& obj) {
  auto rule = std::make_shared<const api::DeviceTaintRule>(obj.get<api::DeviceTaintRule>());
  std::shared_ptr<const api::DeviceTaintRule> before;
  {
    std::lock_guard lock(mu_);
    auto& slot = rules_[rule->metadata.name];
    before = slot;
    slot = rule;
    sliceList_.reset();
  }
  if (before) reportRuleChange(*before);
  reportRuleChange(*rule);
}

void DraState::onTaintRuleDelete(std::string_view name) {
  std::shared_ptr<const api::DeviceTaintRule> before;
  {
    std::lock_guard lock(mu_);
    auto it = rules_.find(name);
    if (it == rules_.end()) return;
    before = it->second;
    rules_.erase(it);
    sliceList_.reset();
  }
  reportRuleChange(*before);
}

void DraState::reportRuleChange(const api::DeviceTaintRule& rule) {
  if (handle_ == nullptr) return;
  std::vector<SlicePtr> affected;
  {
    std::lock_guard lock(mu_);
    for (const auto& [name, s] : slices_) {
      if (selects(rule, *s)) affected.push_back(s);
    }
  }
  // A taint gone frees devices; one added changes nothing for pods already waiting, but the
  // queue is told as upstream's tracker tells it: the slices changed.
  for (const auto& s : affected) {
    handle_->clusterEvent({EventResource::kResourceSlice, kUpdateOther, {}}, s, s);
  }
}

std::shared_ptr<const DeviceSet> DraState::devicesInUse() const {
  std::lock_guard lock(mu_);
  return inUse_;
}

void DraState::avoid(const std::string& claimUid, const api::AllocationResult& allocation,
                     std::chrono::steady_clock::time_point until) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(avoided_, [&](const auto& kv) { return kv.second.until <= now; });
  Avoided& a = avoided_[claimUid];
  a.until = until;
  for (const auto& r : allocation.devices) a.devices.push_back({r.driver, r.pool, r.device});
}

std::shared_ptr<const DeviceSet> DraState::devicesInUseFor(
    const std::vector<std::string>& claimUids, const api::Pod* pod) const {
  std::lock_guard lock(mu_);
  if (avoided_.empty() && nominations_.empty()) return inUse_;
  const auto now = std::chrono::steady_clock::now();
  std::shared_ptr<DeviceSet> out;
  auto add = [&](const DeviceId& id) {
    if (!out) out = std::make_shared<DeviceSet>(*inUse_);
    out->insert(id);
  };
  for (const auto& uid : claimUids) {
    auto it = avoided_.find(uid);
    if (it == avoided_.end() || it->second.until <= now) continue;
    for (const auto& id : it->second.devices) add(id);
  }
  if (pod != nullptr) {
    // Capacity a preemption freed for another pod is held for it against pods that are not
    // more important; a pod of higher priority may take it (the preemptor then preempts again).
    const int32_t prio = api::podPriority(*pod);
    for (const auto& [uid, n] : nominations_) {
      if (uid == pod->metadata.uid || n.expiry <= now || n.priority < prio) continue;
      for (const auto& c : n.claims) {
        for (const auto& r : c.allocation.devices) {
          if (r.adminAccess.value_or(false) || r.shareID) continue;
          if (inUse_->contains(DeviceIdView{r.driver, r.pool, r.device})) continue;
          add(DeviceId{r.driver, r.pool, r.device});
        }
      }
    }
  }
  return out ? out : inUse_;
}

void DraState::nominate(Nomination n) {
  std::lock_guard lock(mu_);
  const auto now = std::chrono::steady_clock::now();
  std::erase_if(nominations_, [&](const auto& kv) { return kv.second.expiry <= now; });
  std::string uid = n.podUid;
  nominations_.insert_or_assign(std::move(uid), std::move(n));
}

void DraState::dropNomination(const std::string& podUid) {
  std::lock_guard lock(mu_);
  nominations_.erase(podUid);
}

std::string DraState::settling(const api::Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = nominations_.find(pod.metadata.uid);
  if (it == nominations_.end() || it->second.expiry <= std::chrono::steady_clock::now()) return {};
  for (const auto& c : it->second.claims) {
    auto ci = claims_.find(c.key);
    if (ci == claims_.end()) continue;
    const ClaimEntryPtr e = effective(ci->second);
    if (e && e->claim->metadata.uid == c.uid && e->claim->status.allocation) {
      return "not eligible due to ResourceClaim " + c.key +
             ", released by an earlier preemption, not deallocated yet.";
    }
  }
  return {};
}

size_t DraState::nominations() const {
  std::lock_guard lock(mu_);
  return nominations_.size();
}

bool DraState::hasPendingAllocation(const std::string& uid) const {
  std::lock_guard lock(mu_);
  return inFlight_.contains(uid);
}

void DraState::signalPendingAllocation(const std::string& uid, ClaimPtr withAllocation,
                                       const std::string& group) {
  std::lock_guard lock(mu_);
  recountLocked("f:" + uid, withAllocation.get());
  inFlight_[uid] = {std::move(withAllocation), group, 1};
}

ClaimPtr DraState::pendingAllocationOf(const std::string& uid, const std::string& group) const {
  std::lock_guard lock(mu_);
  auto it = inFlight_.find(uid);
  if (it == inFlight_.end() || group.empty() || it->second.group != group) return nullptr;
  return it->second.claim;
}

bool DraState::sharePendingAllocation(const std::string& uid) {
  std::lock_guard lock(mu_);
  auto it = inFlight_.find(uid);
  if (it == inFlight_.end()) return false;
  ++it->second.holders;
  return true;
}

bool DraState::removePendingAllocation(const std::string& uid) {
  std::lock_guard lock(mu_);
  auto it = inFlight_.find(uid);
  if (it == inFlight_.end() || --it->second.holders > 0) return false;
  inFlight_.erase(it);
  recountLocked("f:" + uid, nullptr);
  return true;
}

void DraState::dropPendingAllocation(const std::string& uid) {
  std::lock_guard lock(mu_);
  if (inFlight_.erase(uid) > 0) recountLocked("f:" + uid, nullptr);
}

void DraState::assume(ClaimEntryPtr written) {
  std::lock_guard lock(mu_);
  const auto& m = written->claim->metadata;
  const std::string key = claimKey(m.namespace_, m.name);
  Claims& c = claims_[key];
  if (c.watched && atLeast(c.watched->claim->metadata.resourceVersion, m.resourceVersion)) return;
  c.assumed = std::move(written);
  recountLocked("c:" + key, c.assumed->claim.get());
  indexLocked(key, c.assumed->claim.get());
}

void DraState::restore(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  const std::string key = claimKey(ns, name);
  auto it = claims_.find(key);
  if (it == claims_.end() || !it->second.assumed) return;
  it->second.assumed.reset();
  const ClaimEntryPtr now = it->second.watched;
  if (!now) claims_.erase(it);
  recountLocked("c:" + key, now ? now->claim.get() : nullptr);
  indexLocked(key, now ? now->claim.get() : nullptr);
}

void DraState::onClaim(const nlohmann::json& obj) {
  ClaimEntryPtr next = decodeClaim(obj);
  ClaimEntryPtr before;
  {
    std::lock_guard lock(mu_);
    const auto& m = next->claim->metadata;
    const std::string key = claimKey(m.namespace_, m.name);
    Claims& c = claims_[key];
    before = effective(c);
    c.watched = next;
    if (c.assumed && atLeast(m.resourceVersion, c.assumed->claim->metadata.resourceVersion)) {
      c.assumed.reset();
    }
    recountLocked("c:" + key, effective(c)->claim.get());
    indexLocked(key, effective(c)->claim.get());
    noteVersionLocked(obj);
  }
  if (handle_ == nullptr) return;
  if (before) {
    handle_->clusterEvent({EventResource::kResourceClaim, kUpdateOther, {}}, before->claim,
                          next->claim);
  } else {
    handle_->clusterEvent({EventResource::kResourceClaim, kAdd, {}}, std::monostate{}, next->claim);
  }
}

void DraState::onClaimDelete(std::string_view ns, std::string_view name) {
  ClaimEntryPtr before;
  {
    std::lock_guard lock(mu_);
    const std::string key = claimKey(ns, name);
    auto it = claims_.find(key);
    if (it == claims_.end()) return;
    before = effective(it->second);
    claims_.erase(it);
    recountLocked("c:" + key, nullptr);
    indexLocked(key, nullptr);
  }
  if (handle_ != nullptr && before) {
    handle_->clusterEvent({EventResource::kResourceClaim, kDelete, {}}, before->claim,
                          std::monostate{});
  }
}

void DraState::onSlice(const nlohmann::json& obj) {
  auto next = std::make_shared<const api::ResourceSlice>(api::decode<api::ResourceSlice>(obj));
  SlicePtr before;
  {
    std::lock_guard lock(mu_);
    SlicePtr& s = slices_[next->metadata.name];
    before = s;
    s = next;
    sliceList_.reset();
    noteVersionLocked(obj);
  }
  if (handle_ == nullptr) return;
  if (before) {
    handle_->clusterEvent({EventResource::kResourceSlice, kUpdateOther, {}}, before, next);
  } else {
    handle_->clusterEvent({EventResource::kResourceSlice, kAdd, {}}, std::monostate{}, next);
  }
}

void DraState::onSliceDelete(std::string_view name) {
  SlicePtr before;
  {
    std::lock_guard lock(mu_);
    auto it = slices_.find(name);
    if (it == slices_.end()) return;
    before = it->second;
    slices_.erase(it);
    sliceList_.reset();
  }
  if (handle_ != nullptr) {
    handle_->clusterEvent({EventResource::kResourceSlice, kDelete, {}}, before, std::monostate{});
  }
}

void DraState::onClass(const nlohmann::json& obj) {
  auto next = std::make_shared<const api::DeviceClass>(api::decode<api::DeviceClass>(obj));
  ClassPtr before;
  {
    std::lock_guard lock(mu_);
    ClassPtr& c = classes_[next->metadata.name];
    before = c;
    c = next;
    rebuildExtendedLocked();
    noteVersionLocked(obj);
  }
  if (handle_ == nullptr) return;
  if (before) {
    handle_->clusterEvent({EventResource::kDeviceClass, kUpdateOther, {}}, before, next);
  } else {
    handle_->clusterEvent({EventResource::kDeviceClass, kAdd, {}}, std::monostate{}, next);
  }
}

void DraState::onClassDelete(std::string_view name) {
  std::lock_guard lock(mu_);
  classes_.erase(std::string(name));
  rebuildExtendedLocked();
}

}  // namespace ksched::plugins::dra
