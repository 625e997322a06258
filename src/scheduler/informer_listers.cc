#include "scheduler/informer_listers.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace ksched::scheduler {
namespace {

template <typename T>
ObjectList<T> inNamespace(const informer::Informer<T>& inf, std::string_view ns) {
  ObjectList<T> out;
  for (auto& o : inf.list()) {
    if (o->metadata.namespace_ == ns) out.push_back(std::move(o));
  }
  return out;
}

std::string defaultSpreadingWithout(const std::string& kinds) {
  return "default spreading (PodTopologySpread's system defaults, SelectorSpread) does not "
         "spread pods by the " +
         kinds + " that select them";
}

std::string key(std::string_view ns, std::string_view name) {
  std::string k(ns);
  if (!k.empty()) k += '/';
  k += name;
  return k;
}

}  // namespace

InformerListers::InformerListers(client::RestClient& client, EventHandler onEvent)
    : client_(client),
      onEvent_(std::move(onEvent)),
      // The kinds the scheduler can do without say what is off while RBAC forbids them
      // (docs/operations.md#rbac); volumes and PDBs are required: without them pods would be
      // placed wrongly, not just less well.
      services_(client, {.kind = "Service",
                         .path = "/api/v1/services",
                         .withoutIt = defaultSpreadingWithout("Services")}),
      replicaSets_(client, {.kind = "ReplicaSet",
                            .path = "/apis/apps/v1/replicasets",
                            .withoutIt = defaultSpreadingWithout("ReplicaSets")}),
      statefulSets_(client, {.kind = "StatefulSet",
                             .path = "/apis/apps/v1/statefulsets",
                             .withoutIt = defaultSpreadingWithout("StatefulSets")}),
      rcs_(client, {.kind = "ReplicationController",
                    .path = "/api/v1/replicationcontrollers",
                    .withoutIt = defaultSpreadingWithout("ReplicationControllers")}),
      namespaces_(client,
                  {.kind = "Namespace",
                   .path = "/api/v1/namespaces",
                   .withoutIt = "a namespaceSelector in pod affinity and anti-affinity terms "
                                "matches no namespace but an empty one (all), as before "
                                "Kubernetes 1.21"}),
      pvcs_(client, {"PersistentVolumeClaim", "/api/v1/persistentvolumeclaims"}),
      pvs_(client, {"PersistentVolume", "/api/v1/persistentvolumes"}),
      storageClasses_(client, {"StorageClass", "/apis/storage.k8s.io/v1/storageclasses"}),
      csiNodes_(client, {.kind = "CSINode",
                         .path = "/apis/storage.k8s.io/v1/csinodes",
                         .withoutIt = "NodeVolumeLimits sees no CSI driver's attach limit on any "
                                      "node"}),
      csiDrivers_(client,
                  {.kind = "CSIDriver",
                   .path = "/apis/storage.k8s.io/v1/csidrivers",
                   .withoutIt = "VolumeBinding checks no driver's storage capacity and "
                                "NodeVolumeLimits no driver's preventPodSchedulingIfMissing"}) {
  watchEvents(services_, EventResource::kService);
  watchEvents(namespaces_, EventResource::kNamespace);
  watchEvents(pvcs_, EventResource::kPersistentVolumeClaim);
  watchEvents(pvs_, EventResource::kPersistentVolume);
  watchEvents(storageClasses_, EventResource::kStorageClass);
  watchEvents(csiNodes_, EventResource::kCSINode);
  watchEvents(csiDrivers_, EventResource::kCSIDriver);
}

InformerListers::~InformerListers() { stop(); }

template <typename T>
void InformerListers::watchEvents(informer::Informer<T>& inf, EventResource resource) {
  if (!onEvent_) return;
  ClusterEvent add{resource, kAdd, {}};
  ClusterEvent update{resource, kUpdate, {}};
  ClusterEvent del{resource, kDelete, {}};
  using Ptr = std::shared_ptr<const T>;
  inf.addHandlers({[this, add](const Ptr& o) { onEvent_(add, {}, o); },
                   [this, update](const Ptr& o, const Ptr& n) { onEvent_(update, o, n); },
                   [this, del](const Ptr& o) { onEvent_(del, o, {}); }});
}

void InformerListers::start() {
  if (!pdbs_) {
    std::optional<std::string> version;
    try {
      version = client_.pickVersion({"policy/v1", "policy/v1beta1"});
    } catch (const std::exception& e) {
      spdlog::warn("discovery of policy versions failed ({}); assuming policy/v1", e.what());
      version = "policy/v1";
    }
    if (version) {
      pdbs_ = std::make_unique<informer::Informer<api::PodDisruptionBudget>>(
          client_, informer::ResourceDef{"PodDisruptionBudget",
                                         "/apis/" + *version + "/poddisruptionbudgets"});
      watchEvents(*pdbs_, EventResource::kPodDisruptionBudget);
    } else {
      spdlog::warn("the apiserver serves no PodDisruptionBudget version; preemption ignores PDBs");
    }
  }
  if (!capacities_) {
    std::optional<std::string> version;
    bool discoveryFailed = false;
    try {
      version = client_.pickVersionServing(
          {"storage.k8s.io/v1", "storage.k8s.io/v1beta1", "storage.k8s.io/v1alpha1"},
          "csistoragecapacities");
    } catch (const std::exception& e) {
      // Not assumed, unlike the PDB version: a guess the apiserver answers 404 would hold up
      // start-up.
      spdlog::warn(
          "discovery of CSIStorageCapacity failed ({}); VolumeBinding provisions without "
          "checking storage capacity until ksched restarts",
          e.what());
      discoveryFailed = true;
    }
    if (!version) {
      if (!discoveryFailed)
        spdlog::info(
            "the apiserver serves no CSIStorageCapacity (storage.k8s.io/v1 from Kubernetes 1.24, "
            "v1beta1 from 1.21, v1alpha1 1.19-1.23 where turned on): VolumeBinding provisions "
            "without checking storage capacity");
    } else {
      capacities_ = std::make_unique<informer::Informer<api::CSIStorageCapacity>>(
          client_,
          informer::ResourceDef{.kind = "CSIStorageCapacity",
                                .path = "/apis/" + *version + "/csistoragecapacities",
                                .withoutIt = "VolumeBinding provisions without checking any "
                                             "driver's storage capacity"});
      watchEvents(*capacities_, EventResource::kCSIStorageCapacity);
    }
  }
  services_.start();
  replicaSets_.start();
  statefulSets_.start();
  rcs_.start();
  namespaces_.start();
  pvcs_.start();
  pvs_.start();
  storageClasses_.start();
  csiNodes_.start();
  csiDrivers_.start();
  if (pdbs_) pdbs_->start();
  if (capacities_) capacities_->start();
}

void InformerListers::stop() {
  services_.stop();
  replicaSets_.stop();
  statefulSets_.stop();
  rcs_.stop();
  namespaces_.stop();
  pvcs_.stop();
  pvs_.stop();
  storageClasses_.stop();
  csiNodes_.stop();
  csiDrivers_.stop();
  if (pdbs_) pdbs_->stop();
  if (capacities_) capacities_->stop();
}

std::string InformerListers::fatalError() const {
  for (const std::string& e :
       {services_.fatalError(), replicaSets_.fatalError(), statefulSets_.fatalError(),
        rcs_.fatalError(), namespaces_.fatalError(), pvcs_.fatalError(), pvs_.fatalError(),
        storageClasses_.fatalError(), csiNodes_.fatalError(), csiDrivers_.fatalError(),
        pdbs_ ? pdbs_->fatalError() : std::string(),
        capacities_ ? capacities_->fatalError() : std::string()}) {
    if (!e.empty()) return e;
  }
  return "";
}

bool InformerListers::waitForSync(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()),
                    std::chrono::milliseconds(0));
  };
  bool ok = services_.waitForSync(left()) && replicaSets_.waitForSync(left()) &&
            statefulSets_.waitForSync(left()) && rcs_.waitForSync(left()) &&
            namespaces_.waitForSync(left()) && pvcs_.waitForSync(left()) &&
            pvs_.waitForSync(left()) && storageClasses_.waitForSync(left()) &&
            csiNodes_.waitForSync(left()) && csiDrivers_.waitForSync(left());
  return ok && (!pdbs_ || pdbs_->waitForSync(left())) &&
         (!capacities_ || capacities_->waitForSync(left()));
}

bool InformerListers::hasSynced() const {
  return services_.hasSynced() && replicaSets_.hasSynced() && statefulSets_.hasSynced() &&
         rcs_.hasSynced() && namespaces_.hasSynced() && pvcs_.hasSynced() && pvs_.hasSynced() &&
         storageClasses_.hasSynced() && csiNodes_.hasSynced() && csiDrivers_.hasSynced() &&
         (!pdbs_ || pdbs_->hasSynced()) && (!capacities_ || capacities_->hasSynced());
}

ObjectList<api::Service> InformerListers::services(std::string_view ns) const {
  return inNamespace(services_, ns);
}
ObjectList<api::ReplicaSet> InformerListers::replicaSets(std::string_view ns) const {
  return inNamespace(replicaSets_, ns);
}
ObjectList<api::StatefulSet> InformerListers::statefulSets(std::string_view ns) const {
  return inNamespace(statefulSets_, ns);
}
ObjectList<api::ReplicationController> InformerListers::replicationControllers(
    std::string_view ns) const {
  return inNamespace(rcs_, ns);
}
ObjectList<api::Namespace> InformerListers::namespaces() const { return namespaces_.list(); }
std::shared_ptr<const api::Namespace> InformerListers::getNamespace(std::string_view name) const {
  return namespaces_.get(std::string(name));
}
ObjectList<api::PodDisruptionBudget> InformerListers::podDisruptionBudgets(
    std::string_view ns) const {
  return pdbs_ ? inNamespace(*pdbs_, ns) : ObjectList<api::PodDisruptionBudget>{};
}
std::shared_ptr<const api::PersistentVolumeClaim> InformerListers::getPersistentVolumeClaim(
    std::string_view ns, std::string_view name) const {
  return pvcs_.get(key(ns, name));
}
std::shared_ptr<const api::PersistentVolume> InformerListers::getPersistentVolume(
    std::string_view name) const {
  return pvs_.get(std::string(name));
}
ObjectList<api::PersistentVolume> InformerListers::persistentVolumes() const { return pvs_.list(); }
std::shared_ptr<const api::StorageClass> InformerListers::getStorageClass(
    std::string_view name) const {
  return storageClasses_.get(std::string(name));
}
std::shared_ptr<const api::CSINode> InformerListers::getCSINode(std::string_view name) const {
  return csiNodes_.get(std::string(name));
}
std::shared_ptr<const api::CSIDriver> InformerListers::getCSIDriver(std::string_view name) const {
  return csiDrivers_.get(std::string(name));
}
ObjectList<api::CSIStorageCapacity> InformerListers::csiStorageCapacities() const {
  return capacities_ ? capacities_->list() : ObjectList<api::CSIStorageCapacity>{};
}

}  // namespace ksched::scheduler
