// Scheduler: the live daemon's scheduler, a SchedulerCore (scheduler_core.h) plugged into a
// kube-apiserver. This class is the wiring only: informers over the REST client feed the core
// (pods, nodes, and the kinds plugins list through InformerListers or watch through
// Handle::watchObjects), a RestClusterApi over the same client is the core's ClusterApi, and
// an ApiEventRecorder over the events client its EventSink. Scheduling itself — the loop, the
// binders, failure handling, status patches — is the core's and knows no HTTP client.
//
// Threads, besides the core's (scheduler_core.h):
//   refl-Pod, refl-Node   informers; their handlers feed the core
//   refl-<Kind>           InformerListers' kinds and the watches plugins asked for
//   events-N              the ApiEventRecorder's senders
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/registry.h>

#include "client/rest_client.h"
#include "informer/informer.h"
#include "scheduler/event_recorder.h"
#include "scheduler/informer_listers.h"
#include "scheduler/object_informer.h"
#include "scheduler/rest_cluster_api.h"
#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {

// What discovery said of one group version: the resources it lists, or why it could not say.
struct DiscoveredVersion {
  std::set<std::string> resources;
  std::string error;
};
using DiscoveryCache = std::map<std::string, DiscoveredVersion>;

class Scheduler {
 public:
  // `client` serves informers, bindings and status patches; `eventsClient` only events (its own
  // limiter). Both must outlive the Scheduler. Throws framework::FrameworkError on an invalid
  // profile or extender.
  Scheduler(client::RestClient& client, client::RestClient& eventsClient, const Registry& registry,
            Options options);
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts informers and waits up to `syncTimeout` for them to sync; false if they did not,
  // at once when the apiserver forbids a kind the scheduler needs (syncError() says why).
  bool startInformers(std::chrono::milliseconds syncTimeout);
  // Why startInformers() returned false: the kind the scheduler needs and may not watch, with
  // the RBAC rule to grant, or the kinds that did not sync in time.
  [[nodiscard]] std::string syncError() const;
  [[nodiscard]] bool informersSynced() const;
  // Starts the scheduling loop and the queue's flush thread (after startInformers).
  void startScheduling() { core_->startScheduling(); }
  // Stops popping, drains the binders, plugins' work and status writers, sends queued events,
  // stops informers — all within Options::shutdownGracePeriod: at its end the requests still
  // in flight on both clients are cut off (RestClient::abort) and the events left dropped.
  // Returns in about the grace period whether or not the apiserver answers; both clients are
  // aborted (RestClient::abort) when it returns. Idempotent (later calls return the first one's
  // report).
  ShutdownReport stop();

  [[nodiscard]] Stats stats() const { return core_->stats(); }
  [[nodiscard]] queue::SchedulingQueue& queue() { return core_->queue(); }
  [[nodiscard]] ApiEventRecorder& events() { return events_; }
  [[nodiscard]] cache::Cache& cache() { return core_->cache(); }
  [[nodiscard]] SchedulerCore& core() { return *core_; }
  [[nodiscard]] size_t nodeCount() const { return nodes_.size(); }
  // The node as the informer last saw it, or nullptr.
  [[nodiscard]] NodePtr node(const std::string& name) const { return nodes_.get(name); }
  [[nodiscard]] size_t podCount() const { return pods_.size(); }
  [[nodiscard]] const ClusterListers& listers() const { return listers_; }

  // SchedulerCore::explain, of the pods the informer delivered.
  [[nodiscard]] Explanation explain(const std::string& ns, const std::string& name,
                                    const std::string& node = "") {
    return core_->explain(ns, name, node);
  }

 private:
  // Constant after construction. The core comes last: it is built with the others and is
  // destroyed (stopped) before them.
  client::RestClient& client_;
  client::RestClient& eventsClient_;
  RestClusterApi api_;
  ApiEventRecorder events_;
  informer::Informer<api::Pod> pods_;
  informer::Informer<api::Node> nodes_;
  InformerListers listers_;  // the other kinds plugins read
  // The watches plugins asked for (Handle::watchObjects), one per collection and selector;
  // constant once the core is built.
  std::vector<std::shared_ptr<ObjectInformer>> objectInformers_;
  // Discovery of the group versions optional and versioned watches asked about (at start-up).
  DiscoveryCache discovered_;
  std::unique_ptr<SchedulerCore> core_;
};

}  // namespace ksched::scheduler
