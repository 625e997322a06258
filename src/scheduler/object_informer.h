// ObjectInformer: the informer behind Handle::watchObjects(), for objects the scheduler has no
// type for (custom resources). Objects keep their JSON; only the metadata is decoded.
#pragma once

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <ksched/object_watch.h>

#include "client/rest_client.h"
#include "informer/informer.h"

namespace ksched {

// For Informer<UnstructuredObject> (api::decode): an object without metadata is malformed.
inline void from_json(const nlohmann::json& j, UnstructuredObject& o) {
  if (!j.is_object() || !j.contains("metadata")) throw api::DecodeError("metadata: missing");
  o.metadata = api::decode<api::ObjectMeta>(j.at("metadata"));
  o.object = j;
}

}  // namespace ksched

namespace ksched::scheduler {

class ObjectInformer final : public ObjectStore {
 public:
  ObjectInformer(client::RestClient& client, const ObjectWatch& what)
      : what_(what),
        // A watch that may find its API not served (DRA's kinds) may also find it forbidden:
        // the plugin then sees no such objects, and pods that need them stay pending.
        informer_(client, {.kind = what.kind,
                           .path = what.path,
                           .labelSelector = what.labelSelector,
                           .withoutIt = what.optional ? "the plugins that read " + what.kind +
                                                            "s see none, so pods that need them "
                                                            "stay pending"
                                                      : ""}) {}

  [[nodiscard]] const ObjectWatch& what() const { return what_; }
  // Before start().
  void addHandlers(ObjectEventHandlers h) {
    informer_.addHandlers({std::move(h.onAdd), std::move(h.onUpdate), std::move(h.onDelete)});
  }
  void start() { informer_.start(); }
  void stop() { informer_.stop(); }
  bool waitForSync(std::chrono::milliseconds timeout) { return informer_.waitForSync(timeout); }

  [[nodiscard]] UnstructuredPtr get(std::string_view ns, std::string_view name) const override {
    return informer_.get(ns.empty() ? std::string(name)
                                    : std::string(ns) + "/" + std::string(name));
  }
  [[nodiscard]] std::vector<UnstructuredPtr> list() const override { return informer_.list(); }
  [[nodiscard]] bool hasSynced() const override { return informer_.hasSynced(); }
  [[nodiscard]] std::string fatalError() const { return informer_.fatalError(); }

 private:
  const ObjectWatch what_;
  informer::Informer<UnstructuredObject> informer_;
};

}  // namespace ksched::scheduler
