// Builders of pods and nodes for unit tests of the cache and of plugins (header only, not used
// by the scheduler itself).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/quantity.h>
#include <ksched/node_info.h>

namespace ksched::cache::testutil {

class PodBuilder {
 public:
  // uid defaults to "uid-<name>"; namespace "default".
  explicit PodBuilder(std::string name) {
    pod_.metadata.name = name;
    pod_.metadata.namespace_ = "default";
    pod_.metadata.uid = "uid-" + name;
  }
  PodBuilder& uid(std::string uid) {
    pod_.metadata.uid = std::move(uid);
    return *this;
  }
  PodBuilder& node(std::string nodeName) {
    pod_.spec.nodeName = std::move(nodeName);
    return *this;
  }
  PodBuilder& label(std::string key, std::string value) {
    pod_.metadata.labels[std::move(key)] = std::move(value);
    return *this;
  }
  // A container with these requests; an empty string leaves that request out.
  PodBuilder& container(const std::string& cpu = "", const std::string& memory = "") {
    api::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    if (!cpu.empty()) c.resources.requests["cpu"] = api::Quantity::parse(cpu);
    if (!memory.empty()) c.resources.requests["memory"] = api::Quantity::parse(memory);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& request(const std::string& resource, const std::string& amount) {
    if (pod_.spec.containers.empty()) container();
    pod_.spec.containers.back().resources.requests[resource] = api::Quantity::parse(amount);
    return *this;
  }
  // A host port on the last container (one is added when there is none).
  PodBuilder& hostPort(int32_t port, std::string protocol = "TCP", std::string ip = "") {
    if (pod_.spec.containers.empty()) container();
    api::ContainerPort p;
    p.containerPort = port;
    p.hostPort = port;
    p.protocol = std::move(protocol);
    p.hostIP = std::move(ip);
    pod_.spec.containers.back().ports.push_back(std::move(p));
    return *this;
  }
  PodBuilder& requiredAffinity(std::string topologyKey = "zone") {
    affinity().podAffinity.emplace().requiredDuringSchedulingIgnoredDuringExecution.push_back(
        term(std::move(topologyKey)));
    return *this;
  }
  PodBuilder& preferredAntiAffinity(std::string topologyKey = "zone") {
    affinity().podAntiAffinity.emplace().preferredDuringSchedulingIgnoredDuringExecution.push_back(
        {.weight = 1, .podAffinityTerm = term(std::move(topologyKey))});
    return *this;
  }
  PodBuilder& requiredAntiAffinity(std::string topologyKey = "zone") {
    affinity().podAntiAffinity.emplace().requiredDuringSchedulingIgnoredDuringExecution.push_back(
        term(std::move(topologyKey)));
    return *this;
  }
  // A persistentVolumeClaim volume.
  PodBuilder& pvc(std::string claimName) {
    api::Volume v;
    v.name = "v" + std::to_string(pod_.spec.volumes.size());
    v.persistentVolumeClaim.emplace().claimName = std::move(claimName);
    pod_.spec.volumes.push_back(std::move(v));
    return *this;
  }
  // A generic ephemeral volume (its claim is "<pod name>-<volumeName>").
  PodBuilder& ephemeral(std::string volumeName) {
    api::Volume v;
    v.name = std::move(volumeName);
    v.ephemeral = true;
    pod_.spec.volumes.push_back(std::move(v));
    return *this;
  }
  [[nodiscard]] api::Pod object() const { return pod_; }
  [[nodiscard]] PodPtr build() const { return std::make_shared<const api::Pod>(pod_); }
  [[nodiscard]] PodInfoPtr info() const { return std::make_shared<const PodInfo>(build(), features::Gates{}); }

 private:
  api::Affinity& affinity() {
    if (!pod_.spec.affinity) pod_.spec.affinity.emplace();
    return *pod_.spec.affinity;
  }
  static api::PodAffinityTerm term(std::string topologyKey) {
    api::PodAffinityTerm t;
    t.labelSelector.emplace();
    t.topologyKey = std::move(topologyKey);
    return t;
  }

  api::Pod pod_;
};

class NodeBuilder {
 public:
  explicit NodeBuilder(std::string name) { node_.metadata.name = std::move(name); }
  NodeBuilder& allocatable(const std::string& resource, const std::string& amount) {
    node_.status.allocatable[resource] = api::Quantity::parse(amount);
    return *this;
  }
  NodeBuilder& label(std::string key, std::string value) {
    node_.metadata.labels[std::move(key)] = std::move(value);
    return *this;
  }
  NodeBuilder& zone(std::string zone) {
    return label("topology.kubernetes.io/zone", std::move(zone));
  }
  NodeBuilder& image(std::vector<std::string> names, int64_t sizeBytes) {
    node_.status.images.push_back({.names = std::move(names), .sizeBytes = sizeBytes});
    return *this;
  }
  [[nodiscard]] api::Node object() const { return node_; }
  [[nodiscard]] NodePtr build() const { return std::make_shared<const api::Node>(node_); }

 private:
  api::Node node_;
};

}  // namespace ksched::cache::testutil
