// Storage objects for the volume plugins' unit tests: StorageClasses, PVs and PVCs from short
// specs, pods that mount claims, nodes with hostname and zone labels.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/quantity.h>
#include <ksched/api/storage.h>
#include <ksched/node_info.h>

#include "tests/support/plugin_test_util.h"

namespace ksched::plugins::testutil::volumes {

constexpr std::string_view kWaitClass = "wait";
constexpr std::string_view kImmediateClass = "immediate";
constexpr std::string_view kProvisionClass = "provision";
constexpr std::string_view kTopologyClass = "provision-zone-a";

inline api::StorageClass storageClass(std::string_view name, std::string_view mode,
                                      std::string_view provisioner,
                                      std::vector<api::TopologySelectorTerm> topologies = {}) {
  api::StorageClass sc;
  sc.metadata.name = name;
  sc.volumeBindingMode = mode;
  sc.provisioner = provisioner;
  sc.allowedTopologies = std::move(topologies);
  return sc;
}

struct PVSpec {
  std::string name;
  std::string size = "10Gi";
  std::string cls{kWaitClass};
  std::vector<std::string> modes = {"ReadWriteOnce"};
  std::string hostname;  // node affinity kubernetes.io/hostname In [hostname] when set
  std::string phase{api::kVolumeAvailable};
  std::string claimRef;  // "ns/name" when pre-bound or claimed
  std::string volumeMode{api::kVolumeModeFilesystem};
  api::Labels labels;
  std::string vac;  // volumeAttributesClassName
};

inline api::PersistentVolume makePV(const PVSpec& s) {
  api::PersistentVolume pv;
  pv.metadata.name = s.name;
  pv.metadata.resourceVersion = "1";
  pv.metadata.labels = s.labels;
  pv.spec.capacity[std::string(api::kResourceStorage)] = api::Quantity::parse(s.size);
  pv.spec.storageClassName = s.cls;
  pv.spec.accessModes = s.modes;
  pv.spec.volumeMode = s.volumeMode;
  pv.spec.volumeAttributesClassName = s.vac;
  pv.status.phase = s.phase;
  if (!s.hostname.empty()) {
    api::NodeSelectorTerm term;
    term.matchExpressions.push_back(
        {std::string(api::kLabelHostname), api::SelectorOperator::kIn, {s.hostname}});
    api::NodeSelector sel;
    sel.nodeSelectorTerms.push_back(term);
    pv.spec.nodeAffinity = api::VolumeNodeAffinity{sel};
  }
  if (!s.claimRef.empty()) {
    api::ObjectReference ref;
    ref.namespace_ = s.claimRef.substr(0, s.claimRef.find('/'));
    ref.name = s.claimRef.substr(s.claimRef.find('/') + 1);
    pv.spec.claimRef = ref;
  }
  return pv;
}

struct PVCSpec {
  std::string name;
  std::string size = "5Gi";
  std::string cls{kWaitClass};
  std::vector<std::string> modes = {"ReadWriteOnce"};
  std::string volumeName;  // bound (with bind-completed) when set
  std::string volumeMode{api::kVolumeModeFilesystem};
  std::optional<api::LabelSelector> selector;
  std::string selectedNode;
  bool deleting = false;
  std::string vac;  // volumeAttributesClassName
};

inline api::PersistentVolumeClaim makePVC(const PVCSpec& s) {
  api::PersistentVolumeClaim c;
  c.metadata.name = s.name;
  c.metadata.namespace_ = "default";
  c.metadata.uid = s.name + "-uid";
  c.metadata.resourceVersion = "1";
  c.spec.storageClassName = s.cls;
  c.spec.accessModes = s.modes;
  c.spec.volumeMode = s.volumeMode;
  c.spec.selector = s.selector;
  c.spec.volumeAttributesClassName = s.vac;
  c.spec.resources.requests[std::string(api::kResourceStorage)] = api::Quantity::parse(s.size);
  if (!s.volumeName.empty()) {
    c.spec.volumeName = s.volumeName;
    c.metadata.annotations[std::string(api::kAnnBindCompleted)] = "yes";
    c.status.phase = api::kVolumeBound;
  }
  if (!s.selectedNode.empty()) {
    c.metadata.annotations[std::string(api::kAnnSelectedNode)] = s.selectedNode;
  }
  if (s.deleting) c.metadata.deletionTimestamp = "2024-01-01T00:00:00Z";
  return c;
}

inline api::Pod podWithClaims(const std::vector<std::string>& claims) {
  api::Pod pod = PodWrapper("pod").obj();
  for (const std::string& c : claims) {
    api::Volume v;
    v.name = "vol-" + c;
    v.persistentVolumeClaim = api::PersistentVolumeClaimVolumeSource{c, false};
    pod.spec.volumes.push_back(std::move(v));
  }
  return pod;
}

inline std::shared_ptr<NodeInfo> nodeInfo(const std::string& name, const std::string& zone = "a") {
  api::Node n;
  n.metadata.name = name;
  n.metadata.labels[std::string(api::kLabelHostname)] = name;
  n.metadata.labels["topology.kubernetes.io/zone"] = zone;
  auto ni = std::make_shared<NodeInfo>();
  ni->setNode(std::make_shared<const api::Node>(std::move(n)));
  return ni;
}

}  // namespace ksched::plugins::testutil::volumes
