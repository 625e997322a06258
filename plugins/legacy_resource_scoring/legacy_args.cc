#include "plugins/legacy_resource_scoring/legacy_args.h"

#include <nlohmann/json.hpp>
#include <string>

#include <ksched/helper/args_json.h>
#include <ksched/registry.h>

namespace ksched::plugins {
namespace {

using helper::childPath;
using helper::indexPath;

const nlohmann::json* arrayAt(const nlohmann::json& j, std::string_view key) {
  const nlohmann::json* v = helper::member(j, key);
  if (v != nullptr && !v->is_array()) {
    throw PluginArgsError(std::string(key) + ": expected an array, got " + v->type_name());
  }
  return v;
}

std::vector<ResourceSpec> decodeResources(const nlohmann::json& j) {
  std::vector<ResourceSpec> out;
  if (const nlohmann::json* resources = arrayAt(j, "resources")) {
    for (size_t i = 0; i < resources->size(); ++i) {
      const std::string p = indexPath("resources", i);
      helper::expectObject((*resources)[i], p, {"name", "weight"});
      ResourceSpec r;
      r.weight = 0;
      helper::readString((*resources)[i], "name", p, r.name);
      helper::readInt64((*resources)[i], "weight", p, r.weight);
      out.push_back(std::move(r));
    }
  }
  if (out.empty()) out = defaultScoringResources();
  return out;
}

helper::FieldError weightError(size_t i, std::string body) {
  return {childPath(indexPath("resources", i), "weight"), std::move(body)};
}

}  // namespace

LegacyAllocatedArgs LegacyAllocatedArgs::fromJson(const nlohmann::json& j) {
  LegacyAllocatedArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "", {helper::kApiVersionKey, helper::kKindKey, "resources"});
  args.resources = decodeResources(j);
  return args;
}

std::vector<helper::FieldError> LegacyAllocatedArgs::validationErrors() const {
  std::vector<helper::FieldError> errs;
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceSpec& r = resources[i];
    if (r.weight <= 0) {
      errs.push_back(weightError(i, "resource Weight of " + r.name +
                                        " should be a positive value, got " +
                                        std::to_string(r.weight)));
    } else if (r.weight > 100) {
      errs.push_back(weightError(i, "resource Weight of " + r.name +
                                        " should be less than 100, got " +
                                        std::to_string(r.weight)));
    }
  }
  return errs;
}

void LegacyAllocatedArgs::validate() const { helper::throwIfAny(validationErrors()); }

RequestedToCapacityRatioArgs RequestedToCapacityRatioArgs::fromJson(const nlohmann::json& j) {
  RequestedToCapacityRatioArgs args;
  if (j.is_null()) return args;
  helper::expectObject(j, "", {helper::kApiVersionKey, helper::kKindKey, "shape", "resources"});
  if (const nlohmann::json* shape = arrayAt(j, "shape")) {
    for (size_t i = 0; i < shape->size(); ++i) {
      const std::string p = indexPath("shape", i);
      helper::expectObject((*shape)[i], p, {"utilization", "score"});
      UtilizationShapePoint point;
      helper::readInt32((*shape)[i], "utilization", p, point.utilization);
      helper::readInt32((*shape)[i], "score", p, point.score);
      args.shape.push_back(point);
    }
  }
  args.resources = decodeResources(j);
  return args;
}

std::vector<helper::FieldError> RequestedToCapacityRatioArgs::validationErrors() const {
  constexpr int32_t kMinUtilization = 0;
  constexpr int32_t kMaxUtilization = 100;
  constexpr int32_t kMinScore = 0;
  constexpr int32_t kMaxScore = kMaxCustomPriorityScore;
  std::vector<helper::FieldError> errs;
  auto at = [](size_t i, std::string_view field) {
    return childPath(indexPath("shape", i), field);
  };
  if (shape.empty()) {
    errs.push_back({"shape", "at least one point must be specified"});
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      errs.push_back({at(i, "utilization"),
                      "utilization values must be sorted. Utilization[" + std::to_string(i - 1) +
                          "]==" + std::to_string(shape[i - 1].utilization) + " >= Utilization[" +
                          std::to_string(i) + "]==" + std::to_string(shape[i].utilization)});
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const std::string index = "[" + std::to_string(i) + "]==";
    const UtilizationShapePoint& p = shape[i];
    if (p.utilization < kMinUtilization) {
      errs.push_back({at(i, "utilization"), "utilization values must not be less than " +
                                                std::to_string(kMinUtilization) + ". Utilization" +
                                                index + std::to_string(p.utilization)});
    }
    if (p.utilization > kMaxUtilization) {
      errs.push_back({at(i, "utilization"), "utilization values must not be greater than " +
                                                std::to_string(kMaxUtilization) + ". Utilization" +
                                                index + std::to_string(p.utilization)});
    }
    if (p.score < kMinScore) {
      errs.push_back({at(i, "score"), "score values must not be less than " +
                                          std::to_string(kMinScore) + ". Score" + index +
                                          std::to_string(p.score)});
    }
    if (p.score > kMaxScore) {
      errs.push_back({at(i, "score"), "score values must not be greater than " +
                                          std::to_string(kMaxScore) + ". Score" + index +
                                          std::to_string(p.score)});
    }
  }
  for (size_t i = 0; i < resources.size(); ++i) {
    const ResourceSpec& r = resources[i];
    if (r.weight < 1) {
      errs.push_back(weightError(i, "resource " + r.name + " weight " + std::to_string(r.weight) +
                                        " must not be less than 1"));
    }
  }
  return errs;
}

void RequestedToCapacityRatioArgs::validate() const { helper::throwIfAny(validationErrors()); }

}  // namespace ksched::plugins
