// Node declared features (KEP 5328): the features a kubelet lists in node.status.declaredFeatures
// and the ones a pod needs, as upstream's registry infers them from the pod's spec
// (k8s.io/component-helpers/nodedeclaredfeatures, AllFeatures of its master branch after
// 1.37.0-beta.0). The NodeDeclaredFeatures plugin filters with them, NodeInfo keeps each node's
// set, explain names what a node lacks.
//
// A FeatureSet is a bit set over the registry (bit i = the i-th feature in name order), so the
// Filter's "does the node declare everything the pod needs" is one AND. Names ksched does not
// know are dropped when a node's list is read (upstream TryMap): a pod can never need them.
// None of the registered features has a maximum version yet, so which Kubernetes version ksched
// stands for changes nothing here.
//
// Everything here is pure and thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>

namespace ksched::plugins::helper {

struct DeclaredFeature {
  std::string_view name;   // as in node.status.declaredFeatures
  std::string_view since;  // the release whose registry added it ("1.35")
  // Whether the pod cannot run on a node that does not declare the feature (upstream
  // InferForScheduling); nullptr for features that only matter to pod updates or to other
  // components (the kubelet's admission, the apiserver).
  bool (*neededBy)(const api::PodSpec& spec) = nullptr;
  // What in a pod makes it need the feature, for people: "the pod has <neededWhen>" ("" when
  // neededBy is nullptr).
  std::string_view neededWhen;
};

// The registry, in name order.
[[nodiscard]] std::span<const DeclaredFeature> declaredFeatureRegistry() noexcept;

class FeatureSet {
 public:
  constexpr FeatureSet() = default;

  [[nodiscard]] bool empty() const noexcept { return bits_ == 0; }
  [[nodiscard]] bool contains(size_t feature) const noexcept { return (bits_ >> feature) & 1u; }
  // Every feature of this set is in `other` (upstream FeatureSet.IsSubset).
  [[nodiscard]] bool isSubsetOf(FeatureSet other) const noexcept {
    return (bits_ & ~other.bits_) == 0;
  }
  // The features of this set that `other` lacks.
  [[nodiscard]] FeatureSet minus(FeatureSet other) const noexcept {
    return FeatureSet(bits_ & ~other.bits_);
  }
  void add(size_t feature) noexcept { bits_ |= uint32_t{1} << feature; }
  // The features' names, in name order.
  [[nodiscard]] std::vector<std::string_view> names() const;

  friend bool operator==(FeatureSet, FeatureSet) = default;

 private:
  explicit constexpr FeatureSet(uint32_t bits) : bits_(bits) {}

  uint32_t bits_ = 0;
};

// The features the pod needs its node to declare (upstream Framework.InferForPodScheduling on
// the pod's spec). O(containers + volume mounts).
[[nodiscard]] FeatureSet requiredFeatures(const api::Pod& pod);
// The node's status.declaredFeatures as a set; names not in the registry are ignored.
[[nodiscard]] FeatureSet declaredFeatures(const api::Node& node);

}  // namespace ksched::plugins::helper
