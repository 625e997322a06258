#include "sim/load.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include <ksched/api/decode.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/utf8.h>

#include "client/errors.h"
#include "client/object_json.h"
#include "client/rest_client.h"
#include "config/yaml_json.h"
#include "sim/documents.h"
#include "sim/expand.h"

namespace ksched::sim {
namespace {

using nlohmann::json;

// What is known of the object being read, for its Skipped entry.
struct Ref {
  const std::string& source;
  std::string apiVersion;
  std::string kind;
  std::string name;
  std::string ns;  // defaulted to "default" for the namespaced kinds below

  [[nodiscard]] std::string object() const {
    return kind + " " + (ns.empty() ? name : ns + "/" + name);
  }
};

class Loader;
using Take = void (*)(Loader&, json&&, const Ref&);

// Every kind with a type, and what it becomes.
struct KindEntry {
  std::string_view apiVersion;
  std::string_view kind;
  bool namespaced;
  Take cluster;  // LoadAs::kCluster
  Take work;     // LoadAs::kWork
};

void skip(Cluster& into, std::string source, std::string object, std::string field,
          std::string message) {
  // Parsers quote the input in their messages: what is listed must be UTF-8 all the same.
  into.skipped.push_back(Skipped{api::toValidUtf8(source), api::toValidUtf8(object),
                                 api::toValidUtf8(field), api::toValidUtf8(message)});
}

template <typename T>
T decodeObject(const json& j, const Ref& r) {
  T out = api::decode<T>(j);
  out.metadata.namespace_ = r.ns;
  if (out.metadata.uid.empty()) out.metadata.uid = simUid(r.kind, r.ns, r.name);
  return out;
}

class Loader {
 public:
  Loader(LoadAs as, Cluster& into) : as_(as), into_(into) {}

  // One object of a document or List; `obj` is consumed.
  void add(json&& obj, const std::string& source);

  Cluster& cluster() { return into_; }

 private:
  [[nodiscard]] const KindEntry* find(std::string_view apiVersion, std::string_view kind) const;

  LoadAs as_;
  Cluster& into_;
};

template <typename T, std::vector<T> Cluster::*kList>
void keep(Loader& l, json&& j, const Ref& r) {
  (l.cluster().*kList).push_back(decodeObject<T>(j, r));
}

void keepNode(Loader& l, json&& j, const Ref& r) {
  l.cluster().nodes.push_back(std::make_shared<const api::Node>(decodeObject<api::Node>(j, r)));
}

void keepPod(Loader& l, json&& j, const Ref& r) {
  auto pod = decodeObject<api::Pod>(j, r);
  // Finished pods hold no resources: the scheduler's cache never sees them.
  if (pod.status.phase == api::kPodSucceeded || pod.status.phase == api::kPodFailed) return;
  l.cluster().pods.push_back(std::make_shared<const api::Pod>(std::move(pod)));
}

void workPod(Loader& l, json&& j, const Ref& r) {
  auto pod = decodeObject<api::Pod>(j, r);
  pod.spec.nodeName.clear();
  pod.status = api::PodStatus{};
  pod.status.phase = std::string(api::kPodPending);
  l.cluster().pods.push_back(std::make_shared<const api::Pod>(std::move(pod)));
}

void keepOther(Loader& l, json&& j, const Ref& r) {
  UnstructuredObject o;
  if (const auto it = j.find("metadata"); it != j.end()) {
    try {
      o.metadata = api::decode<api::ObjectMeta>(*it);
    } catch (const api::DecodeError& e) {
      auto [f, m] = locateDecodeError(*it, e.what());
      throw FieldError(f.empty() ? "metadata" : "metadata." + f, m);
    }
  }
  o.object = std::move(j);
  l.cluster().others[r.apiVersion + "/" + r.kind].push_back(
      std::make_shared<const UnstructuredObject>(std::move(o)));
}

// The Workload API (scheduling.k8s.io): checked by its decoder (a malformed group is Skipped
// with its field, as a typed kind), kept for the plugins that watch it, in its namespace.
template <typename T>
void keepGroup(Loader& l, json&& j, const Ref& r) {
  (void)api::decode<T>(j);
  json& meta = j["metadata"];
  meta["namespace"] = r.ns;
  if (meta.value("uid", "").empty()) meta["uid"] = simUid(r.kind, r.ns, r.name);
  keepOther(l, std::move(j), r);
}

template <void (*kExpand)(const Controller&, Cluster&)>
void expand(Loader& l, json&& j, const Ref& r) {
  std::string uid;
  const json& meta = j.at("metadata");  // checked by Loader::add
  if (const auto it = meta.find("uid"); it != meta.end() && it->is_string()) {
    uid = it->get<std::string>();
  }
  if (uid.empty()) uid = simUid(r.kind, r.ns, r.name);
  kExpand(Controller{j, r.name, r.ns, std::move(uid)}, l.cluster());
}

constexpr KindEntry kKinds[] = {
    {"v1", "Node", false, keepNode, keepNode},
    {"v1", "Pod", true, keepPod, workPod},
    {"v1", "Namespace", false, keep<api::Namespace, &Cluster::namespaces>,
     keep<api::Namespace, &Cluster::namespaces>},
    {"v1", "Service", true, keep<api::Service, &Cluster::services>,
     keep<api::Service, &Cluster::services>},
    {"v1", "ReplicationController", true,
     keep<api::ReplicationController, &Cluster::replicationControllers>,
     expand<expandReplicationController>},
    {"v1", "PersistentVolumeClaim", true,
     keep<api::PersistentVolumeClaim, &Cluster::persistentVolumeClaims>,
     keep<api::PersistentVolumeClaim, &Cluster::persistentVolumeClaims>},
    {"v1", "PersistentVolume", false, keep<api::PersistentVolume, &Cluster::persistentVolumes>,
     keep<api::PersistentVolume, &Cluster::persistentVolumes>},
    {"apps/v1", "ReplicaSet", true, keep<api::ReplicaSet, &Cluster::replicaSets>,
     expand<expandReplicaSet>},
    {"apps/v1", "StatefulSet", true, keep<api::StatefulSet, &Cluster::statefulSets>,
     expand<expandStatefulSet>},
    // No typed Deployment or Job: as the cluster is, their pods are in the dump.
    {"apps/v1", "Deployment", true, keepOther, expand<expandDeployment>},
    {"batch/v1", "Job", true, keepOther, expand<expandJob>},
    {"policy/v1", "PodDisruptionBudget", true,
     keep<api::PodDisruptionBudget, &Cluster::podDisruptionBudgets>,
     keep<api::PodDisruptionBudget, &Cluster::podDisruptionBudgets>},
    {"policy/v1beta1", "PodDisruptionBudget", true,
     keep<api::PodDisruptionBudget, &Cluster::podDisruptionBudgets>,
     keep<api::PodDisruptionBudget, &Cluster::podDisruptionBudgets>},
    {"storage.k8s.io/v1", "StorageClass", false, keep<api::StorageClass, &Cluster::storageClasses>,
     keep<api::StorageClass, &Cluster::storageClasses>},
    {"storage.k8s.io/v1", "CSINode", false, keep<api::CSINode, &Cluster::csiNodes>,
     keep<api::CSINode, &Cluster::csiNodes>},
    {"storage.k8s.io/v1", "CSIDriver", false, keep<api::CSIDriver, &Cluster::csiDrivers>,
     keep<api::CSIDriver, &Cluster::csiDrivers>},
    {"storage.k8s.io/v1", "CSIStorageCapacity", true,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>},
    {"storage.k8s.io/v1alpha1", "CSIStorageCapacity", true,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>},
    {"storage.k8s.io/v1beta1", "CSIStorageCapacity", true,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>,
     keep<api::CSIStorageCapacity, &Cluster::csiStorageCapacities>},
    {"scheduling.k8s.io/v1beta1", "PodGroup", true, keepGroup<api::PodGroup>,
     keepGroup<api::PodGroup>},
    {"scheduling.k8s.io/v1alpha2", "PodGroup", true, keepGroup<api::PodGroup>,
     keepGroup<api::PodGroup>},
    {"scheduling.k8s.io/v1alpha3", "PodGroup", true, keepGroup<api::PodGroup>,
     keepGroup<api::PodGroup>},
    {"scheduling.k8s.io/v1alpha3", "CompositePodGroup", true, keepGroup<api::CompositePodGroup>,
     keepGroup<api::CompositePodGroup>},
    {"scheduling.k8s.io/v1beta1", "Workload", true, keepGroup<api::Workload>,
     keepGroup<api::Workload>},
    {"scheduling.k8s.io/v1alpha2", "Workload", true, keepGroup<api::Workload>,
     keepGroup<api::Workload>},
    {"scheduling.k8s.io/v1alpha3", "Workload", true, keepGroup<api::Workload>,
     keepGroup<api::Workload>},
};

const KindEntry* Loader::find(std::string_view apiVersion, std::string_view kind) const {
  for (const KindEntry& e : kKinds) {
    if (e.apiVersion == apiVersion && e.kind == kind) return &e;
  }
  return nullptr;
}

// A string member, or nullopt with the reason.
std::optional<std::string> stringAt(const json& j, std::string_view key, std::string& why) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    why = "missing";
  } else if (!it->is_string()) {
    why = std::string("expected a string, got ") + it->type_name();
  } else if (it->get_ref<const std::string&>().empty()) {
    why = "missing";
  } else {
    return it->get<std::string>();
  }
  return std::nullopt;
}

void Loader::add(json&& obj, const std::string& source) {
  if (!obj.is_object()) {
    skip(into_, source, "", "",
         std::string("not a Kubernetes object: the document is a ") + obj.type_name());
    return;
  }
  std::string why;
  const auto apiVersion = stringAt(obj, "apiVersion", why);
  if (!apiVersion) return skip(into_, source, "", "apiVersion", why);
  const auto kind = stringAt(obj, "kind", why);
  if (!kind) return skip(into_, source, "", "kind", why);
  const auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) {
    return skip(into_, source, "", "metadata", "missing: a " + *kind + " needs metadata.name");
  }
  auto name = stringAt(*meta, "name", why);
  if (!name)
    return skip(into_, source, "", "metadata.name", why + ": a " + *kind + " needs a name");

  const KindEntry* entry = find(*apiVersion, *kind);
  Ref ref{source, *apiVersion, *kind, std::move(*name), {}};
  if (const auto ns = meta->find("namespace"); ns != meta->end() && ns->is_string()) {
    ref.ns = ns->get<std::string>();
  }
  if (entry != nullptr && entry->namespaced && ref.ns.empty()) ref.ns = "default";
  if (entry != nullptr && !entry->namespaced) ref.ns.clear();
  meta->erase("managedFields");

  try {
    const Take take = entry == nullptr       ? keepOther
                      : as_ == LoadAs::kWork ? entry->work
                                             : entry->cluster;
    take(*this, std::move(obj), ref);
  } catch (const FieldError& e) {
    skip(into_, source, ref.object(), e.field(), e.what());
  } catch (const api::DecodeError& e) {
    // Thrown before the object was moved from: it is still whole.
    auto [field, message] = locateDecodeError(obj, e.what());
    skip(into_, source, ref.object(), std::move(field), std::move(message));
  } catch (const std::exception& e) {
    skip(into_, source, ref.object(), "", e.what());
  }
}

// One parsed document: an object, or a List whose items are each an object.
void addDocument(Loader& loader, json&& doc, const std::string& source, const std::string& where) {
  if (doc.is_null()) return;  // an empty document
  const std::string prefix = where.empty() ? source + ": " : where + ", ";
  if (doc.is_object()) {
    const auto kind = doc.find("kind");
    const auto items = doc.find("items");
    if (kind != doc.end() && kind->is_string() &&
        kind->get_ref<const std::string&>().ends_with("List") && items != doc.end()) {
      if (items->is_null()) return;
      if (!items->is_array()) {
        skip(loader.cluster(), where.empty() ? source : where, "", "items",
             std::string("expected an array, got ") + items->type_name());
        return;
      }
      for (size_t i = 0; i < items->size(); ++i) {
        json item = std::move((*items)[i]);
        const std::string itemSource = prefix + "items[" + std::to_string(i) + "]";
        if (item.is_object()) {
          if (const auto k = item.find("kind");
              k != item.end() && k->is_string() &&
              k->get_ref<const std::string&>().ends_with("List") && item.contains("items")) {
            skip(loader.cluster(), itemSource, "", "", "a List inside a List is not read");
            continue;
          }
        }
        loader.add(std::move(item), itemSource);
      }
      return;
    }
  }
  loader.add(std::move(doc), where.empty() ? source : where);
}

}  // namespace

void loadText(std::string_view text, const std::string& source, LoadAs as, Cluster& into) {
  Loader loader(as, into);
  // JSON (kubectl -o json): parsed directly, managedFields left out while parsing.
  if (looksLikeJson(text)) {
    json doc = client::parseObjectJson(text);
    if (!doc.is_discarded()) return addDocument(loader, std::move(doc), source, "");
  }
  const std::vector<Document> docs = splitDocuments(text);
  for (size_t d = 0; d < docs.size(); ++d) {
    const std::string where =
        docs.size() == 1 ? std::string() : source + ": document " + std::to_string(d + 1);
    json doc;
    try {
      doc = config::yamlToJson(docs[d].text);
    } catch (const std::exception& e) {
      // A whole-JSON text that is neither JSON nor YAML: the JSON parser says it better.
      std::string message = docs.size() == 1 && looksLikeJson(text)
                                ? jsonError(text)
                                : lineInText(e.what(), docs[d].firstLine);
      skip(into, where.empty() ? source : where, "", "", std::move(message));
      continue;
    }
    addDocument(loader, std::move(doc), source, where);
  }
}

void loadFile(const std::string& path, LoadAs as, Cluster& into) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>());
    if (std::cin.bad()) throw std::runtime_error("-: cannot read standard input");
  } else {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path + ": " + std::strerror(errno));
    std::ostringstream buf;
    buf << in.rdbuf();
    if (in.bad()) throw std::runtime_error(path + ": " + std::strerror(errno));
    text = std::move(buf).str();
  }
  loadText(text, path, as, into);
}

namespace {

struct Collection {
  std::string_view path;
  std::string_view apiVersion;
  std::string_view kind;
};

constexpr Collection kCollections[] = {
    {"/api/v1/nodes", "v1", "Node"},
    {"/api/v1/pods", "v1", "Pod"},
    {"/api/v1/namespaces", "v1", "Namespace"},
    {"/api/v1/services", "v1", "Service"},
    {"/api/v1/replicationcontrollers", "v1", "ReplicationController"},
    {"/api/v1/persistentvolumeclaims", "v1", "PersistentVolumeClaim"},
    {"/api/v1/persistentvolumes", "v1", "PersistentVolume"},
    {"/apis/apps/v1/replicasets", "apps/v1", "ReplicaSet"},
    {"/apis/apps/v1/statefulsets", "apps/v1", "StatefulSet"},
    {"/apis/storage.k8s.io/v1/storageclasses", "storage.k8s.io/v1", "StorageClass"},
    {"/apis/storage.k8s.io/v1/csinodes", "storage.k8s.io/v1", "CSINode"},
    {"/apis/storage.k8s.io/v1/csidrivers", "storage.k8s.io/v1", "CSIDriver"},
};

// scheduling.k8s.io's collections, newest version first.
const std::vector<std::vector<std::string_view>> kWorkloadApiCollections = {
    {"v1beta1/podgroups", "v1alpha3/podgroups", "v1alpha2/podgroups"},
    {"v1alpha3/compositepodgroups"},
    {"v1beta1/workloads", "v1alpha3/workloads", "v1alpha2/workloads"},
};

void append(Cluster& from, Cluster& into) {
  auto move = [](auto& src, auto& dst) {
    dst.insert(dst.end(), std::make_move_iterator(src.begin()), std::make_move_iterator(src.end()));
  };
  move(from.nodes, into.nodes);
  move(from.pods, into.pods);
  move(from.namespaces, into.namespaces);
  move(from.services, into.services);
  move(from.replicaSets, into.replicaSets);
  move(from.statefulSets, into.statefulSets);
  move(from.replicationControllers, into.replicationControllers);
  move(from.podDisruptionBudgets, into.podDisruptionBudgets);
  move(from.persistentVolumeClaims, into.persistentVolumeClaims);
  move(from.persistentVolumes, into.persistentVolumes);
  move(from.storageClasses, into.storageClasses);
  move(from.csiNodes, into.csiNodes);
  move(from.csiDrivers, into.csiDrivers);
  move(from.csiStorageCapacities, into.csiStorageCapacities);
  for (auto& [key, objects] : from.others) move(objects, into.others[key]);
  move(from.skipped, into.skipped);
}

// The kind of a collection's items, from the List's own kind ("PodGroupList"): the items of
// a built-in kind's LIST carry neither kind nor apiVersion.
std::pair<std::string, std::string> listedKind(client::RestClient& client,
                                               const std::string& path) {
  const json list =
      client.get(path + (path.find('?') == std::string::npos ? "?" : "&") + "limit=1");
  std::string kind = list.value("kind", "");
  if (kind.ends_with("List")) kind.resize(kind.size() - 4);
  return {list.value("apiVersion", ""), kind};
}

// LISTs `path` into `into`, every item read as (apiVersion, kind) when it says none. Throws
// ApiError.
void listInto(client::RestClient& client, const std::string& path, std::string apiVersion,
              std::string kind, Cluster& into) {
  Cluster page;
  const std::string source = "LIST " + path;
  auto onPage = [&](std::vector<json>&& items) {
    Loader loader(LoadAs::kCluster, page);
    for (json& item : items) {
      if (item.is_object() && (!item.contains("kind") || !item.contains("apiVersion"))) {
        if (kind.empty()) std::tie(apiVersion, kind) = listedKind(client, path);
        item.emplace("kind", kind);
        item.emplace("apiVersion", apiVersion);
      }
      loader.add(std::move(item), source);
    }
    return true;
  };
  client.listPaged(path, client::ListOptions{}, onPage, [&] { page = Cluster{}; });
  append(page, into);
}

}  // namespace

void loadFromApiserver(client::RestClient& client, const std::vector<std::string>& customPaths,
                       Cluster& into) {
  auto fail = [](const std::string& path, const std::exception& e) {
    return std::runtime_error("LIST " + path + ": " + e.what());
  };
  for (const Collection& c : kCollections) {
    const std::string path(c.path);
    try {
      listInto(client, path, std::string(c.apiVersion), std::string(c.kind), into);
    } catch (const std::exception& e) {
      throw fail(path, e);
    }
  }
  // PodDisruptionBudgets: policy/v1 (1.21+), else policy/v1beta1; neither served: none.
  for (const char* version : {"policy/v1", "policy/v1beta1"}) {
    const std::string path = std::string("/apis/") + version + "/poddisruptionbudgets";
    try {
      listInto(client, path, version, "PodDisruptionBudget", into);
      break;
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) throw fail(path, e);
    }
  }
  // CSIStorageCapacity: storage.k8s.io/v1 (1.24+), else v1beta1 (1.21-1.27), else v1alpha1
  // (1.19-1.23, where turned on); none: none.
  for (const char* version :
       {"storage.k8s.io/v1", "storage.k8s.io/v1beta1", "storage.k8s.io/v1alpha1"}) {
    const std::string path = std::string("/apis/") + version + "/csistoragecapacities";
    try {
      listInto(client, path, version, "CSIStorageCapacity", into);
      break;
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) throw fail(path, e);
    }
  }
  // The Workload API: each kind in the first version served (the apiserver converts), none
  // where the API is off.
  for (const auto& versions : kWorkloadApiCollections) {
    for (const std::string_view v : versions) {
      const std::string path = "/apis/scheduling.k8s.io/" + std::string(v);
      try {
        listInto(client, path, "", "", into);
        break;
      } catch (const client::ApiError& e) {
        if (!e.isNotFound()) throw fail(path, e);
      }
    }
  }
  // What metrics-server reads on the nodes (the load-aware plugins' KubernetesMetricsServer
  // provider) and the pods (what an eviction takes off a node's reading; advise --balance by
  // measured load); not served, or not readable by this identity: none, and nodes are scored by
  // their requests as a live scheduler without readings does.
  for (const auto& [plural, kind] : {std::pair{"nodes", "NodeMetrics"}, {"pods", "PodMetrics"}}) {
    const std::string path = std::string("/apis/metrics.k8s.io/v1beta1/") + plural;
    try {
      listInto(client, path, "metrics.k8s.io/v1beta1", kind, into);
    } catch (const client::ApiError& e) {
      if (!e.isNotFound() && e.code() != 403 && e.code() != 503) throw fail(path, e);
      spdlog::info("LIST {}: {}; no {} read", path, e.what(), kind);
    }
  }
  for (const std::string& path : customPaths) {
    try {
      listInto(client, path, "", "", into);
    } catch (const client::ApiError& e) {
      if (e.isNotFound()) {
        spdlog::info("LIST {}: not served (404), skipped", path);
        continue;
      }
      throw fail(path, e);
    }
  }
}

namespace {

template <typename T>
const api::ObjectMeta& metaOf(const T& o) {
  if constexpr (requires { o->metadata; }) {
    return o->metadata;
  } else {
    return o.metadata;
  }
}

// Duplicates (same namespace and name) in `list`: the last one read is kept, in its place.
template <typename T>
void dedupe(std::vector<T>& list, std::string_view kind, std::vector<Skipped>& skipped) {
  std::unordered_map<std::string, size_t> count;
  count.reserve(list.size());
  for (const T& o : list) ++count[metaOf(o).key()];
  if (count.size() == list.size()) return;
  std::unordered_map<std::string, size_t> seen;
  std::vector<T> kept;
  kept.reserve(count.size());
  for (T& o : list) {
    const std::string key = metaOf(o).key();
    const size_t n = count.at(key);
    if (n == 1) {
      kept.push_back(std::move(o));
      continue;
    }
    const size_t at = ++seen[key];
    if (at == 1) {
      skipped.push_back(Skipped{"", std::string(kind) + " " + key, "",
                                "read " + std::to_string(n) + " times: the last one read is kept"});
    }
    if (at == n) kept.push_back(std::move(o));
  }
  list = std::move(kept);
}

}  // namespace

void checkCluster(Cluster& cluster) {
  auto& skipped = cluster.skipped;
  std::erase_if(cluster.pods, [](const PodPtr& p) {
    return p->status.phase == api::kPodSucceeded || p->status.phase == api::kPodFailed;
  });
  dedupe(cluster.nodes, "Node", skipped);
  dedupe(cluster.pods, "Pod", skipped);
  dedupe(cluster.namespaces, "Namespace", skipped);
  dedupe(cluster.services, "Service", skipped);
  dedupe(cluster.replicaSets, "ReplicaSet", skipped);
  dedupe(cluster.statefulSets, "StatefulSet", skipped);
  dedupe(cluster.replicationControllers, "ReplicationController", skipped);
  dedupe(cluster.podDisruptionBudgets, "PodDisruptionBudget", skipped);
  dedupe(cluster.persistentVolumeClaims, "PersistentVolumeClaim", skipped);
  dedupe(cluster.persistentVolumes, "PersistentVolume", skipped);
  dedupe(cluster.storageClasses, "StorageClass", skipped);
  dedupe(cluster.csiNodes, "CSINode", skipped);
  dedupe(cluster.csiDrivers, "CSIDriver", skipped);
  dedupe(cluster.csiStorageCapacities, "CSIStorageCapacity", skipped);
  for (auto& [key, objects] : cluster.others) {
    dedupe(objects, std::string_view(key).substr(key.rfind('/') + 1), skipped);
  }

  std::unordered_set<std::string_view> nodes;
  nodes.reserve(cluster.nodes.size());
  for (const NodePtr& n : cluster.nodes) nodes.insert(n->metadata.name);
  std::erase_if(cluster.pods, [&](const PodPtr& p) {
    if (p->spec.nodeName.empty() || nodes.contains(p->spec.nodeName)) return false;
    skipped.push_back(Skipped{"", "Pod " + p->metadata.key(), "spec.nodeName",
                              "node \"" + p->spec.nodeName + "\" is not in the cluster"});
    return true;
  });
}

}  // namespace ksched::sim
