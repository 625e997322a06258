// A cluster as simulate reads it: from files (kubectl get ... -o yaml) or from a live apiserver
// (LIST only). Plain values, copyable, so a what-if run works on its own copy.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/policy.h>
#include <ksched/api/storage.h>
#include <ksched/api/workloads.h>
#include <ksched/node_info.h>
#include <ksched/object_watch.h>

namespace ksched::sim {

// An object that could not be used, and why. Listed in simulate's output; never fatal.
struct Skipped {
  std::string source;   // "nodes.yaml: document 3", "nodes.yaml: items[12]", "LIST /api/v1/pods"
  std::string object;   // "Pod default/web-1"; "" when the object has no usable kind or name
  std::string field;    // "spec.containers[0].resources.requests.cpu"; "" for the whole object
  std::string message;  // what is wrong: "quantities must match the regular expression ..."
};

struct Cluster {
  std::vector<NodePtr> nodes;
  // Every pod: bound (spec.nodeName set) and pending, in the order read.
  std::vector<PodPtr> pods;

  // What plugins list (ClusterListers).
  std::vector<api::Namespace> namespaces;
  std::vector<api::Service> services;
  std::vector<api::ReplicaSet> replicaSets;
  std::vector<api::StatefulSet> statefulSets;
  std::vector<api::ReplicationController> replicationControllers;
  std::vector<api::PodDisruptionBudget> podDisruptionBudgets;
  std::vector<api::PersistentVolumeClaim> persistentVolumeClaims;
  std::vector<api::PersistentVolume> persistentVolumes;
  std::vector<api::StorageClass> storageClasses;
  std::vector<api::CSINode> csiNodes;

  // Objects of every other kind (custom resources such as scheduling.x-k8s.io PodGroups, which
  // plugins watch through Handle::watchObjects), by "<apiVersion>/<kind>", e.g.
  // "scheduling.x-k8s.io/v1alpha1/PodGroup". Kinds no plugin reads stay here unused.
  std::map<std::string, std::vector<UnstructuredPtr>> others;

  // Objects read but not usable.
  std::vector<Skipped> skipped;
};

}  // namespace ksched::sim
