// SchedulerCore's pod status writes (status_writes.h): the PreEnqueue verdicts the queue
// reports, what the feed already holds, and sending one write.
#include <spdlog/spdlog.h>

#include <chrono>
#include <string>
#include <string_view>

#include <ksched/api/pod.h>
#include <ksched/api/rfc3339.h>

#include "scheduler/rest_cluster_api.h"
#include "scheduler/scheduler_core.h"

namespace ksched::scheduler {
namespace {

void warnFailed(const api::Pod& pod, std::string_view what, const ApiResult& r) {
  if (r && !r->isNotFound()) {
    spdlog::warn("updating {} of {}/{}: {}", what, pod.metadata.namespace_, pod.metadata.name,
                 r->message);
  }
}

}  // namespace

bool SchedulerCore::onPreEnqueueRejection(const PodPtr& pod, const std::string& message) {
  if (!scheduling_.load()) return false;
  auto w = message.empty() ? StatusWrites::Write::clearNotReady(pod)
                           : StatusWrites::Write::podScheduledFalse(
                                 pod, std::string(api::kPodReasonNotReadyForScheduling), message);
  statusWrites_.submitAfter(
      pod->metadata.uid, std::move(w),
      options_.synchronous ? std::chrono::milliseconds::zero() : options_.preEnqueueStatusDelay);
  return true;
}

ApiResult SchedulerCore::patchUnlessBound(const api::Pod& current, nlohmann::json body) {
  // The feed may lag behind a binding whose answer was lost (the apiserver killed after storing
  // it), and the client retries a write across an outage: unguarded, this PodScheduled=False
  // could land after the binding's PodScheduled=True. The version the feed has is the write's
  // precondition; on a conflict the pod is read, and the write goes again only while it is
  // still unbound.
  std::string version = current.metadata.resourceVersion;
  for (int attempt = 0;; ++attempt) {
    if (!version.empty()) body["metadata"]["resourceVersion"] = version;
    ApiResult r = env_.api->patchPodStatus(current, body, "application/strategic-merge-patch+json");
    if (!r || !r->isConflict() || version.empty() || attempt == 1) return r;
    nlohmann::json latest;
    if (env_.api->get(RestClusterApi::podPath(current), &latest)) return r;
    std::string uid;
    std::string nodeName;
    try {
      uid = latest.at("metadata").value("uid", "");
      nodeName = latest.at("spec").value("nodeName", "");
      version = latest.at("metadata").value("resourceVersion", "");
    } catch (const nlohmann::json::exception&) {
      return r;  // unreadable: no better answer than the conflict
    }
    if (uid != current.metadata.uid || version.empty()) return r;  // gone or replaced
    if (!nodeName.empty()) {
      spdlog::debug("{}/{}: bound meanwhile; its PodScheduled=False is not written",
                    current.metadata.namespace_, current.metadata.name);
      return std::nullopt;
    }
  }
}

bool SchedulerCore::heldByFeed(const StatusWrites::Write& w) const {
  const PodPtr latest = pod(w.pod->metadata.key());
  if (!latest || latest->metadata.uid != w.pod->metadata.uid) return true;  // gone
  return w.addsNothingTo(StatusWrites::Write::heldBy(latest));
}

void SchedulerCore::sendStatusWrite(const StatusWrites::Write& w) {
  using Condition = StatusWrites::Write::Condition;
  const PodPtr latest = pod(w.pod->metadata.key());
  if (!latest || latest->metadata.uid != w.pod->metadata.uid) return;  // deleted
  const api::Pod& current = *latest;
  // Not retried: the pod's next attempt (or PreEnqueue verdict) writes again.
  if (w.binding) {
    // A nomination while the pod is being bound (too late once it is), or its clearing once
    // it is bound.
    if (!w.nominatedNode || *w.nominatedNode == current.status.nominatedNodeName) return;
    if (!w.nominatedNode->empty() && assigned(current)) return;
    nlohmann::json body = {
        {"status",
         {{"nominatedNodeName", w.nominatedNode->empty() ? nlohmann::json(nullptr)
                                                         : nlohmann::json(*w.nominatedNode)}}}};
    warnFailed(current, "nominatedNodeName",
               env_.api->patchPodStatus(current, body, "application/strategic-merge-patch+json"));
    return;
  }
  // Bound (or being bound) since: a late PodScheduled=False would contradict the binding's
  // PodScheduled=True.
  if (cache_.isAssumed(current.metadata.uid) || assigned(current)) return;
  bool setCondition = w.condition == Condition::kSet;
  const bool notReady = setCondition && w.reason == api::kPodReasonNotReadyForScheduling;
  // A PreEnqueue rejection is written only while it still holds the pod back.
  if (notReady && queue_->preEnqueueRejectionOf(current.metadata.uid) != w.message) {
    setCondition = false;
  }
  nlohmann::json status = nlohmann::json::object();
  if (setCondition) {
    status["conditions"] = nlohmann::json::array(
        {{{"type", api::kPodConditionScheduled},
          {"status", "False"},
          {"reason", w.reason},
          {"message", w.message},
          {"lastProbeTime", nullptr},
          {"lastTransitionTime", api::formatRFC3339(std::chrono::system_clock::now())}}});
    // PodObservedGenerationTracking (GA 1.35): the generation the condition was written for.
    // Pods of apiservers before 1.34 carry no generation, and get no field they do not know.
    if (current.metadata.generation > 0) {
      status["conditions"][0]["observedGeneration"] = current.metadata.generation;
    }
  }
  if (w.nominatedNode) {
    status["nominatedNodeName"] =
        w.nominatedNode->empty() ? nlohmann::json(nullptr) : nlohmann::json(*w.nominatedNode);
  }
  nlohmann::json body = nlohmann::json::object();
  if (!status.empty()) body["status"] = std::move(status);
  if (!w.diagnosis.empty()) {
    body["metadata"]["annotations"][std::string(kDiagnosisAnnotation)] = w.diagnosis;
  }
  if (!body.empty()) {
    ApiResult r = patchUnlessBound(current, std::move(body));
    warnFailed(current, api::kPodConditionScheduled, r);
    if (!r && notReady && setCondition) {
      if (auto* fwk = frameworkFor(current)) {
        fwk->eventRecorder().event(current, "Warning", api::kPodReasonNotReadyForScheduling,
                                   "Scheduling", w.message);
      }
    }
  }
  if (w.condition == Condition::kClearNotReady) {
    // Removed only if it still is the NotReadyForScheduling condition the feed shows: the
    // tests make the apiserver refuse (422) if it was replaced meanwhile.
    const auto& cs = current.status.conditions;
    for (size_t i = 0; i < cs.size(); ++i) {
      if (cs[i].type != api::kPodConditionScheduled) continue;
      if (cs[i].reason != api::kPodReasonNotReadyForScheduling) break;
      const std::string path = "/status/conditions/" + std::to_string(i);
      nlohmann::json ops = nlohmann::json::array(
          {{{"op", "test"}, {"path", path + "/type"}, {"value", cs[i].type}},
           {{"op", "test"}, {"path", path + "/reason"}, {"value", cs[i].reason}},
           {{"op", "remove"}, {"path", path}}});
      ApiResult r = env_.api->patchPodStatus(current, ops, "application/json-patch+json");
      if (r && r->code == 422) {
        spdlog::debug("{}/{}: its NotReadyForScheduling condition changed meanwhile: {}",
                      current.metadata.namespace_, current.metadata.name, r->message);
      } else {
        warnFailed(current, api::kPodConditionScheduled, r);
      }
      break;
    }
  }
}

}  // namespace ksched::scheduler
