#include "scheduler/scheduler.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "client/errors.h"

namespace ksched::scheduler {

namespace {

// "/apis/<group>/<version>/..." -> "<group>/<version>"; "/api/v1/..." -> "v1".
std::string groupVersionOf(const std::string& path) {
  if (path.starts_with("/api/v1/")) return "v1";
  if (!path.starts_with("/apis/")) return "";
  const size_t g = path.find('/', 6);
  const size_t v = g == std::string::npos ? g : path.find('/', g + 1);
  return v == std::string::npos ? "" : path.substr(6, v - 6);
}

// Whether the apiserver's discovery of `path`'s group version lists its resource (the last
// segment): a group version may be served without every kind of it (resource.k8s.io/v1 came
// before DeviceTaintRules did). False when the group version is not served. `seen` keeps each
// group version's answer (the resources, or the error) for the scheduler's other watches.
bool listsResource(client::RestClient& client, const std::string& path, DiscoveryCache& seen) {
  const std::string gv = groupVersionOf(path);
  const std::string plural = path.substr(path.rfind('/') + 1);
  auto it = seen.find(gv);
  if (it == seen.end()) {
    DiscoveredVersion v;
    try {
      const auto doc = client.get(gv == "v1" ? "/api/v1" : "/apis/" + gv);
      for (const auto& r : doc.value("resources", nlohmann::json::array())) {
        if (r.is_object()) v.resources.insert(r.value("name", ""));
      }
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) v.error = e.what();
    } catch (const std::exception& e) {
      v.error = e.what();
    }
    it = seen.emplace(gv, std::move(v)).first;
  }
  if (!it->second.error.empty()) throw std::runtime_error(it->second.error);
  return it->second.resources.contains(plural);
}

// The first of what.path and its alternatives whose group version the apiserver serves with
// the resource in it; "" when it serves none and the watch is optional; what.path when
// discovery fails or serves none (the watch then says why it cannot list).
std::string servedPath(client::RestClient& client, const ObjectWatch& what, DiscoveryCache& seen) {
  std::vector<std::string> paths{what.path};
  paths.insert(paths.end(), what.alternatives.begin(), what.alternatives.end());
  try {
    for (const auto& p : paths) {
      if (listsResource(client, p, seen)) return p;
    }
    if (what.optional) {
      spdlog::info("{}: the apiserver serves none of {}; not watched", what.kind, [&] {
        std::string all;
        for (const auto& p : paths) all += (all.empty() ? "" : ", ") + p;
        return all;
      }());
      return "";
    }
  } catch (const std::exception& e) {
    spdlog::warn("discovering the served version of {}: {}", what.kind, e.what());
  }
  return what.path;
}

ApiEventRecorder::Options eventRecorderOptions(const Options& options) {
  ApiEventRecorder::Options o;
  o.senders = options.eventSenders;
  if (auto* m = options.metrics) o.onDropped = [m](std::string_view r) { m->eventDropped(r); };
  return o;
}

// Handlers that see every object with an apiVersion (`apiVersion` where it has none).
ObjectEventHandlers withApiVersion(const std::string& apiVersion, ObjectEventHandlers h) {
  auto fill = [apiVersion](const UnstructuredPtr& o) -> UnstructuredPtr {
    if (!o || !o->object.is_object() || o->object.contains("apiVersion")) return o;
    auto copy = std::make_shared<UnstructuredObject>(*o);
    copy->object["apiVersion"] = apiVersion;
    return copy;
  };
  ObjectEventHandlers out;
  if (h.onAdd) out.onAdd = [fill, f = std::move(h.onAdd)](const UnstructuredPtr& o) { f(fill(o)); };
  if (h.onUpdate) {
    out.onUpdate = [fill, f = std::move(h.onUpdate)](
                       const UnstructuredPtr& a, const UnstructuredPtr& b) { f(fill(a), fill(b)); };
  }
  if (h.onDelete) {
    out.onDelete = [fill, f = std::move(h.onDelete)](const UnstructuredPtr& o) { f(fill(o)); };
  }
  return out;
}

}  // namespace

Scheduler::Scheduler(client::RestClient& client, client::RestClient& eventsClient,
                     const Registry& registry, Options options)
    : client_(client),
      eventsClient_(eventsClient),
      api_(client),
      events_(eventsClient,
              options.profiles.empty() ? config::kDefaultSchedulerName
                                       : options.profiles[0].schedulerName,
              options.instanceId, eventRecorderOptions(options)),
      pods_(client, {"Pod", "/api/v1/pods"}),
      nodes_(client, {"Node", "/api/v1/nodes"}),
      listers_(client,
               [this](const ClusterEvent& ev, const EventObject& oldObj,
                      const EventObject& newObj) { core_->onClusterEvent(ev, oldObj, newObj); }) {
  Environment env;
  env.api = &api_;
  env.events = &events_;
  env.listers = &listers_;
  env.watchObjects = [this](ObjectWatch what, ObjectEventHandlers h) {
    if (!what.alternatives.empty() || what.optional) {
      what.path = servedPath(client_, what, discovered_);
      if (what.path.empty())
        return std::shared_ptr<const ObjectStore>(std::make_shared<EmptyObjectStore>());
      // The items of a built-in kind's LIST carry no apiVersion, and the decoders of a kind
      // served in several versions need it: the handlers get it filled in.
      h = withApiVersion(groupVersionOf(what.path), std::move(h));
    }
    // One watch per collection and selector, whichever plugins and profiles ask.
    std::shared_ptr<ObjectInformer> inf;
    for (auto& o : objectInformers_) {
      if (o->what().path == what.path && o->what().labelSelector == what.labelSelector) inf = o;
    }
    if (!inf) inf = objectInformers_.emplace_back(std::make_shared<ObjectInformer>(client_, what));
    inf->addHandlers(std::move(h));
    return std::shared_ptr<const ObjectStore>(inf);
  };
  metrics::SchedulerMetrics* const metrics = options.metrics;
  std::set<std::string, std::less<>> profiles;
  for (const auto& p : options.profiles) profiles.insert(p.schedulerName);
  auto refused = [metrics](const std::string& kind) {
    if (metrics != nullptr) metrics->objectRefused(kind);
  };
  nodes_.onRefused([refused](const nlohmann::json&, const api::ObjectMeta&, const std::string&) {
    refused("Node");
  });
  // A pod of ours that cannot be read is not scheduled: its events say so, naming the field.
  pods_.onRefused([this, refused, profiles = std::move(profiles)](const nlohmann::json& object,
                                                                  const api::ObjectMeta& meta,
                                                                  const std::string& error) {
    refused("Pod");
    const auto spec = object.find("spec");
    if (spec == object.end() || !spec->is_object()) return;
    const auto name = spec->find("schedulerName");
    const std::string schedulerName = name == spec->end() ? config::kDefaultSchedulerName
                                      : name->is_string() ? name->get<std::string>()
                                                          : "";
    if (!profiles.contains(schedulerName)) return;
    events_.eventFor(api::objectReferenceTo("v1", "Pod", meta), "Warning", "FailedToDecode",
                     "Decoding",
                     "the scheduler cannot read this pod and leaves it out of scheduling until it "
                     "can: " +
                         error);
  });
  env.cutOff = [this] {
    client_.abort();
    eventsClient_.abort();
  };
  core_ = std::make_unique<SchedulerCore>(std::move(env), registry, std::move(options));

  pods_.addHandlers({[this](const PodPtr& p) { core_->onPodAdd(p); },
                     [this](const PodPtr& o, const PodPtr& n) { core_->onPodUpdate(o, n); },
                     [this](const PodPtr& p) { core_->onPodDelete(p); }});
  nodes_.addHandlers({[this](const NodePtr& n) { core_->onNodeAdd(n); },
                      [this](const NodePtr& o, const NodePtr& n) { core_->onNodeUpdate(o, n); },
                      [this](const NodePtr& n) { core_->onNodeDelete(n); }});
}

Scheduler::~Scheduler() { stop(); }

bool Scheduler::startInformers(std::chrono::milliseconds syncTimeout) {
  listers_.start();
  for (auto& o : objectInformers_) o->start();
  nodes_.start();
  pods_.start();
  auto deadline = std::chrono::steady_clock::now() + syncTimeout;
  auto left = [&] {
    return std::max(std::chrono::duration_cast<std::chrono::milliseconds>(
                        deadline - std::chrono::steady_clock::now()),
                    std::chrono::milliseconds(0));
  };
  if (!(nodes_.waitForSync(left()) && pods_.waitForSync(left()) && listers_.waitForSync(left()))) {
    return false;
  }
  for (auto& o : objectInformers_) {
    if (!o->waitForSync(left())) return false;
  }
  return true;
}

std::string Scheduler::syncError() const {
  for (const std::string& e : {nodes_.fatalError(), pods_.fatalError(), listers_.fatalError()}) {
    if (!e.empty()) return e;
  }
  for (const auto& o : objectInformers_) {
    if (std::string e = o->fatalError(); !e.empty()) return e;
  }
  std::string missing;
  auto add = [&missing](const std::string& what) {
    missing += (missing.empty() ? "" : ", ") + what;
  };
  if (!nodes_.hasSynced()) add("nodes");
  if (!pods_.hasSynced()) add("pods");
  if (!listers_.hasSynced()) add("the kinds plugins read (services, volumes, PDBs, ...)");
  for (const auto& o : objectInformers_) {
    if (!o->hasSynced()) {
      add(o->what().kind + " (" + o->what().path +
          ": does the apiserver serve it, is its CRD installed?)");
    }
  }
  return "informers did not sync: " + missing;
}

bool Scheduler::informersSynced() const {
  for (const auto& o : objectInformers_) {
    if (!o->hasSynced()) return false;
  }
  return nodes_.hasSynced() && pods_.hasSynced() && listers_.hasSynced();
}

ShutdownReport Scheduler::stop() {
  // Idempotent, as the core's stop(): informers and clients are stopped again at no cost.
  ShutdownReport report = core_->stop();
  // Nothing of the scheduler talks to the apiserver any more: informers retrying a LIST against
  // an apiserver that is gone end at once instead of after their retries.
  client_.abort();
  eventsClient_.abort();
  pods_.stop();
  nodes_.stop();
  listers_.stop();
  for (auto& o : objectInformers_) o->stop();
  return report;
}

}  // namespace ksched::scheduler
