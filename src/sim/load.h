// Reading a cluster for simulate: Kubernetes objects from YAML or JSON text (one object, a List
// such as `kubectl get ... -o yaml` prints, or several YAML documents), or LISTed from a live
// apiserver. Nothing here aborts on bad input: an object that cannot be used is recorded in
// Cluster::skipped with its source, kind/namespace/name and field path, and reading goes on.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "sim/cluster.h"

namespace ksched::client {
class RestClient;
}

namespace ksched::sim {

// How the objects read are taken.
enum class LoadAs {
  // The cluster as it is: nodes, pods (bound or pending), the kinds plugins list, custom
  // resources. Deployments, Jobs and other controllers that own pods are not expanded (their
  // pods are in the dump); ReplicaSets, StatefulSets and ReplicationControllers are kept for the
  // listers.
  kCluster,
  // Work to schedule: pods (spec.nodeName cleared: they are to be placed), and Deployments,
  // ReplicaSets, StatefulSets, Jobs and ReplicationControllers expanded into the pods their
  // controllers would create (replicas / parallelism copies of spec.template, named as the
  // controller names them; the controller objects that select them are added for the listers
  // too). Nodes and other kinds are taken as for kCluster. Names and uids are deterministic
  // (sim/expand.h): Deployment "web" gives ReplicaSet "web-sim" and pods "web-sim-0"...;
  // StatefulSets, ReplicaSets, ReplicationControllers and Jobs "<name>-0"...
  // A missing uid is "sim-<namespace>-<name>" for a pod in either mode.
  kWork,
};

// Reads every object in `text` into `into`. `source` names the text in Skipped entries (a file
// name, "-" for stdin). A document that is not YAML or JSON at all is one Skipped entry.
void loadText(std::string_view text, const std::string& source, LoadAs as, Cluster& into);

// Reads the file `path` ("-": stdin). A file that cannot be read throws std::runtime_error
// ("<path>: <reason>"); its content is read with loadText.
void loadFile(const std::string& path, LoadAs as, Cluster& into);

// LISTs (paged) nodes, pods, namespaces, services, replicasets, statefulsets,
// replicationcontrollers, poddisruptionbudgets (policy/v1, falling back to v1beta1),
// persistentvolumeclaims, persistentvolumes, storageclasses, csinodes, csidrivers and
// csistoragecapacities (storage.k8s.io/v1, else v1beta1, else v1alpha1), the Workload API's
// podgroups, compositepodgroups and workloads (scheduling.k8s.io: each in the newest version
// served, of v1beta1, v1alpha3, v1alpha2; none where it is not served), plus each collection
// in `customPaths` (e.g. "/apis/scheduling.x-k8s.io/v1alpha1/podgroups"; a 404 there is not an
// error: the kind is not served). Objects that do not decode are Skipped. Throws
// std::runtime_error when the apiserver cannot be reached or refuses a core LIST.
void loadFromApiserver(client::RestClient& client, const std::vector<std::string>& customPaths,
                       Cluster& into);

// After everything is read: pods that have succeeded or failed are dropped (they hold no
// resources); duplicate objects (same kind, namespace and name: the last one read wins, one
// Skipped entry per duplicated object) and pods bound to a node that is not in the cluster
// (field "spec.nodeName") go to skipped, with source "" (they span files). Pods are kept in the
// order read.
void checkCluster(Cluster& cluster);

}  // namespace ksched::sim
