#include "plugins/node_resources_fit/fit_args.h"

#include <nlohmann/json.hpp>

#include <ksched/api/resources.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/shape_score.h>
#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

using helper::childPath;
using helper::indexPath;

const nlohmann::json& arrayAt(const nlohmann::json& j, std::string_view key,
                              const std::string& path) {
  const nlohmann::json* v = helper::member(j, key);
  static const nlohmann::json kEmpty = nlohmann::json::array();
  if (v == nullptr) return kEmpty;
  if (!v->is_array()) {
    throw PluginArgsError(childPath(path, key) + ": expected an array, got " + v->type_name());
  }
  return *v;
}

ScoringStrategy decodeStrategy(const nlohmann::json& j, const std::string& path) {
  helper::expectObject(j, path, {"type", "resources", "requestedToCapacityRatio"});
  ScoringStrategy s;
  s.type.clear();
  helper::readString(j, "type", path, s.type);

  s.resources.clear();
  const std::string resPath = childPath(path, "resources");
  const nlohmann::json& resources = arrayAt(j, "resources", path);
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string p = indexPath(resPath, i);
    helper::expectObject(resources[i], p, {"name", "weight"});
    ResourceSpec r;
    r.weight = 0;
    helper::readString(resources[i], "name", p, r.name);
    helper::readInt64(resources[i], "weight", p, r.weight);
    s.resources.push_back(std::move(r));
  }
  if (s.resources.empty()) s.resources = defaultScoringResources();
  for (ResourceSpec& r : s.resources) {
    if (r.weight == 0) r.weight = 1;
  }

  if (const nlohmann::json* rtcr = helper::member(j, "requestedToCapacityRatio")) {
    const std::string rtcrPath = childPath(path, "requestedToCapacityRatio");
    helper::expectObject(*rtcr, rtcrPath, {"shape"});
    RequestedToCapacityRatioParam param;
    param.shape =
        helper::readShape(arrayAt(*rtcr, "shape", rtcrPath), childPath(rtcrPath, "shape"));
    s.requestedToCapacityRatio = std::move(param);
  }
  return s;
}

}  // namespace

NodeResourcesFitArgs NodeResourcesFitArgs::fromJson(const nlohmann::json& j) {
  NodeResourcesFitArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "ignoredResources",
                        "ignoredResourceGroups", "scoringStrategy"});
  helper::readStringList(j, "ignoredResources", "", args.ignoredResources);
  helper::readStringList(j, "ignoredResourceGroups", "", args.ignoredResourceGroups);
  if (const nlohmann::json* s = helper::member(j, "scoringStrategy")) {
    args.scoringStrategy = decodeStrategy(*s, "scoringStrategy");
  }
  return args;
}

std::vector<helper::FieldError> NodeResourcesFitArgs::validationErrors() const {
  std::vector<helper::FieldError> errs;
  auto append = [&errs](std::vector<helper::FieldError> more) {
    for (auto& e : more) errs.push_back(std::move(e));
  };
  for (size_t i = 0; i < ignoredResources.size(); ++i) {
    append(helper::validateLabelName(ignoredResources[i], indexPath("ignoredResources", i)));
  }
  for (size_t i = 0; i < ignoredResourceGroups.size(); ++i) {
    const std::string path = indexPath("ignoredResourceGroups", i);
    const std::string& group = ignoredResourceGroups[i];
    if (group.find('/') != std::string::npos) {
      errs.push_back(helper::invalid(path, group, "resource group name can't contain '/'"));
    }
    append(helper::validateLabelName(group, path));
  }

  const ScoringStrategy& s = scoringStrategy;
  if (s.type != kLeastAllocated && s.type != kMostAllocated &&
      s.type != kRequestedToCapacityRatio) {
    errs.push_back(helper::notSupported("scoringStrategy.type", s.type,
                                        {std::string(kLeastAllocated), std::string(kMostAllocated),
                                         std::string(kRequestedToCapacityRatio)}));
  }
  for (size_t i = 0; i < s.resources.size(); ++i) {
    const ResourceSpec& r = s.resources[i];
    if (r.weight <= 0 || r.weight > 100) {
      errs.push_back(
          helper::invalid(childPath(indexPath("scoringStrategy.resources", i), "weight"), r.weight,
                          "resource weight of " + r.name + " not in valid range (0, 100]"));
    }
  }
  // Upstream reports shape errors under "scoringStrategy.shape".
  if (s.requestedToCapacityRatio) {
    append(
        helper::validateFunctionShape(s.requestedToCapacityRatio->shape, "scoringStrategy.shape"));
  } else if (s.type == kRequestedToCapacityRatio) {
    append(helper::validateFunctionShape({}, "scoringStrategy.shape"));
  }
  return errs;
}

void NodeResourcesFitArgs::validate() const { helper::throwIfAny(validationErrors()); }

}  // namespace ksched::plugins
