// The loader's private half (load.h is the contract): what is wrong with an object, as a field
// path with indexes, and the controllers of LoadAs::kWork turned into the pods they would create.
//
// Names and uids are deterministic, so two runs over the same files give the same pods:
//   Deployment d   -> ReplicaSet "d-sim" (selector + pod-template-hash "sim"), pods "d-sim-<i>"
//   ReplicaSet r, ReplicationController r, Job j -> pods "r-<i>", "j-<i>"
//   StatefulSet s  -> pods "s-<i>", and the claims of its volumeClaimTemplates "<t>-s-<i>"
// A missing uid becomes "sim-<namespace>-<name>" for a pod and "sim-<Kind>-<namespace>-<name>"
// for any other kind.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "sim/cluster.h"

namespace ksched::sim {

// The most pods one controller is expanded into: more is a Skipped, not an out-of-memory.
inline constexpr int32_t kMaxPodsPerController = 100000;

// A problem at a field of an object. `field` is a path with indexes
// ("spec.template.spec.containers[0].resources.requests.cpu"), "" for the whole object.
class FieldError : public std::runtime_error {
 public:
  FieldError(std::string field, const std::string& message)
      : std::runtime_error(message), field_(std::move(field)) {}
  [[nodiscard]] const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// A DecodeError's text ("spec.containers.resources.requests.cpu: quantity \"1x\": ...", the
// api layer's path has no indexes) located in the object `root` that failed to decode:
// {"spec.containers[0].resources.requests.cpu", "quantity \"1x\": ..."}. Where an array holds
// several elements with that path, the one whose value the message quotes (or whose type it
// names) is taken, else the first. nlohmann's "[json.exception.type_error.302] " prefixes are
// dropped.
[[nodiscard]] std::pair<std::string, std::string> locateDecodeError(const nlohmann::json& root,
                                                                    std::string_view what);

// "sim-<namespace>-<name>" (Pod) or "sim-<Kind>-<namespace>-<name>"; no namespace part when
// `ns` is empty.
[[nodiscard]] std::string simUid(std::string_view kind, std::string_view ns, std::string_view name);

// An object of a controller kind read as work. `object` is the whole JSON (not modified); `ns`
// its namespace (defaulted) and `uid` (given or simUid). Pods go to `into.pods`, the
// controllers the listers need to into's lists. Throw FieldError (a template that does not
// decode, a count out of range).
struct Controller {
  const nlohmann::json& object;
  std::string name;
  std::string ns;
  std::string uid;
};
void expandDeployment(const Controller& c, Cluster& into);
void expandReplicaSet(const Controller& c, Cluster& into);
void expandStatefulSet(const Controller& c, Cluster& into);
void expandReplicationController(const Controller& c, Cluster& into);
void expandJob(const Controller& c, Cluster& into);

}  // namespace ksched::sim
