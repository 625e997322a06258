#include "sim/volume_controller.h"

#include <charconv>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>
#include <utility>

namespace ksched::sim {
namespace {

constexpr std::string_view kVolumesPrefix = "/api/v1/persistentvolumes/";
constexpr std::string_view kClaimsInfix = "/persistentvolumeclaims/";
constexpr std::string_view kNamespacesPrefix = "/api/v1/namespaces/";
constexpr std::string_view kNoProvisioner = "kubernetes.io/no-provisioner";

// The next resourceVersion of an object: one more than its own (0 when it has none).
std::string nextVersion(const std::string& rv) {
  uint64_t n = 0;
  (void)std::from_chars(rv.data(), rv.data() + rv.size(), n);
  return std::to_string(n + 1);
}

ApiError notFound(std::string_view kind, std::string_view name) {
  return ApiError{404, "NotFound", std::string(kind) + " \"" + std::string(name) + "\" not found"};
}

void mergeAnnotations(const nlohmann::json& patch, api::ObjectMeta& meta) {
  const auto m = patch.find("metadata");
  if (m == patch.end() || !m->is_object()) return;
  const auto a = m->find("annotations");
  if (a == m->end() || !a->is_object()) return;
  for (const auto& [k, v] : a->items()) {
    if (v.is_string()) meta.annotations[k] = v.get<std::string>();
  }
}

int64_t request(const api::PersistentVolumeClaim& c) {
  auto it = c.spec.resources.requests.find(std::string(api::kResourceStorage));
  return it == c.spec.resources.requests.end() ? 0 : it->second.value();
}

void writeOut(nlohmann::json* out, const api::ObjectMeta& meta) {
  if (out == nullptr) return;
  *out = {{"metadata",
           {{"name", meta.name},
            {"namespace", meta.namespace_},
            {"resourceVersion", meta.resourceVersion}}}};
}

}  // namespace

bool VolumeController::handles(std::string_view path) {
  return path.starts_with(kVolumesPrefix) ||
         (path.starts_with(kNamespacesPrefix) && path.find(kClaimsInfix) != std::string_view::npos);
}

ApiResult VolumeController::patch(const std::string& path, const nlohmann::json& patch,
                                  nlohmann::json* out, const Emit& emit) {
  try {
    if (path.starts_with(kVolumesPrefix)) {
      return patchVolume(path.substr(kVolumesPrefix.size()), patch, out, emit);
    }
    const std::string rest = path.substr(kNamespacesPrefix.size());
    const size_t infix = rest.find(kClaimsInfix);
    if (infix == std::string::npos) return notFound("path", path);
    return patchClaim(rest.substr(0, infix), rest.substr(infix + kClaimsInfix.size()), patch, out,
                      emit);
  } catch (const std::exception& e) {
    return ApiError{422, "Invalid", e.what()};
  }
}

ApiResult VolumeController::patchVolume(const std::string& name, const nlohmann::json& patch,
                                        nlohmann::json* out, const Emit& emit) {
  auto old = listers_.getPersistentVolume(name);
  if (!old) return notFound("persistentvolumes", name);
  api::PersistentVolume pv = *old;
  mergeAnnotations(patch, pv.metadata);
  if (const auto spec = patch.find("spec"); spec != patch.end() && spec->contains("claimRef")) {
    pv.spec.claimRef = spec->at("claimRef").get<api::ObjectReference>();
  }
  pv.metadata.resourceVersion = nextVersion(pv.metadata.resourceVersion);
  writeOut(out, pv.metadata);
  // The PV controller: a PV claimed by an existing, unbound claim binds both.
  std::shared_ptr<const api::PersistentVolumeClaim> claim;
  if (pv.spec.claimRef) {
    claim = listers_.getPersistentVolumeClaim(pv.spec.claimRef->namespace_, pv.spec.claimRef->name);
    if (claim) pv.status.phase = std::string(api::kVolumeBound);
  }
  listers_.add(pv);
  volumes_.emplace("", name);
  emit({EventResource::kPersistentVolume, kUpdateOther, {}}, old,
       listers_.getPersistentVolume(name));
  if (claim && claim->spec.volumeName.empty()) bind(*claim, name, emit);
  return std::nullopt;
}

ApiResult VolumeController::patchClaim(const std::string& ns, const std::string& name,
                                       const nlohmann::json& patch, nlohmann::json* out,
                                       const Emit& emit) {
  auto old = listers_.getPersistentVolumeClaim(ns, name);
  if (!old) return notFound("persistentvolumeclaims", name);
  api::PersistentVolumeClaim claim = *old;
  mergeAnnotations(patch, claim.metadata);
  claim.metadata.resourceVersion = nextVersion(claim.metadata.resourceVersion);
  writeOut(out, claim.metadata);
  listers_.add(claim);
  claims_.emplace(ns, name);
  auto stored = listers_.getPersistentVolumeClaim(ns, name);
  emit({EventResource::kPersistentVolumeClaim, kUpdateOther, {}}, old, stored);
  const auto node = claim.metadata.annotations.find(std::string(api::kAnnSelectedNode));
  if (claim.spec.volumeName.empty() && node != claim.metadata.annotations.end()) {
    (void)provision(*stored, node->second, emit);
  }
  return std::nullopt;
}

void VolumeController::bind(const api::PersistentVolumeClaim& claim, const std::string& pv,
                            const Emit& emit) {
  auto old = listers_.getPersistentVolumeClaim(claim.metadata.namespace_, claim.metadata.name);
  api::PersistentVolumeClaim bound = claim;
  bound.spec.volumeName = pv;
  bound.metadata.annotations[std::string(api::kAnnBindCompleted)] = "yes";
  bound.status.phase = std::string(api::kVolumeBound);
  if (auto v = listers_.getPersistentVolume(pv)) {
    bound.status.capacity = v->spec.capacity;
    bound.status.accessModes = v->spec.accessModes;
  }
  bound.metadata.resourceVersion = nextVersion(bound.metadata.resourceVersion);
  listers_.add(bound);
  claims_.emplace(claim.metadata.namespace_, claim.metadata.name);
  emit({EventResource::kPersistentVolumeClaim, kUpdateOther, {}}, old,
       listers_.getPersistentVolumeClaim(claim.metadata.namespace_, claim.metadata.name));
}

bool VolumeController::provision(const api::PersistentVolumeClaim& claim, const std::string& node,
                                 const Emit& emit) {
  const std::string cls = api::persistentVolumeClaimClass(claim);
  auto sc = cls.empty() ? nullptr : listers_.getStorageClass(cls);
  if (!sc || sc->provisioner.empty() || sc->provisioner == kNoProvisioner) return false;
  const api::Labels* labels = nodeLabels_(node);
  const int64_t size = request(claim);

  // The CSIStorageCapacity VolumeBinding matched (the same choice: by namespace and name).
  std::shared_ptr<const api::CSIStorageCapacity> matched;
  auto driver = listers_.getCSIDriver(sc->provisioner);
  if (driver && driver->spec.storageCapacity && labels != nullptr) {
    for (auto& c : listers_.csiStorageCapacities()) {
      if (c->storageClassName != cls || !c->nodeTopology || !c->topology.matches(*labels)) continue;
      const std::optional<api::Quantity>& limit =
          c->maximumVolumeSize ? c->maximumVolumeSize : c->capacity;
      if (!limit || limit->value() < size) continue;
      if (!matched || std::tie(c->metadata.namespace_, c->metadata.name) <
                          std::tie(matched->metadata.namespace_, matched->metadata.name)) {
        matched = std::move(c);
      }
    }
  }

  api::PersistentVolume pv;
  pv.metadata.name =
      "pvc-" + (claim.metadata.uid.empty() ? claim.metadata.namespace_ + "-" + claim.metadata.name
                                           : claim.metadata.uid);
  pv.metadata.resourceVersion = "1";
  pv.metadata.annotations["pv.kubernetes.io/provisioned-by"] = sc->provisioner;
  pv.spec.capacity[std::string(api::kResourceStorage)] =
      api::Quantity::fromValue(size, api::QuantityFormat::kBinarySI);
  pv.spec.storageClassName = cls;
  pv.spec.accessModes = claim.spec.accessModes;
  pv.spec.volumeMode = claim.spec.volumeMode;
  pv.spec.persistentVolumeReclaimPolicy = sc->reclaimPolicy;
  pv.spec.claimRef = api::ObjectReference{"v1",
                                          "PersistentVolumeClaim",
                                          claim.metadata.namespace_,
                                          claim.metadata.name,
                                          claim.metadata.uid,
                                          "",
                                          ""};
  if (driver || !sc->provisioner.starts_with("kubernetes.io/")) {
    pv.spec.csi = api::CSIPersistentVolumeSource{sc->provisioner, pv.metadata.name, false};
  }
  // Topology-constrained storage: reachable from the capacity's segment.
  if (matched && !matched->nodeTopology->matchLabels.empty()) {
    api::NodeSelectorTerm term;
    for (const auto& [k, v] : matched->nodeTopology->matchLabels) {
      term.matchExpressions.push_back({k, api::SelectorOperator::kIn, {v}});
    }
    api::NodeSelector sel;
    sel.nodeSelectorTerms.push_back(std::move(term));
    pv.spec.nodeAffinity = api::VolumeNodeAffinity{std::move(sel)};
  }
  pv.status.phase = std::string(api::kVolumeBound);
  provisioned_[pv.metadata.name] = pv;
  const std::string name = pv.metadata.name;
  listers_.add(std::move(pv));
  volumes_.emplace("", name);
  emit({EventResource::kPersistentVolume, kAdd, {}}, std::monostate{},
       listers_.getPersistentVolume(name));
  bind(claim, name, emit);

  if (matched) {
    api::CSIStorageCapacity next = *matched;
    const int64_t left = next.capacity ? std::max<int64_t>(0, next.capacity->value() - size) : 0;
    if (next.capacity)
      next.capacity = api::Quantity::fromValue(left, api::QuantityFormat::kBinarySI);
    if (next.maximumVolumeSize && next.capacity && next.maximumVolumeSize->value() > left) {
      next.maximumVolumeSize = next.capacity;
    }
    next.metadata.resourceVersion = nextVersion(next.metadata.resourceVersion);
    listers_.add(next);
    capacities_.emplace(next.metadata.namespace_, next.metadata.name);
    emit({EventResource::kCSIStorageCapacity, kUpdateOther, {}}, matched,
         std::make_shared<const api::CSIStorageCapacity>(std::move(next)));
  }
  return true;
}

namespace {

// Replaces the object of `key` in `objects` by `now` (appended when absent).
template <typename T>
void replace(std::vector<T>& objects, const std::pair<std::string, std::string>& key,
             const T& now) {
  for (T& o : objects) {
    if (o.metadata.namespace_ == key.first && o.metadata.name == key.second) {
      o = now;
      return;
    }
  }
  objects.push_back(now);
}

}  // namespace

void VolumeController::writeBack(Cluster& out) const {
  for (const auto& key : volumes_) {
    if (auto pv = listers_.getPersistentVolume(key.second)) {
      replace(out.persistentVolumes, key, *pv);
    }
  }
  for (const auto& key : claims_) {
    if (auto pvc = listers_.getPersistentVolumeClaim(key.first, key.second)) {
      replace(out.persistentVolumeClaims, key, *pvc);
    }
  }
  if (capacities_.empty()) return;
  for (const auto& c : listers_.csiStorageCapacities()) {
    const std::pair<std::string, std::string> key{c->metadata.namespace_, c->metadata.name};
    if (capacities_.contains(key)) replace(out.csiStorageCapacities, key, *c);
  }
}

}  // namespace ksched::sim
