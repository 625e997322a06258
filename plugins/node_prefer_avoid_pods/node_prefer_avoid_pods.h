// NodePreferAvoidPods (Score): scores 0 the nodes whose annotation
// scheduler.alpha.kubernetes.io/preferAvoidPods lists the pod's controller, 100 the others
// (v1.20 nodepreferavoidpods, kept for v1beta1 and Policy profiles).
//
// Only pods whose controller owner reference is a ReplicationController or a ReplicaSet are
// concerned; every node scores 100 for the others. The annotation is v1.AvoidPods as JSON:
//   {"preferAvoidPods": [{"podSignature": {"podController": {"kind": ..., "uid": ..., ...}},
//                         "evictionTime": ..., "reason": ..., "message": ...}]}
// An entry matches when its podController has the kind and uid of the pod's controller. The
// annotation is decoded as v1.20 did (Go encoding/json: unknown fields ignored, field names
// matched case-insensitively, null for any field allowed); an annotation that does not decode
// (bad JSON, a field of the wrong type, an evictionTime that is not RFC 3339) avoids nothing,
// logged at debug.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>
#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

inline constexpr std::string_view kPreferAvoidPodsAnnotationKey =
    "scheduler.alpha.kubernetes.io/preferAvoidPods";

class NodePreferAvoidPods final : public ScorePlugin {
 public:
  static constexpr std::string_view kName = names::kNodePreferAvoidPods;

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Stateless: thread-safe. Decodes the node's annotation on every call. Error when the
  // NodeInfo has no node.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;

  // The podControllers (kind, uid) the annotation value lists, in order; nullopt when it does
  // not decode. Entries without a podController are left out. "" lists none.
  [[nodiscard]] static std::optional<std::vector<api::OwnerReference>> avoidedControllers(
      std::string_view annotation);
};

// Takes no args (ignored).
PluginFactory nodePreferAvoidPodsFactory();

}  // namespace ksched::plugins
