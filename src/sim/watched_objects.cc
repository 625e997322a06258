#include "sim/watched_objects.h"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace ksched::sim {

// A collection or object path, taken apart.
struct PathParts {
  std::string group;   // "" for the core group
  std::string plural;  // "resourceclaims"
  std::string ns;      // "" for cluster-scoped objects or every namespace
  std::string name;    // "" for a collection
  bool status = false;
};

namespace {

std::optional<PathParts> parse(const std::string& path) {
  std::vector<std::string> seg;
  size_t start = 1;
  while (start <= path.size()) {
    const size_t slash = path.find('/', start);
    const size_t end = slash == std::string::npos ? path.size() : slash;
    seg.push_back(path.substr(start, end - start));
    start = end + 1;
  }
  PathParts p;
  size_t i = 0;
  if (seg.size() >= 2 && seg[0] == "api") {
    i = 2;
  } else if (seg.size() >= 3 && seg[0] == "apis") {
    p.group = seg[1];
    i = 3;
  } else {
    return std::nullopt;
  }
  if (i + 1 < seg.size() && seg[i] == "namespaces") {
    p.ns = seg[i + 1];
    i += 2;
  }
  if (i >= seg.size()) return std::nullopt;
  p.plural = seg[i++];
  if (i < seg.size()) p.name = seg[i++];
  if (i < seg.size()) {
    if (seg[i] != "status") return std::nullopt;
    p.status = true;
    ++i;
  }
  if (i != seg.size()) return std::nullopt;
  return p;
}

UnstructuredPtr makeObject(nlohmann::json j) {
  auto o = std::make_shared<UnstructuredObject>();
  o->metadata = j.at("metadata").get<api::ObjectMeta>();
  o->object = std::move(j);
  return o;
}

}  // namespace

struct WatchedObjects::Watch final : ObjectStore {
  std::vector<PathParts> paths;
  ObjectEventHandlers handlers;
  std::vector<UnstructuredPtr> objects;  // in the order they came

  [[nodiscard]] UnstructuredPtr get(std::string_view ns, std::string_view name) const override {
    for (const auto& o : objects) {
      if (o->metadata.namespace_ == ns && o->metadata.name == name) return o;
    }
    return nullptr;
  }
  [[nodiscard]] std::vector<UnstructuredPtr> list() const override { return objects; }
  [[nodiscard]] bool hasSynced() const override { return true; }

  [[nodiscard]] bool covers(const PathParts& p) const {
    for (const auto& w : paths) {
      if (w.group == p.group && w.plural == p.plural && (w.ns.empty() || w.ns == p.ns)) {
        return true;
      }
    }
    return false;
  }
};

std::shared_ptr<const ObjectStore> WatchedObjects::watch(std::vector<std::string> paths,
                                                         std::vector<UnstructuredPtr> objects,
                                                         ObjectEventHandlers handlers) {
  auto w = std::make_shared<Watch>();
  for (const auto& p : paths) {
    if (auto parts = parse(p)) w->paths.push_back(std::move(*parts));
  }
  w->objects = std::move(objects);
  w->handlers = std::move(handlers);
  watches_.push_back(w);
  return w;
}

void WatchedObjects::replayAdds() {
  for (const auto& w : watches_) {
    if (!w->handlers.onAdd) continue;
    for (const auto& o : w->objects) w->handlers.onAdd(o);
  }
}

void WatchedObjects::replace(const PathParts& p, const UnstructuredPtr& old,
                             const UnstructuredPtr& updated,
                             const std::function<void(std::function<void()>)>& deliver) {
  changed_.push_back(updated);
  for (const auto& w : watches_) {
    if (!w->covers(p)) continue;
    for (auto& o : w->objects) {
      if (o == old) o = updated;
    }
    if (w->handlers.onUpdate) {
      deliver([h = w->handlers.onUpdate, old, updated] { h(old, updated); });
    }
  }
}

ApiResult WatchedObjects::get(const std::string& path, nlohmann::json* out) const {
  const auto p = parse(path);
  if (p && !p->name.empty()) {
    for (const auto& w : watches_) {
      if (!w->covers(*p)) continue;
      if (auto o = w->get(p->ns, p->name)) {
        if (out != nullptr) *out = o->object;
        return std::nullopt;
      }
    }
  }
  return ApiError{404, "NotFound", "GET " + path + ": not in the simulated cluster"};
}

ApiResult WatchedObjects::patch(const std::string& path, const nlohmann::json& patch,
                                nlohmann::json* out,
                                const std::function<void(std::function<void()>)>& deliver) {
  const auto p = parse(path);
  if (!p || p->name.empty()) return ApiError{404, "NotFound", "PATCH " + path + ": no such object"};
  bool watched = false;
  UnstructuredPtr old;
  for (const auto& w : watches_) {
    if (!w->covers(*p)) continue;
    watched = true;
    if (!old) old = w->get(p->ns, p->name);
  }
  if (!watched) {
    // Nothing reads it back: accepted, as before.
    if (out != nullptr) *out = nlohmann::json::object();
    return std::nullopt;
  }
  if (!old) {
    return ApiError{404, "NotFound", p->plural + " \"" + p->name + "\" not found"};
  }
  if (!patch.is_object()) return ApiError{415, "UnsupportedMediaType", "only merge patches"};
  nlohmann::json next = old->object;
  if (const auto m = patch.find("metadata"); m != patch.end() && m->is_object()) {
    if (const auto rv = m->find("resourceVersion");
        rv != m->end() && rv->is_string() &&
        rv->get<std::string>() != old->metadata.resourceVersion) {
      return ApiError{409, "Conflict",
                      "Operation cannot be fulfilled on " + p->plural + " \"" + p->name +
                          "\": the object has been modified; please apply your changes to the "
                          "latest version and try again"};
    }
  }
  nlohmann::json applied = patch;
  // A write to /status changes only the status; any other write leaves the status alone.
  if (p->status) {
    applied = nlohmann::json::object();
    if (patch.contains("status")) applied["status"] = patch["status"];
  } else {
    applied.erase("status");
  }
  next.merge_patch(applied);
  next["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
  UnstructuredPtr updated;
  try {
    updated = makeObject(next);
  } catch (const std::exception& e) {
    return ApiError{422, "Invalid", e.what()};
  }
  replace(*p, old, updated, deliver);
  if (out != nullptr) *out = updated->object;
  return std::nullopt;
}

ApiResult WatchedObjects::create(const std::string& path, const nlohmann::json& object,
                                 nlohmann::json* out,
                                 const std::function<void(std::function<void()>)>& deliver) {
  const auto p = parse(path);
  if (!p || !p->name.empty() || p->status || !object.is_object()) {
    return ApiError{405, "MethodNotAllowed", "POST " + path + ": not a collection"};
  }
  nlohmann::json obj = object;
  nlohmann::json& meta = obj["metadata"];
  if (!meta.is_object()) meta = nlohmann::json::object();
  std::string name = meta.value("name", "");
  if (name.empty()) {
    const std::string base = meta.value("generateName", "");
    if (base.empty()) return ApiError{422, "Invalid", "metadata.name: Required value"};
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%05lld", static_cast<long long>(++generated_ % 100000));
    name = base + suffix;
  }
  meta["name"] = name;
  meta.erase("generateName");
  if (!p->ns.empty()) meta["namespace"] = p->ns;
  meta["uid"] = "sim-" + p->plural + "-" + std::to_string(++generated_);
  meta["resourceVersion"] = std::to_string(++resourceVersion_);
  bool watched = false;
  for (const auto& w : watches_) {
    if (!w->covers(*p)) continue;
    watched = true;
    if (w->get(p->ns, name)) {
      return ApiError{409, "AlreadyExists", p->plural + " \"" + name + "\" already exists"};
    }
  }
  UnstructuredPtr created;
  try {
    created = makeObject(std::move(obj));
  } catch (const std::exception& e) {
    return ApiError{422, "Invalid", e.what()};
  }
  if (watched) {
    changed_.push_back(created);
    for (const auto& w : watches_) {
      if (!w->covers(*p)) continue;
      w->objects.push_back(created);
      if (w->handlers.onAdd) deliver([h = w->handlers.onAdd, created] { h(created); });
    }
  }
  if (out != nullptr) *out = created->object;
  return std::nullopt;
}

ApiResult WatchedObjects::remove(const std::string& path, const nlohmann::json& preconditions,
                                 const std::function<void(std::function<void()>)>& deliver) {
  const auto p = parse(path);
  if (!p || p->name.empty() || p->status) {
    return ApiError{405, "MethodNotAllowed", "DELETE " + path + ": not an object"};
  }
  UnstructuredPtr old;
  for (const auto& w : watches_) {
    if (w->covers(*p) && !old) old = w->get(p->ns, p->name);
  }
  if (!old) return ApiError{404, "NotFound", p->plural + " \"" + p->name + "\" not found"};
  if (preconditions.is_object() && preconditions.contains("uid") &&
      preconditions["uid"] != old->metadata.uid) {
    return ApiError{409, "Conflict",
                    "Precondition failed: UID in precondition does not match the object"};
  }
  const nlohmann::json& meta = old->object["metadata"];
  if (meta.contains("finalizers") && meta["finalizers"].is_array() && !meta["finalizers"].empty()) {
    nlohmann::json next = old->object;
    next["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
    next["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
    replace(*p, old, makeObject(std::move(next)), deliver);
    return std::nullopt;
  }
  erase(*p, old, deliver);
  return std::nullopt;
}

void WatchedObjects::erase(const PathParts& p, const UnstructuredPtr& old,
                           const std::function<void(std::function<void()>)>& deliver) {
  std::erase_if(changed_, [&](const UnstructuredPtr& o) {
    return o->metadata.namespace_ == p.ns && o->metadata.name == p.name &&
           o->object.value("kind", "") == old->object.value("kind", "");
  });
  removed_.push_back(old);
  for (const auto& w : watches_) {
    if (!w->covers(p)) continue;
    std::erase(w->objects, old);
    if (w->handlers.onDelete) deliver([h = w->handlers.onDelete, old] { h(old); });
  }
}

void WatchedObjects::releaseClaimsOf(const api::Pod& pod,
                                     const std::function<void(std::function<void()>)>& deliver) {
  std::vector<std::string> names;
  for (const auto& pc : pod.spec.resourceClaims) {
    if (pc.resourceClaimName) names.push_back(*pc.resourceClaimName);
    for (const auto& s : pod.status.resourceClaimStatuses) {
      if (s.name == pc.name && s.resourceClaimName) names.push_back(*s.resourceClaimName);
    }
  }
  if (const auto& ext = pod.status.extendedResourceClaimStatus) {
    names.push_back(ext->resourceClaimName);
  }
  for (const auto& name : names) {
    const PathParts p{"resource.k8s.io", "resourceclaims", pod.metadata.namespace_, name};
    UnstructuredPtr old;
    for (const auto& w : watches_) {
      if (w->covers(p) && !old) old = w->get(p.ns, p.name);
    }
    if (!old || !old->object.contains("status") || !old->object["status"].is_object()) continue;
    nlohmann::json next = old->object;
    nlohmann::json& status = next["status"];
    nlohmann::json kept = nlohmann::json::array();
    bool held = false;
    for (const auto& r : status.value("reservedFor", nlohmann::json::array())) {
      if (r.is_object() && r.value("uid", "") == pod.metadata.uid) {
        held = true;
      } else {
        kept.push_back(r);
      }
    }
    if (!held) continue;
    bool owned = false;
    for (const auto& o : next["metadata"].value("ownerReferences", nlohmann::json::array())) {
      owned = owned || (o.is_object() && o.value("uid", "") == pod.metadata.uid);
    }
    next["metadata"]["resourceVersion"] = std::to_string(++resourceVersion_);
    if (!kept.empty()) {
      status["reservedFor"] = std::move(kept);
    } else {
      // Nobody holds it: deallocated, and deleted when it was the pod's own.
      status.erase("reservedFor");
      status.erase("allocation");
      status.erase("devices");
      if (owned) next["metadata"].erase("finalizers");
    }
    UnstructuredPtr updated = makeObject(std::move(next));
    replace(p, old, updated, deliver);
    if (kept.empty() && owned) erase(p, updated, deliver);
  }
}

bool WatchedObjects::generateClaims(
    api::Pod& pod, const std::map<std::string, std::vector<UnstructuredPtr>>& others) {
  bool changed = false;
  for (const auto& claim : pod.spec.resourceClaims) {
    if (!claim.resourceClaimTemplateName) continue;
    bool named = false;
    for (const auto& s : pod.status.resourceClaimStatuses) named = named || s.name == claim.name;
    if (named) continue;
    UnstructuredPtr tmpl;
    for (const auto& [key, objects] : others) {
      if (!key.starts_with("resource.k8s.io/") || !key.ends_with("/ResourceClaimTemplate")) {
        continue;
      }
      for (const auto& o : objects) {
        if (o->metadata.namespace_ == pod.metadata.namespace_ &&
            o->metadata.name == *claim.resourceClaimTemplateName) {
          tmpl = o;
        }
      }
    }
    if (!tmpl) continue;
    const nlohmann::json& t = tmpl->object;
    const std::string apiVersion = t.value("apiVersion", "resource.k8s.io/v1");
    char suffix[16];
    std::snprintf(suffix, sizeof suffix, "%05lld", static_cast<long long>(++generated_ % 100000));
    const std::string name = pod.metadata.name + "-" + claim.name + "-" + suffix;
    nlohmann::json c = {
        {"apiVersion", apiVersion},
        {"kind", "ResourceClaim"},
        {"metadata",
         {{"name", name},
          {"namespace", pod.metadata.namespace_},
          {"uid", "sim-claim-" + std::to_string(generated_)},
          {"resourceVersion", std::to_string(++resourceVersion_)},
          {"annotations", {{"resource.kubernetes.io/pod-claim-name", claim.name}}},
          {"ownerReferences", nlohmann::json::array({{{"apiVersion", "v1"},
                                                      {"kind", "Pod"},
                                                      {"name", pod.metadata.name},
                                                      {"uid", pod.metadata.uid},
                                                      {"controller", true},
                                                      {"blockOwnerDeletion", true}}})}}},
        {"spec", nlohmann::json::object()}};
    if (const auto s = t.find("spec"); s != t.end() && s->is_object()) {
      if (const auto m = s->find("metadata"); m != s->end() && m->is_object()) {
        for (const char* k : {"labels", "annotations"}) {
          if (m->contains(k) && (*m)[k].is_object()) c["metadata"][k].update((*m)[k]);
        }
      }
      if (const auto inner = s->find("spec"); inner != s->end()) c["spec"] = *inner;
    }
    UnstructuredPtr obj;
    try {
      obj = makeObject(std::move(c));
    } catch (const std::exception& e) {
      spdlog::warn("generating a ResourceClaim for pod {}/{}: {}", pod.metadata.namespace_,
                   pod.metadata.name, e.what());
      continue;
    }
    changed_.push_back(obj);
    const PathParts claims{"resource.k8s.io", "resourceclaims", pod.metadata.namespace_, name};
    for (const auto& w : watches_) {
      if (!w->covers(claims)) continue;
      w->objects.push_back(obj);
      if (w->handlers.onAdd) w->handlers.onAdd(obj);
    }
    pod.status.resourceClaimStatuses.push_back({claim.name, name});
    changed = true;
  }
  return changed;
}

std::optional<std::string> WatchedObjects::groupClaimName(const api::Pod& pod,
                                                          const api::PodResourceClaim& pc) const {
  const std::string* group = pod.spec.podGroupName();
  if (group == nullptr) return std::nullopt;
  const PathParts podGroups{"scheduling.k8s.io", "podgroups", pod.metadata.namespace_, *group};
  for (const auto& w : watches_) {
    if (!w->covers(podGroups)) continue;
    const UnstructuredPtr o = w->get(pod.metadata.namespace_, *group);
    if (!o) continue;
    const nlohmann::json& pg = o->object;
    const nlohmann::json entries =
        pg.value("spec", nlohmann::json::object()).value("resourceClaims", nlohmann::json::array());
    auto field = [](const nlohmann::json& e, const char* key) -> std::optional<std::string> {
      if (!e.is_object() || !e.contains(key) || !e[key].is_string()) return std::nullopt;
      return e[key].get<std::string>();
    };
    for (const auto& e : entries) {
      if (field(e, "name") != pc.name || field(e, "resourceClaimName") != pc.resourceClaimName ||
          field(e, "resourceClaimTemplateName") != pc.resourceClaimTemplateName ||
          !pc.resourceClaimTemplateName) {
        continue;
      }
      const nlohmann::json statuses = pg.value("status", nlohmann::json::object())
                                          .value("resourceClaimStatuses", nlohmann::json::array());
      for (const auto& s : statuses) {
        if (field(s, "name") == pc.name) return field(s, "resourceClaimName");
      }
    }
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<std::string> WatchedObjects::devicesOf(const api::Pod& pod) const {
  std::vector<std::string> out;
  const PathParts claims{"resource.k8s.io", "resourceclaims", pod.metadata.namespace_, ""};
  for (const auto& pc : pod.spec.resourceClaims) {
    std::optional<std::string> name = pc.resourceClaimName;
    bool named = false;
    for (const auto& s : pod.status.resourceClaimStatuses) {
      if (s.name == pc.name) {
        name = s.resourceClaimName;
        named = true;
      }
    }
    // A template claim on the pod's PodGroup (DRAWorkloadResourceClaims): the one generated for
    // the group, which the PodGroup's status names.
    if (!named && pc.resourceClaimTemplateName) name = groupClaimName(pod, pc);
    if (!name) continue;
    for (const auto& w : watches_) {
      if (!w->covers(claims)) continue;
      const UnstructuredPtr o = w->get(pod.metadata.namespace_, *name);
      if (!o) continue;
      const nlohmann::json* results = &o->object;
      for (const char* k : {"status", "allocation", "devices", "results"}) {
        if (!results->is_object() || !results->contains(k)) {
          results = nullptr;
          break;
        }
        results = &(*results)[k];
      }
      if (results != nullptr && results->is_array()) {
        for (const auto& r : *results) {
          if (!r.is_object()) continue;
          out.push_back(pc.name + ": " + r.value("driver", "") + "/" + r.value("pool", "") + "/" +
                        r.value("device", ""));
        }
      }
      break;
    }
  }
  if (const auto& ext = pod.status.extendedResourceClaimStatus) {
    for (const auto& w : watches_) {
      if (!w->covers(claims)) continue;
      const UnstructuredPtr o = w->get(pod.metadata.namespace_, ext->resourceClaimName);
      if (!o) continue;
      const nlohmann::json results = o->object.value("status", nlohmann::json::object())
                                         .value("allocation", nlohmann::json::object())
                                         .value("devices", nlohmann::json::object())
                                         .value("results", nlohmann::json::array());
      for (const auto& r : results) {
        if (!r.is_object()) continue;
        std::string resource = r.value("request", "");
        for (const auto& m : ext->requestMappings) {
          if (m.requestName == resource) {
            resource = m.resourceName;
            break;
          }
        }
        out.push_back(resource + ": " + r.value("driver", "") + "/" + r.value("pool", "") + "/" +
                      r.value("device", ""));
      }
      break;
    }
  }
  return out;
}

void WatchedObjects::writeBack(std::map<std::string, std::vector<UnstructuredPtr>>& others) const {
  for (const auto& o : removed_) {
    const std::string key = o->object.value("apiVersion", "") + "/" + o->object.value("kind", "");
    if (auto it = others.find(key); it != others.end()) {
      std::erase_if(it->second, [&](const UnstructuredPtr& x) {
        return x->metadata.namespace_ == o->metadata.namespace_ &&
               x->metadata.name == o->metadata.name;
      });
    }
  }
  for (const auto& o : changed_) {
    const std::string key = o->object.value("apiVersion", "") + "/" + o->object.value("kind", "");
    auto& list = others[key];
    bool replaced = false;
    for (auto& existing : list) {
      if (existing->metadata.namespace_ == o->metadata.namespace_ &&
          existing->metadata.name == o->metadata.name) {
        existing = o;
        replaced = true;
      }
    }
    if (!replaced) list.push_back(o);
  }
}

}  // namespace ksched::sim
