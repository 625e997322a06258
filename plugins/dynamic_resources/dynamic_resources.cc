#include "plugins/dynamic_resources/dynamic_resources.h"

#include <optional>
#include <string>

#include <ksched/api/features.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/field_error.h>
#include <ksched/preemption_settling.h>

#include "plugins/dynamic_resources/dynamic_resources_cycle.h"
#include "plugins/dynamic_resources/extended_resources.h"
#include "plugins/helper/device_class_resolver.h"
#include "util/duration.h"

namespace ksched::plugins {

namespace {

using dra::ClaimEntryPtr;

bool ownedBy(const api::ResourceClaim& claim, const api::Pod& pod) {
  if (claim.metadata.namespace_ != pod.metadata.namespace_) return false;
  for (const auto& o : claim.metadata.ownerReferences) {
    if (o.controller) return o.uid == pod.metadata.uid;
  }
  return false;
}

}  // namespace

DynamicResources::DynamicResources(Handle& handle, std::shared_ptr<dra::DraState> state,
                                   const DynamicResourcesArgs& args,
                                   std::shared_ptr<dra::PodGroupIndex> podGroups)
    : handle_(handle),
      state_(std::move(state)),
      celCache_(cel::Features{.listTypeAttributes = handle.features().enabled(
                                  features::Feature::kDRAListTypeAttributes)}),
      features_(dra::Features::fromGates(handle.features())),
      extendedResources_(handle.features().enabled(features::Feature::kDRAExtendedResource)),
      preemption_(handle.features().enabled(features::Feature::kDRAPreemption)),
      filterTimeout_(handle.features().enabled(features::Feature::kDRASchedulerFilterTimeout)
                         ? args.filterTimeout
                         : std::chrono::nanoseconds(0)),
      bindingTimeout_(args.bindingTimeout),
      scoring_(args.deviceScoring) {
  if (handle.features().enabled(features::Feature::kDRAWorkloadResourceClaims) &&
      handle.features().enabled(features::Feature::kGenericWorkload)) {
    podGroups_ = podGroups ? std::move(podGroups) : std::make_shared<dra::PodGroupIndex>();
  }
}

DynamicResourcesArgs DynamicResourcesArgs::fromJson(const nlohmann::json& j,
                                                    const features::Gates& gates) {
  DynamicResourcesArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "filterTimeout", "bindingTimeout",
                        "deviceScoring"});
  std::vector<helper::FieldError> errs;
  auto duration = [&](std::string_view key, std::chrono::nanoseconds& out) -> bool {
    std::string text;
    if (!helper::readString(j, key, "", text)) return false;
    const auto d = util::parseDuration(text);
    if (!d) {
      throw PluginArgsError(std::string(key) + ": invalid duration " + helper::quote(text));
    }
    out = *d;
    return true;
  };
  if (duration("filterTimeout", args.filterTimeout)) {
    if (!gates.enabled(features::Feature::kDRASchedulerFilterTimeout)) {
      errs.push_back(
          {"filterTimeout", "Forbidden: DRASchedulingFilterTimeout feature gate is disabled"});
    } else if (args.filterTimeout.count() < 0) {
      errs.push_back(helper::invalid("filterTimeout", util::formatDuration(args.filterTimeout),
                                     "must be zero or positive"));
    }
  }
  if (duration("bindingTimeout", args.bindingTimeout)) {
    if (!gates.enabled(features::Feature::kDRADeviceBindingConditions) ||
        !gates.enabled(features::Feature::kDRAResourceClaimDeviceStatus)) {
      errs.push_back({"bindingTimeout",
                      "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                      "feature gate is disabled"});
    } else if (args.bindingTimeout < std::chrono::seconds(1)) {
      errs.push_back(helper::invalid("bindingTimeout", util::formatDuration(args.bindingTimeout),
                                     "must be at least 1 second"));
    }
  }
  helper::throwIfAny(errs);
  if (const nlohmann::json* scoring = helper::member(j, "deviceScoring")) {
    args.deviceScoring = dra::decodeDeviceScoring(*scoring, gates);
  }
  return args;
}

DynamicResources::PodClaims DynamicResources::podClaims(const api::Pod& pod) const {
  PodClaims out;
  // Without its PodGroup known, every entry is the pod's own (upstream's, with no group).
  const std::shared_ptr<const api::PodGroup> group =
      podGroups_ ? podGroups_->of(pod) : std::shared_ptr<const api::PodGroup>();
  for (const auto& pc : pod.spec.resourceClaims) {
    std::optional<std::string> name;
    bool mustCheckOwner = false;
    const api::PodGroupResourceClaim* onGroup = group ? dra::groupEntryFor(*group, pc) : nullptr;
    if (onGroup != nullptr) {
      // The group's claim: named, or generated for the group (its status names it).
      if (onGroup->resourceClaimName) {
        name = onGroup->resourceClaimName;
      } else {
        bool found = false;
        for (const auto& s : group->status.resourceClaimStatuses) {
          if (s.name == onGroup->name) {
            found = true;
            name = s.resourceClaimName;
            mustCheckOwner = true;
          }
        }
        if (!found) {
          out.error = "PodGroup " + group->metadata.key() + ": ResourceClaim not created yet";
          return out;
        }
      }
    } else if (pc.resourceClaimName) {
      name = pc.resourceClaimName;
    } else if (pc.resourceClaimTemplateName) {
      bool found = false;
      for (const auto& s : pod.status.resourceClaimStatuses) {
        if (s.name == pc.name) {
          found = true;
          name = s.resourceClaimName;
          mustCheckOwner = true;
        }
      }
      if (!found) {
        out.error = "pod \"" + pod.metadata.key() + "\": ResourceClaim not created yet";
        return out;
      }
    } else {
      out.error = "pod \"" + pod.metadata.key() + "\", spec.resourceClaim \"" + pc.name +
                  "\": none of the supported fields are set";
      return out;
    }
    if (!name) continue;  // no claim was needed
    ClaimEntryPtr e = state_->claim(pod.metadata.namespace_, *name);
    if (!e) {
      out.error = "could not find ResourceClaim \"" + pod.metadata.namespace_ + "/" + *name + "\"";
      return out;
    }
    if (e->claim->metadata.deletionTimestamp) {
      out.error = "resourceclaim \"" + *name + "\" is being deleted";
      return out;
    }
    if (onGroup != nullptr && mustCheckOwner && !dra::ownedByGroup(*e->claim, *group)) {
      out.error = "ResourceClaim " + e->claim->metadata.key() + " was not created for PodGroup " +
                  group->metadata.key() + " (PodGroup is not owner)";
      return out;
    }
    if (onGroup == nullptr && mustCheckOwner && !ownedBy(*e->claim, pod)) {
      out.error = "ResourceClaim " + e->claim->metadata.key() + " was not created for pod " +
                  pod.metadata.key() + " (pod is not owner)";
      return out;
    }
    out.claims.push_back(std::move(e));
    out.forGroup.push_back(onGroup != nullptr ? 1 : 0);
    if (onGroup != nullptr) out.podGroup = group;
  }
  return out;
}

Status DynamicResources::preEnqueue(const api::Pod& pod) {
  if (pod.spec.resourceClaims.empty()) return {};
  auto pc = podClaims(pod);
  if (!pc.error.empty()) return Status::unresolvable(std::move(pc.error));
  return {};
}

std::vector<ClusterEventWithHint> DynamicResources::eventsToRegister() const {
  auto claimHint = [this](const api::Pod& pod, const EventObject& oldObj,
                          const EventObject& newObj) {
    const api::ResourceClaim* before = as<api::ResourceClaim>(oldObj);
    const api::ResourceClaim* after = as<api::ResourceClaim>(newObj);
    if (after == nullptr) {
      // Deleted: its devices are free if it had any; the pod's own extended-resources claim
      // from an earlier attempt was what held it back.
      if (before == nullptr) return QueueingHint::kSkip;
      if (before->status.allocation) return QueueingHint::kQueue;
      for (const auto& o : before->metadata.ownerReferences) {
        if (o.controller && o.uid == pod.metadata.uid &&
            before->metadata.annotations.contains(dra::kExtendedResourceClaimAnnotation)) {
          return QueueingHint::kQueue;
        }
      }
      return QueueingHint::kSkip;
    }
    auto pc = podClaims(pod);
    if (!pc.error.empty()) return QueueingHint::kSkip;
    if (before != nullptr && before->status.allocation && !after->status.allocation) {
      return QueueingHint::kQueue;  // deallocated: devices free for anyone
    }
    bool uses = false;
    for (const auto& e : pc.claims) uses = uses || e->claim->metadata.uid == after->metadata.uid;
    if (!uses) return QueueingHint::kSkip;
    if (before == nullptr) return QueueingHint::kQueue;
    return before->status == after->status ? QueueingHint::kSkip : QueueingHint::kQueue;
  };
  auto podHint = [this](const api::Pod& pod, const EventObject& /*oldObj*/,
                        const EventObject& newObj) {
    const api::Pod* modified = as<api::Pod>(newObj);
    if (modified == nullptr || modified->metadata.uid != pod.metadata.uid) {
      return QueueingHint::kSkip;
    }
    return podClaims(*modified).error.empty() ? QueueingHint::kQueue : QueueingHint::kSkip;
  };
  std::vector<ClusterEventWithHint> out = {
      {EventResource::kNode, kAdd | kUpdateNodeLabel},
      {EventResource::kResourceClaim, kAdd | kUpdate | kDelete, claimHint},
      {EventResource::kPod, kUpdatePodGeneratedResourceClaim, podHint},
      {EventResource::kDeviceClass, kAdd | kUpdate},
      {EventResource::kResourceSlice, kAdd | kUpdate},
  };
  if (podGroups_) {
    // The group's claims named or generated: its pods waiting for them may go on.
    auto groupHint = [this](const api::Pod& pod, const EventObject& oldObj,
                            const EventObject& newObj) {
      const api::PodGroup* after = as<api::PodGroup>(newObj);
      const std::string* group = pod.spec.podGroupName();
      if (after == nullptr || group == nullptr || pod.spec.resourceClaims.empty() ||
          after->metadata.namespace_ != pod.metadata.namespace_ || after->metadata.name != *group) {
        return QueueingHint::kSkip;
      }
      const api::PodGroup* before = as<api::PodGroup>(oldObj);
      if (before != nullptr && !dra::groupClaimsChanged(*before, *after)) {
        return QueueingHint::kSkip;
      }
      return podClaims(pod).error.empty() ? QueueingHint::kQueue : QueueingHint::kSkip;
    };
    out.push_back({EventResource::kPodGroup, kAdd | kUpdate, groupHint});
  }
  return out;
}

PluginFactory dynamicResourcesFactory() {
  return makePluginFactory<DynamicResources>(
      [](const nlohmann::json& args, const features::Gates& gates) {
        return DynamicResourcesArgs::fromJson(args, gates);
      },
      [](const DynamicResourcesArgs& args, Handle& h) {
        std::shared_ptr<PreemptionSettling> settling;
        if (h.features().enabled(features::Feature::kDRAPreemption)) {
          settling = PreemptionSettling::of(h);
        }
        auto state = h.shared<dra::DraState>(names::kDynamicResources, [&h, &settling] {
          auto made = std::make_shared<dra::DraState>(h);
          // Once per process, with the state: its nominations outlive any one plugin.
          if (settling) dra::joinPreemptionSettling(*settling, made);
          return made;
        });
        if (h.features().enabled(features::Feature::kDRAExtendedResource)) {
          helper::DeviceClassResolver::of(h)->set([state](std::string_view resource) {
            return dra::isDraExtendedResourceName(resource) &&
                   state->classForExtendedResource(resource) != nullptr;
          });
        }
        std::shared_ptr<dra::PodGroupIndex> podGroups;
        if (h.features().enabled(features::Feature::kDRAWorkloadResourceClaims) &&
            h.features().enabled(features::Feature::kGenericWorkload)) {
          podGroups = h.shared<dra::PodGroupIndex>(
              std::string(names::kDynamicResources) + "/podgroups",
              [&h] { return std::make_shared<dra::PodGroupIndex>(h); });
        }
        return std::make_unique<DynamicResources>(h, std::move(state), args, std::move(podGroups));
      });
}

bool DynamicResources::signPod(const api::Pod& pod) const {
  if (extendedResources_ && dra::requestsDraExtendedResourceName(pod)) return false;
  if (pod.spec.resourceClaims.empty()) return true;
  // Pods of one template: each claim generated for the pod and not allocated yet, so that the
  // pods of a batch ask the same of every node (api::sameSchedulingInputs leaves the generated
  // claims' names out). The hinted node is filtered for the pod's own claims anyway.
  if (podGroups_ && podGroups_->of(pod)) return false;
  for (const auto& pc : pod.spec.resourceClaims) {
    if (!pc.resourceClaimTemplateName) return false;
    const api::PodResourceClaimStatus* generated = nullptr;
    for (const auto& s : pod.status.resourceClaimStatuses) {
      if (s.name == pc.name) generated = &s;
    }
    if (generated == nullptr || !generated->resourceClaimName) return false;
    const dra::ClaimEntryPtr e =
        state_->claim(pod.metadata.namespace_, *generated->resourceClaimName);
    if (!e || e->claim->status.allocation || !e->claim->status.reservedFor.empty() ||
        state_->hasPendingAllocation(e->claim->metadata.uid)) {
      return false;
    }
  }
  return true;
}

}  // namespace ksched::plugins
