#include "plugins/pod_topology_spread/args.h"

#include <nlohmann/json.hpp>

#include <ksched/api/meta.h>
#include <ksched/api/selectors.h>
#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

using helper::childPath;
using helper::FieldError;
using helper::indexPath;

api::TopologySpreadConstraint decodeConstraint(const nlohmann::json& j, const std::string& path) {
  helper::expectObject(j, path,
                       {"maxSkew", "topologyKey", "whenUnsatisfiable", "labelSelector",
                        "minDomains", "nodeAffinityPolicy", "nodeTaintsPolicy", "matchLabelKeys"});
  api::TopologySpreadConstraint c;
  helper::readInt32(j, "maxSkew", path, c.maxSkew);
  helper::readString(j, "topologyKey", path, c.topologyKey);
  helper::readString(j, "whenUnsatisfiable", path, c.whenUnsatisfiable);
  if (const nlohmann::json* sel = helper::member(j, "labelSelector")) {
    try {
      c.labelSelector = sel->get<api::LabelSelector>();
    } catch (const api::DecodeError& e) {
      throw PluginArgsError(childPath(path, "labelSelector") + ": " + e.what());
    } catch (const nlohmann::json::exception& e) {
      throw PluginArgsError(childPath(path, "labelSelector") + ": " + e.what());
    }
  }
  int32_t minDomains = 0;
  if (helper::readInt32(j, "minDomains", path, minDomains)) c.minDomains = minDomains;
  std::string policy;
  if (helper::readString(j, "nodeAffinityPolicy", path, policy)) c.nodeAffinityPolicy = policy;
  if (helper::readString(j, "nodeTaintsPolicy", path, policy)) c.nodeTaintsPolicy = policy;
  helper::readStringList(j, "matchLabelKeys", path, c.matchLabelKeys);
  return c;
}

}  // namespace

PodTopologySpreadArgs PodTopologySpreadArgs::fromJson(const nlohmann::json& j) {
  PodTopologySpreadArgs args;
  if (j.is_null()) return args;
  helper::expectObject(
      j, "", {helper::kApiVersionKey, helper::kKindKey, "defaultConstraints", "defaultingType"});
  if (const nlohmann::json* list = helper::member(j, "defaultConstraints")) {
    if (!list->is_array()) {
      throw PluginArgsError(std::string("defaultConstraints: expected an array, got ") +
                            list->type_name());
    }
    for (size_t i = 0; i < list->size(); ++i) {
      args.defaultConstraints.push_back(
          decodeConstraint((*list)[i], indexPath("defaultConstraints", i)));
    }
  }
  std::string type;
  helper::readString(j, "defaultingType", "", type);
  // v1 defaulting: an empty defaultingType is System.
  if (!type.empty()) args.defaultingType = type;
  return args;
}

std::vector<FieldError> PodTopologySpreadArgs::validationErrors() const {
  std::vector<FieldError> errs;
  if (defaultingType != kSystemDefaulting && defaultingType != kListDefaulting) {
    errs.push_back(
        helper::notSupported("defaultingType", defaultingType,
                             {std::string(kSystemDefaulting), std::string(kListDefaulting)}));
  } else if (defaultingType == kSystemDefaulting && !defaultConstraints.empty()) {
    errs.push_back(helper::invalid("defaultingType", defaultingType,
                                   "when .defaultConstraints are not empty"));
  }
  for (size_t i = 0; i < defaultConstraints.size(); ++i) {
    const api::TopologySpreadConstraint& c = defaultConstraints[i];
    const std::string p = indexPath("defaultConstraints", i);
    if (c.maxSkew <= 0) {
      errs.push_back(
          helper::invalid(childPath(p, "maxSkew"), c.maxSkew, "not in valid range (0, inf)"));
    }
    const std::string keyPath = childPath(p, "topologyKey");
    if (c.topologyKey.empty()) {
      errs.push_back(helper::required(keyPath, "can not be empty"));
    } else {
      for (FieldError& e : helper::validateLabelName(c.topologyKey, keyPath)) {
        errs.push_back(std::move(e));
      }
    }
    const std::string whenPath = childPath(p, "whenUnsatisfiable");
    if (c.whenUnsatisfiable.empty()) {
      errs.push_back(helper::required(whenPath, "can not be empty"));
    } else if (c.whenUnsatisfiable != api::kDoNotSchedule &&
               c.whenUnsatisfiable != api::kScheduleAnyway) {
      errs.push_back(helper::notSupported(
          whenPath, c.whenUnsatisfiable,
          {std::string(api::kDoNotSchedule), std::string(api::kScheduleAnyway)}));
    }
    if (c.labelSelector) {
      errs.push_back({childPath(p, "labelSelector"),
                      "Forbidden: constraint must not define a selector, as they deduced for "
                      "each pod"});
    }
    for (size_t k = 0; k < i; ++k) {
      const api::TopologySpreadConstraint& other = defaultConstraints[k];
      if (c.topologyKey == other.topologyKey && c.whenUnsatisfiable == other.whenUnsatisfiable) {
        errs.push_back({p, "Duplicate value: " + helper::quote("{" + c.topologyKey + ", " +
                                                               c.whenUnsatisfiable + "}")});
        break;
      }
    }
  }
  return errs;
}

void PodTopologySpreadArgs::validate() const { helper::throwIfAny(validationErrors()); }

}  // namespace ksched::plugins
