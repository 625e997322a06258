// Watching objects the scheduler has no type for (custom resources such as
// scheduling.x-k8s.io PodGroups): Handle::watchObjects() lists and watches a collection for a
// plugin, keeps a local copy and calls the plugin's handlers, like an informer of upstream's
// dynamic client.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/meta.h>

namespace ksched {

// One object as the apiserver served it: its metadata decoded, the rest as JSON.
struct UnstructuredObject {
  api::ObjectMeta metadata;
  nlohmann::json object;  // the whole object, metadata included
};
using UnstructuredPtr = std::shared_ptr<const UnstructuredObject>;

// Called on the watch's own thread, in event order, after the store is updated. After a re-LIST
// (start-up, an expired watch, an apiserver restart) the differences come as adds, updates and
// deletes, so no deletion is missed. Keep them quick; no apiserver calls.
struct ObjectEventHandlers {
  std::function<void(const UnstructuredPtr&)> onAdd;
  std::function<void(const UnstructuredPtr& oldObj, const UnstructuredPtr& newObj)> onUpdate;
  std::function<void(const UnstructuredPtr&)> onDelete;
};

// The local copy. Thread-safe.
class ObjectStore {
 public:
  virtual ~ObjectStore() = default;
  // nullptr when absent; `ns` is "" for cluster-scoped objects.
  [[nodiscard]] virtual UnstructuredPtr get(std::string_view ns, std::string_view name) const = 0;
  [[nodiscard]] virtual std::vector<UnstructuredPtr> list() const = 0;
  // True once the first LIST has been applied.
  [[nodiscard]] virtual bool hasSynced() const = 0;
};

// The store handed out where nothing is watched: empty, synced.
class EmptyObjectStore final : public ObjectStore {
 public:
  [[nodiscard]] UnstructuredPtr get(std::string_view, std::string_view) const override {
    return nullptr;
  }
  [[nodiscard]] std::vector<UnstructuredPtr> list() const override { return {}; }
  [[nodiscard]] bool hasSynced() const override { return true; }
};

// What to watch: `kind` names it in logs and thread names ("PodGroup"); `path` is the
// collection, e.g. "/apis/scheduling.x-k8s.io/v1alpha1/podgroups" (every namespace).
struct ObjectWatch {
  std::string kind;
  std::string path;
  std::string labelSelector;  // optional
  // The same collection in older API versions, newest first (e.g.
  // "/apis/resource.k8s.io/v1beta2/resourceclaims"): when the apiserver does not serve `path`'s
  // group version, the first one it serves is watched instead. Objects come as served; their
  // apiVersion says which.
  std::vector<std::string> alternatives;
  // The apiserver may serve none of them (an older cluster), or forbid them (RBAC): then
  // nothing is watched (the forbidden kind is logged once with the rule to grant, and asked
  // for again in the background), the store stays empty and synced, and the scheduler starts
  // anyway. Otherwise a collection that is not served keeps the scheduler from starting (a CRD
  // not installed), and a forbidden one ends the start at once.
  bool optional = false;
};

}  // namespace ksched
