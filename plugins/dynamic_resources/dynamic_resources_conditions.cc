// PreBind's wait for binding conditions (DRADeviceBindingConditions with
// DRAResourceClaimDeviceStatus): the binding parks until a claim of the pod changes or the
// binding timeout passes, instead of polling on a binder thread as upstream does.
#include <chrono>
#include <optional>
#include <string>

#include "plugins/dynamic_resources/binding_conditions.h"
#include "plugins/dynamic_resources/dynamic_resources_cycle.h"

namespace ksched::plugins {

Status DynamicResources::checkBindingConditions(const Cycle& cycle, const api::Pod& pod,
                                                std::optional<Resume> why) {
  Cycle::Inner& in = *cycle.in;
  const auto now = std::chrono::system_clock::now();
  bool pending = false;
  // Devices whose binding failed or timed out are not tried again for a while: by the claim, and
  // by the pod for the claim of its extended resources (Unreserve deletes that one).
  auto giveUp = [&](const api::ResourceClaim& claim, bool extended) {
    if (!claim.status.allocation) return;
    const auto until =
        std::chrono::steady_clock::now() +
        std::chrono::duration_cast<std::chrono::steady_clock::duration>(bindingTimeout_);
    state_->avoid(claim.metadata.uid, *claim.status.allocation, until);
    if (extended) state_->avoid(dra::podAvoidKey(pod), *claim.status.allocation, until);
  };
  auto check = [&](dra::ClaimEntryPtr& e, bool extended) -> Status {
    // The claim as the watch (or our own write) has it now.
    const api::ObjectMeta& m = e->claim->metadata;
    if (dra::ClaimEntryPtr latest = state_->claim(m.namespace_, m.name)) {
      if (latest->claim->metadata.uid != m.uid) {
        return Status::error("claim " + m.name + " got deleted in the meantime");
      }
      e = std::move(latest);
    }
    const dra::BindingState st = dra::bindingState(*e->claim);
    if (st.code == dra::BindingState::Code::kFailed) {
      giveUp(*e->claim, extended);
      return Status::error(st.message);
    }
    if (st.code == dra::BindingState::Code::kPending) {
      if (dra::bindingTimedOut(*e->claim, bindingTimeout_, now) || why == Resume::kDeadline) {
        giveUp(*e->claim, extended);
        if (why == Resume::kDeadline) return Status::error("device binding timeout");
        return Status::error("claim " + e->claim->metadata.name + " binding timeout");
      }
      pending = true;
    }
    return {};
  };
  for (auto& e : in.claims) {
    if (Status s = check(e, false); !s.ok()) return s;
  }
  if (in.created) {
    if (Status s = check(in.created, true); !s.ok()) return s;
  }
  if (!pending) return {};
  // Nothing reports device status in a simulated cluster: the driver is taken to attach the
  // devices (a failure condition the files carry still fails the binding, above).
  if (why == Resume::kDecide) return {};
  return Status::wait("waiting for binding conditions");
}

PreBindPlugin::Wait DynamicResources::preBindWait(const CycleState& state,
                                                  const api::Pod& /*pod*/) const {
  Wait wait;
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr) return wait;
  wait.deadline = cycle->in->bindingDeadline;
  // The pod's claims, by uid: only their changes can end the wait.
  auto uids = std::make_shared<std::vector<std::string>>();
  for (const auto& e : cycle->in->claims) uids->push_back(e->claim->metadata.uid);
  if (cycle->in->created) uids->push_back(cycle->in->created->claim->metadata.uid);
  wait.events.emplace_back(
      ClusterEvent{EventResource::kResourceClaim, kUpdate | kDelete, {}},
      [uids](const api::Pod& /*pod*/, const EventObject& oldObj, const EventObject& newObj) {
        for (const EventObject* o : {&newObj, &oldObj}) {
          const auto* claim = std::get_if<std::shared_ptr<const api::ResourceClaim>>(o);
          if (claim == nullptr || !*claim) continue;
          for (const auto& uid : *uids) {
            if ((*claim)->metadata.uid == uid) return QueueingHint::kQueue;
          }
        }
        return QueueingHint::kSkip;
      });
  return wait;
}

Status DynamicResources::preBindResume(CycleState& state, const api::Pod& pod,
                                       const std::string& /*nodeName*/, Resume why) {
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr) return {};
  return checkBindingConditions(*cycle, pod, why);
}

}  // namespace ksched::plugins
