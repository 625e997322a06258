#include "app/advise_apply.h"

#include <algorithm>
#include <set>
#include <thread>

#include <ksched/api/pod.h>

#include "client/rest_client.h"

namespace ksched::app {
// Named, not anonymous: the unity build compiles this file with others of app/.
namespace advise_apply {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

std::string podPath(const std::string& ns, const std::string& name) {
  return "/api/v1/namespaces/" + ns + "/pods/" + name;
}

// The uid of the pod's controller (ownerReferences[controller=true], else the first owner).
std::string controllerUid(const json& pod) {
  const json refs = pod["metadata"].value("ownerReferences", json::array());
  for (const auto& r : refs) {
    if (r.value("controller", false)) return r.value("uid", "");
  }
  return refs.empty() ? "" : refs[0].value("uid", "");
}

// The pods of `ns` whose controller is `owner`.
std::vector<json> podsOf(client::RestClient& rest, const std::string& ns,
                         const std::string& owner) {
  std::vector<json> out;
  for (auto& p : rest.list("/api/v1/namespaces/" + ns + "/pods").items) {
    if (!owner.empty() && controllerUid(p) == owner) out.push_back(std::move(p));
  }
  return out;
}

std::string uidOf(const json& p) { return p["metadata"].value("uid", ""); }
std::string nodeOf(const json& p) { return p["spec"].value("nodeName", ""); }
bool terminating(const json& p) { return p["metadata"].contains("deletionTimestamp"); }

// The Event a move leaves on the pod it evicts.
json moveEvent(const json& pod, const advise::Plan& plan, const advise::Move& m) {
  const std::string ns = m.namespace_;
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"generateName", m.name + "."}, {"namespace", ns}}},
          {"involvedObject",
           {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"namespace", ns},
            {"name", m.name},
            {"uid", uidOf(pod)}}},
          {"reason", "Descheduled"},
          {"message", "pod evicted by ksched advise (" + plan.goal + "): " + m.why +
                          "; planned to land on " + m.to},
          {"type", "Normal"},
          {"source", {{"component", "ksched-advise"}}},
          {"reportingComponent", "ksched-advise"},
          {"count", 1}};
}

class Mover {
 public:
  Mover(client::RestClient& rest, const advise::Plan& plan, const ApplyOptions& o,
        const std::function<void(const std::string&)>& say)
      : rest_(rest), plan_(plan), o_(o), say_(say) {
    policy_ = rest_.pickVersion({"policy/v1", "policy/v1beta1"}).value_or("policy/v1beta1");
  }

  void cordon() {
    // The nodes already empty only while the moves run (a node just added for pending pods is
    // empty too): those that were schedulable are uncordoned at the end.
    for (const auto& node : plan_.alreadyFree) {
      if (rest_.get("/api/v1/nodes/" + node)["spec"].value("unschedulable", false)) continue;
      setUnschedulable(node, true);
      meanwhile_.push_back(node);
    }
    std::vector<std::string> nodes = plan_.cordon;
    nodes.insert(nodes.end(), plan_.uncordonAfter.begin(), plan_.uncordonAfter.end());
    for (const auto& node : nodes) setUnschedulable(node, true);
  }

  // One move; false when the run stops (result_.stopped says why).
  bool move(const advise::Move& m) {
    const std::string key = m.namespace_ + "/" + m.name;
    json pod;
    try {
      pod = rest_.get(podPath(m.namespace_, m.name));
    } catch (const client::ApiError& e) {
      if (!e.isNotFound()) throw;
      return stop(key + " is gone: the cluster changed", true);
    }
    if (nodeOf(pod) != m.from || terminating(pod)) {
      return stop(key + " is no longer running on " + m.from + ": the cluster changed", true);
    }
    const std::string owner = controllerUid(pod);
    std::set<std::string> before;
    for (const auto& p : podsOf(rest_, m.namespace_, owner)) before.insert(uidOf(p));
    if (!evict(pod, m)) return false;
    try {
      rest_.create("/api/v1/namespaces/" + m.namespace_ + "/events", moveEvent(pod, plan_, m));
    } catch (const client::ApiError& e) {
      say_("warning: no Event on " + key + ": " + e.what());
    }
    MoveOutcome out{key, m.to, "", ""};
    if (!awaitReplacement(pod, owner, before, out)) return false;
    say_("moved " + key + ": " + m.from + " -> " + (out.landed.empty() ? "?" : out.landed) +
         (out.landed == m.to ? "" : " (planned " + m.to + ")"));
    result_.done.push_back(std::move(out));
    return true;
  }

  // After the last move: --defragment's nodes take pods again. The nodes cordoned only while
  // the moves ran are uncordoned however the run ended.
  void uncordon(bool done) {
    if (done) {
      for (const auto& node : plan_.uncordonAfter) setUnschedulable(node, false);
    }
    for (const auto& node : meanwhile_) setUnschedulable(node, false);
  }

  ApplyResult result() { return std::move(result_); }

 private:
  void setUnschedulable(const std::string& node, bool on) {
    rest_.patch("/api/v1/nodes/" + node, {{"spec", {{"unschedulable", on}}}});
    say_((on ? "cordoned " : "uncordoned ") + node);
  }

  bool stop(std::string why, bool changed) {
    result_.stopped = std::move(why);
    result_.changed = changed;
    return false;
  }

  // POSTs the Eviction, waiting out refusals (429: a budget allows no disruption now).
  bool evict(const json& pod, const advise::Move& m) {
    json body = {{"apiVersion", policy_},
                 {"kind", "Eviction"},
                 {"metadata", {{"name", m.name}, {"namespace", m.namespace_}}},
                 {"deleteOptions", {{"preconditions", {{"uid", uidOf(pod)}}}}}};
    if (o_.gracePeriodSeconds) body["deleteOptions"]["gracePeriodSeconds"] = *o_.gracePeriodSeconds;
    const auto deadline = Clock::now() + o_.timeout;
    auto wait = std::chrono::milliseconds(500);
    for (;;) {
      try {
        rest_.post(podPath(m.namespace_, m.name) + "/eviction", body);
        return true;
      } catch (const client::ApiError& e) {
        const std::string key = m.namespace_ + "/" + m.name;
        if (e.isNotFound() || e.isConflict())
          return stop(key + " is gone: the cluster changed", true);
        if (e.code() != 429) throw;
        if (Clock::now() + wait > deadline) {
          return stop("eviction of " + key + " refused for " + std::to_string(o_.timeout.count()) +
                          " s: " + e.message(),
                      false);
        }
        say_("waiting: eviction of " + key + " refused: " + e.message());
        std::this_thread::sleep_for(wait);
        wait = std::min(wait * 2, std::chrono::milliseconds(10000));
      }
    }
  }

  // Waits until the evicted pod is gone and no pod of its controller waits to be bound; the
  // replacement is a pod of the controller not there before.
  bool awaitReplacement(const json& pod, const std::string& owner,
                        const std::set<std::string>& before, MoveOutcome& out) {
    const auto deadline = Clock::now() + o_.timeout;
    const std::string ns = pod["metadata"].value("namespace", "");
    const std::string name = pod["metadata"].value("name", "");
    for (;;) {
      bool gone = false;
      try {
        gone = uidOf(rest_.get(podPath(ns, name))) != uidOf(pod);
      } catch (const client::ApiError& e) {
        if (!e.isNotFound()) throw;
        gone = true;
      }
      bool settled = gone;
      if (gone && !owner.empty()) {
        bool replaced = false;
        for (const auto& p : podsOf(rest_, ns, owner)) {
          if (terminating(p)) continue;
          if (nodeOf(p).empty()) settled = false;
          if (!before.contains(uidOf(p)) && !nodeOf(p).empty()) {
            out.landed = nodeOf(p);
            out.replacement = p["metadata"].value("name", "");
            replaced = true;
          }
        }
        settled = settled && replaced;
      }
      if (settled) {
        std::this_thread::sleep_for(o_.interval);
        return true;
      }
      if (Clock::now() >= deadline) {
        return stop(ns + "/" + name + (gone ? ": no replacement was bound" : ": still not gone") +
                        " after " + std::to_string(o_.timeout.count()) + " s",
                    false);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  client::RestClient& rest_;
  const advise::Plan& plan_;
  const ApplyOptions& o_;
  const std::function<void(const std::string&)>& say_;
  std::string policy_;
  std::vector<std::string> meanwhile_;  // empty nodes cordoned while the moves run
  ApplyResult result_;
};

}  // namespace advise_apply

ApplyResult applyPlan(client::RestClient& rest, const advise::Plan& plan, const ApplyOptions& o,
                      const std::function<void(const std::string&)>& say) {
  advise_apply::Mover mover(rest, plan, o, say);
  mover.cordon();
  bool done = true;
  for (const auto& m : plan.moves) {
    if (!mover.move(m)) {
      done = false;
      break;
    }
  }
  mover.uncordon(done);
  return mover.result();
}

}  // namespace ksched::app
