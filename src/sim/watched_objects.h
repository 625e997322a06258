// The objects plugins watch (Handle::watchObjects) in a simulated cluster: the stores the
// watches read, and what the cluster does when a plugin writes one of them (ClusterApi get and
// patch) or when a controller would create one:
//   - a JSON merge patch of an object (its status too, ".../status") applies to the stored
//     object, bumps its resourceVersion, honours a metadata.resourceVersion precondition (409
//     Conflict otherwise) and reaches the watch's handlers as an update, as a real watch would;
//   - the ResourceClaims of a pod's claim templates are generated as kube-controller-manager's
//     resourceclaim controller generates them (named <pod>-<claim>-<suffix>, owned by the pod,
//     the pod's status.resourceClaimStatuses filled in), so pods with templates can be placed.
// Not thread-safe by itself: the simulation runs one thread; callers hold its lock.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include <ksched/api/pod.h>
#include <ksched/cluster_api.h>
#include <ksched/object_watch.h>

namespace ksched::sim {

struct PathParts;  // a collection or object path, taken apart (watched_objects.cc)

class WatchedObjects {
 public:
  // Registers a watch of `paths` (the watch's path and its alternatives) over `objects`;
  // returns its store. Events go through `deliver` (the simulation's feed, run after the
  // current step).
  std::shared_ptr<const ObjectStore> watch(std::vector<std::string> paths,
                                           std::vector<UnstructuredPtr> objects,
                                           ObjectEventHandlers handlers);

  // Adds to every registered watch its objects' onAdd (the initial LIST), in order.
  void replayAdds();

  // ClusterApi::get / patch on a watched object's path.
  ApiResult get(const std::string& path, nlohmann::json* out) const;
  ApiResult patch(const std::string& path, const nlohmann::json& patch, nlohmann::json* out,
                  const std::function<void(std::function<void()>)>& deliver);

  // ClusterApi::create: POST to a watched collection. metadata.generateName gets a suffix
  // ("00001", counting), the object a uid and resourceVersion; the watches see it added. 409
  // when the name is taken.
  ApiResult create(const std::string& path, const nlohmann::json& object, nlohmann::json* out,
                   const std::function<void(std::function<void()>)>& deliver);
  // ClusterApi::remove: an object with finalizers gets its deletionTimestamp (an update);
  // without, it is gone (the watches see it deleted). A uid precondition that does not match:
  // 409.
  ApiResult remove(const std::string& path, const nlohmann::json& preconditions,
                   const std::function<void(std::function<void()>)>& deliver);

  // The claims the resourceclaim controller would create for `pod`'s template claims that its
  // status does not name yet: each is added to the watches of ResourceClaims (their onAdd
  // called at once) and the pod's status.resourceClaimStatuses gets its entry. A template that
  // does not exist is left alone (the pod waits, as on a cluster). Returns whether the pod
  // changed.
  // `others` are the cluster's objects of kinds the scheduler has no type for (where the
  // templates are).
  bool generateClaims(api::Pod& pod,
                      const std::map<std::string, std::vector<UnstructuredPtr>>& others);

  // The resourceclaim controller's part once `pod` is gone (a preemption victim): the pod leaves
  // its claims' reservedFor; a claim nobody holds any longer is deallocated, and deleted when
  // the pod owned it (a template's, or its extended resources').
  void releaseClaimsOf(const api::Pod& pod,
                       const std::function<void(std::function<void()>)>& deliver);

  // The devices allocated to `pod`'s claims, "<claim>: <driver>/<pool>/<device>" each, in the
  // order of its spec.resourceClaims and of the allocation's results; then those of the claim
  // for its extended resources (status.extendedResourceClaimStatus), named by the resource. A
  // template claim the pod's status does not name may be its PodGroup's (an entry of the
  // PodGroup's spec.resourceClaims equal to it, named in the PodGroup's status).
  [[nodiscard]] std::vector<std::string> devicesOf(const api::Pod& pod) const;

  // Writes the objects generated or changed so far into `others` ("<apiVersion>/<kind>" ->
  // objects), replacing the versions there.
  void writeBack(std::map<std::string, std::vector<UnstructuredPtr>>& others) const;

 private:
  struct Watch;
  // The claim generated for the template claim `pc` of `pod`'s PodGroup, if the PodGroup is
  // watched and has one for an entry equal to `pc`.
  [[nodiscard]] std::optional<std::string> groupClaimName(const api::Pod& pod,
                                                          const api::PodResourceClaim& pc) const;
  // `old` becomes `updated` in the watches of `p`'s collection, whose handlers see the update.
  void replace(const PathParts& p, const UnstructuredPtr& old, const UnstructuredPtr& updated,
               const std::function<void(std::function<void()>)>& deliver);
  // `old` leaves the watches of `p`'s collection, whose handlers see it deleted.
  void erase(const PathParts& p, const UnstructuredPtr& old,
             const std::function<void(std::function<void()>)>& deliver);
  std::vector<std::shared_ptr<Watch>> watches_;
  std::vector<UnstructuredPtr> changed_;  // generated or written, newest last
  std::vector<UnstructuredPtr> removed_;  // deleted
  int64_t resourceVersion_ = 1000000;
  int64_t generated_ = 0;
};

}  // namespace ksched::sim
