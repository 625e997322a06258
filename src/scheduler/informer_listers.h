// InformerListers: ClusterListers backed by one informer per kind, plus the queue moves their
// events trigger (upstream's event handlers for PV, PVC, StorageClass, CSINode, CSIDriver,
// CSIStorageCapacity, Service,
// Namespace and PDB changes).
//
// Threads: one reflector thread per kind (refl-<Kind>). Reads are thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <ksched/cluster_event.h>
#include <ksched/listers.h>

#include "client/rest_client.h"
#include "informer/informer.h"

namespace ksched::scheduler {

class InformerListers final : public ClusterListers {
 public:
  using EventHandler = std::function<void(const ClusterEvent& event, const EventObject& oldObj,
                                          const EventObject& newObj)>;
  // `onEvent` is called (on a reflector thread) for every add/update/delete with the event
  // upstream's queue would see, e.g. {kPersistentVolumeClaim, kAdd} and the new claim.
  InformerListers(client::RestClient& client, EventHandler onEvent);
  ~InformerListers() override;
  InformerListers(const InformerListers&) = delete;
  InformerListers& operator=(const InformerListers&) = delete;

  // Discovers the PodDisruptionBudget version (policy/v1, else policy/v1beta1; none: no PDB
  // informer) and the CSIStorageCapacity one (storage.k8s.io/v1, else v1beta1, else v1alpha1;
  // none: no capacity is known, as for a driver that reports none) and starts every informer.
  void start();
  void stop();
  // Waits until every started informer has synced; false on timeout, or at once when the
  // apiserver forbids a required kind (fatalError() says which and what to grant).
  bool waitForSync(std::chrono::milliseconds timeout);
  [[nodiscard]] std::string fatalError() const;
  [[nodiscard]] bool hasSynced() const;

  [[nodiscard]] ObjectList<api::Service> services(std::string_view ns) const override;
  [[nodiscard]] ObjectList<api::ReplicaSet> replicaSets(std::string_view ns) const override;
  [[nodiscard]] ObjectList<api::StatefulSet> statefulSets(std::string_view ns) const override;
  [[nodiscard]] ObjectList<api::ReplicationController> replicationControllers(
      std::string_view ns) const override;
  [[nodiscard]] ObjectList<api::Namespace> namespaces() const override;
  [[nodiscard]] std::shared_ptr<const api::Namespace> getNamespace(
      std::string_view name) const override;
  [[nodiscard]] ObjectList<api::PodDisruptionBudget> podDisruptionBudgets(
      std::string_view ns) const override;
  [[nodiscard]] std::shared_ptr<const api::PersistentVolumeClaim> getPersistentVolumeClaim(
      std::string_view ns, std::string_view name) const override;
  [[nodiscard]] std::shared_ptr<const api::PersistentVolume> getPersistentVolume(
      std::string_view name) const override;
  [[nodiscard]] ObjectList<api::PersistentVolume> persistentVolumes() const override;
  [[nodiscard]] std::shared_ptr<const api::StorageClass> getStorageClass(
      std::string_view name) const override;
  [[nodiscard]] std::shared_ptr<const api::CSINode> getCSINode(
      std::string_view name) const override;
  [[nodiscard]] std::shared_ptr<const api::CSIDriver> getCSIDriver(
      std::string_view name) const override;
  [[nodiscard]] ObjectList<api::CSIStorageCapacity> csiStorageCapacities() const override;

 private:
  template <typename T>
  void watchEvents(informer::Informer<T>& inf, EventResource resource);

  client::RestClient& client_;
  EventHandler onEvent_;
  informer::Informer<api::Service> services_;
  informer::Informer<api::ReplicaSet> replicaSets_;
  informer::Informer<api::StatefulSet> statefulSets_;
  informer::Informer<api::ReplicationController> rcs_;
  informer::Informer<api::Namespace> namespaces_;
  informer::Informer<api::PersistentVolumeClaim> pvcs_;
  informer::Informer<api::PersistentVolume> pvs_;
  informer::Informer<api::StorageClass> storageClasses_;
  informer::Informer<api::CSINode> csiNodes_;
  informer::Informer<api::CSIDriver> csiDrivers_;
  std::unique_ptr<informer::Informer<api::PodDisruptionBudget>> pdbs_;  // set by start()
  // Set by start() where the apiserver serves the kind (storage.k8s.io/v1 from 1.24, v1beta1
  // 1.21-1.27).
  std::unique_ptr<informer::Informer<api::CSIStorageCapacity>> capacities_;
};

}  // namespace ksched::scheduler
