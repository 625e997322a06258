// ClusterListers: read access to the cluster objects plugins consult besides pods and nodes
// (upstream's SharedInformerFactory listers). The scheduler backs it with informers; unit tests
// use StaticClusterListers.
//
// Thread-safe. Objects are immutable snapshots (shared_ptr to const); a list is a copy of the
// pointers, in no particular order.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/policy.h>
#include <ksched/api/storage.h>
#include <ksched/api/workloads.h>

namespace ksched {

template <typename T>
using ObjectList = std::vector<std::shared_ptr<const T>>;

class ClusterListers {
 public:
  virtual ~ClusterListers() = default;

  // Objects that select pods (PodTopologySpread's system defaults), in one namespace.
  [[nodiscard]] virtual ObjectList<api::Service> services(std::string_view ns) const = 0;
  [[nodiscard]] virtual ObjectList<api::ReplicaSet> replicaSets(std::string_view ns) const = 0;
  [[nodiscard]] virtual ObjectList<api::StatefulSet> statefulSets(std::string_view ns) const = 0;
  [[nodiscard]] virtual ObjectList<api::ReplicationController> replicationControllers(
      std::string_view ns) const = 0;

  // Namespaces (InterPodAffinity's namespaceSelector); nullptr when unknown.
  [[nodiscard]] virtual ObjectList<api::Namespace> namespaces() const = 0;
  [[nodiscard]] virtual std::shared_ptr<const api::Namespace> getNamespace(
      std::string_view name) const = 0;

  // PodDisruptionBudgets in one namespace (preemption).
  [[nodiscard]] virtual ObjectList<api::PodDisruptionBudget> podDisruptionBudgets(
      std::string_view ns) const = 0;

  // Storage (volume plugins); nullptr when unknown.
  [[nodiscard]] virtual std::shared_ptr<const api::PersistentVolumeClaim> getPersistentVolumeClaim(
      std::string_view ns, std::string_view name) const = 0;
  [[nodiscard]] virtual std::shared_ptr<const api::PersistentVolume> getPersistentVolume(
      std::string_view name) const = 0;
  [[nodiscard]] virtual ObjectList<api::PersistentVolume> persistentVolumes() const = 0;
  [[nodiscard]] virtual std::shared_ptr<const api::StorageClass> getStorageClass(
      std::string_view name) const = 0;
  [[nodiscard]] virtual std::shared_ptr<const api::CSINode> getCSINode(
      std::string_view name) const = 0;
  // CSI drivers and the storage capacity they report (VolumeBinding, NodeVolumeLimits). Not
  // pure: a listers implementation without them has no driver and no capacity objects.
  [[nodiscard]] virtual std::shared_ptr<const api::CSIDriver> getCSIDriver(
      std::string_view /*name*/) const {
    return nullptr;
  }
  // Every CSIStorageCapacity, all namespaces.
  [[nodiscard]] virtual ObjectList<api::CSIStorageCapacity> csiStorageCapacities() const {
    return {};
  }
};

// An in-memory ClusterListers: objects are added (or replaced, by namespace/name) with add().
// Used by unit tests, and as the empty default where no informers run.
class StaticClusterListers final : public ClusterListers {
 public:
  void add(api::Service o) { put(services_, std::move(o)); }
  void add(api::ReplicaSet o) { put(replicaSets_, std::move(o)); }
  void add(api::StatefulSet o) { put(statefulSets_, std::move(o)); }
  void add(api::ReplicationController o) { put(rcs_, std::move(o)); }
  void add(api::Namespace o) { put(namespaces_, std::move(o)); }
  void add(api::PodDisruptionBudget o) { put(pdbs_, std::move(o)); }
  void add(api::PersistentVolumeClaim o) { put(pvcs_, std::move(o)); }
  void add(api::PersistentVolume o) { put(pvs_, std::move(o)); }
  void add(api::StorageClass o) { put(storageClasses_, std::move(o)); }
  void add(api::CSINode o) { put(csiNodes_, std::move(o)); }
  void add(api::CSIDriver o) { put(csiDrivers_, std::move(o)); }
  void add(api::CSIStorageCapacity o) { put(capacities_, std::move(o)); }

  [[nodiscard]] ObjectList<api::Service> services(std::string_view ns) const override {
    return inNamespace(services_, ns);
  }
  [[nodiscard]] ObjectList<api::ReplicaSet> replicaSets(std::string_view ns) const override {
    return inNamespace(replicaSets_, ns);
  }
  [[nodiscard]] ObjectList<api::StatefulSet> statefulSets(std::string_view ns) const override {
    return inNamespace(statefulSets_, ns);
  }
  [[nodiscard]] ObjectList<api::ReplicationController> replicationControllers(
      std::string_view ns) const override {
    return inNamespace(rcs_, ns);
  }
  [[nodiscard]] ObjectList<api::Namespace> namespaces() const override { return all(namespaces_); }
  [[nodiscard]] std::shared_ptr<const api::Namespace> getNamespace(
      std::string_view name) const override {
    return find(namespaces_, "", name);
  }
  [[nodiscard]] ObjectList<api::PodDisruptionBudget> podDisruptionBudgets(
      std::string_view ns) const override {
    return inNamespace(pdbs_, ns);
  }
  [[nodiscard]] std::shared_ptr<const api::PersistentVolumeClaim> getPersistentVolumeClaim(
      std::string_view ns, std::string_view name) const override {
    return find(pvcs_, ns, name);
  }
  [[nodiscard]] std::shared_ptr<const api::PersistentVolume> getPersistentVolume(
      std::string_view name) const override {
    return find(pvs_, "", name);
  }
  [[nodiscard]] ObjectList<api::PersistentVolume> persistentVolumes() const override {
    return all(pvs_);
  }
  [[nodiscard]] std::shared_ptr<const api::StorageClass> getStorageClass(
      std::string_view name) const override {
    return find(storageClasses_, "", name);
  }
  [[nodiscard]] std::shared_ptr<const api::CSINode> getCSINode(
      std::string_view name) const override {
    return find(csiNodes_, "", name);
  }
  [[nodiscard]] std::shared_ptr<const api::CSIDriver> getCSIDriver(
      std::string_view name) const override {
    return find(csiDrivers_, "", name);
  }
  [[nodiscard]] ObjectList<api::CSIStorageCapacity> csiStorageCapacities() const override {
    return all(capacities_);
  }

 private:
  // (namespace, name) -> object.
  template <typename T>
  using Store = std::map<std::pair<std::string, std::string>, std::shared_ptr<const T>>;

  template <typename T>
  void put(Store<T>& store, T o) {
    std::lock_guard lock(mu_);
    auto key = std::make_pair(o.metadata.namespace_, o.metadata.name);
    store[key] = std::make_shared<const T>(std::move(o));
  }
  template <typename T>
  ObjectList<T> inNamespace(const Store<T>& store, std::string_view ns) const {
    std::lock_guard lock(mu_);
    ObjectList<T> out;
    for (const auto& [key, o] : store) {
      if (key.first == ns) out.push_back(o);
    }
    return out;
  }
  template <typename T>
  ObjectList<T> all(const Store<T>& store) const {
    std::lock_guard lock(mu_);
    ObjectList<T> out;
    for (const auto& [key, o] : store) out.push_back(o);
    return out;
  }
  template <typename T>
  std::shared_ptr<const T> find(const Store<T>& store, std::string_view ns,
                                std::string_view name) const {
    std::lock_guard lock(mu_);
    auto it = store.find(std::make_pair(std::string(ns), std::string(name)));
    return it == store.end() ? nullptr : it->second;
  }

  mutable std::mutex mu_;
  Store<api::Service> services_;
  Store<api::ReplicaSet> replicaSets_;
  Store<api::StatefulSet> statefulSets_;
  Store<api::ReplicationController> rcs_;
  Store<api::Namespace> namespaces_;
  Store<api::PodDisruptionBudget> pdbs_;
  Store<api::PersistentVolumeClaim> pvcs_;
  Store<api::PersistentVolume> pvs_;
  Store<api::StorageClass> storageClasses_;
  Store<api::CSINode> csiNodes_;
  Store<api::CSIDriver> csiDrivers_;
  Store<api::CSIStorageCapacity> capacities_;
};

}  // namespace ksched
