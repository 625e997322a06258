#include <nlohmann/json.hpp>
#include <utility>

#include <ksched/api/resource.h>

namespace ksched::api {
namespace {

using nlohmann::json;

json requirementsToJson(const std::vector<NodeSelectorRequirement>& rs) {
  json out = json::array();
  for (const auto& r : rs) {
    json e = {{"key", r.key}, {"operator", toString(r.operator_)}};
    if (!r.values.empty()) e["values"] = r.values;
    out.push_back(std::move(e));
  }
  return out;
}

json nodeSelectorToJson(const NodeSelector& s) {
  json terms = json::array();
  for (const auto& t : s.nodeSelectorTerms) {
    json term = json::object();
    if (!t.matchExpressions.empty())
      term["matchExpressions"] = requirementsToJson(t.matchExpressions);
    if (!t.matchFields.empty()) term["matchFields"] = requirementsToJson(t.matchFields);
    terms.push_back(std::move(term));
  }
  return {{"nodeSelectorTerms", std::move(terms)}};
}

json tolerationToJson(const DeviceToleration& t) {
  json out = json::object();
  if (!t.key.empty()) out["key"] = t.key;
  if (!t.operator_.empty()) out["operator"] = t.operator_;
  if (!t.value.empty()) out["value"] = t.value;
  if (!t.effect.empty()) out["effect"] = t.effect;
  if (t.tolerationSeconds) out["tolerationSeconds"] = *t.tolerationSeconds;
  return out;
}

json resultToJson(const DeviceRequestAllocationResult& r) {
  json out = {{"request", r.request}, {"driver", r.driver}, {"pool", r.pool}, {"device", r.device}};
  if (r.adminAccess) out["adminAccess"] = *r.adminAccess;
  if (!r.tolerations.empty()) {
    json ts = json::array();
    for (const auto& t : r.tolerations) ts.push_back(tolerationToJson(t));
    out["tolerations"] = std::move(ts);
  }
  if (!r.bindingConditions.empty()) out["bindingConditions"] = r.bindingConditions;
  if (!r.bindingFailureConditions.empty()) {
    out["bindingFailureConditions"] = r.bindingFailureConditions;
  }
  if (r.shareID) out["shareID"] = *r.shareID;
  if (!r.consumedCapacity.empty()) {
    json cc = json::object();
    for (const auto& [name, q] : r.consumedCapacity) cc[name] = q.toString();
    out["consumedCapacity"] = std::move(cc);
  }
  return out;
}

json configToJson(const DeviceAllocationConfiguration& c) {
  json out = {{"source", c.source}};
  if (!c.config.requests.empty()) out["requests"] = c.config.requests;
  if (!c.config.driver.empty() || !c.config.opaque.empty()) {
    json opaque = {{"driver", c.config.driver}};
    if (!c.config.opaque.empty()) {
      json parameters = json::parse(c.config.opaque, nullptr, /*allow_exceptions=*/false);
      opaque["parameters"] = parameters.is_discarded() ? json(c.config.opaque) : parameters;
    }
    out["opaque"] = std::move(opaque);
  }
  return out;
}

}  // namespace

nlohmann::json toJson(const AllocationResult& a) {
  json out = json::object();
  json devices = json::object();
  if (!a.devices.empty()) {
    json results = json::array();
    for (const auto& r : a.devices) results.push_back(resultToJson(r));
    devices["results"] = std::move(results);
  }
  if (!a.config.empty()) {
    json config = json::array();
    for (const auto& c : a.config) config.push_back(configToJson(c));
    devices["config"] = std::move(config);
  }
  if (!devices.empty()) out["devices"] = std::move(devices);
  if (a.nodeSelector) out["nodeSelector"] = nodeSelectorToJson(*a.nodeSelector);
  if (a.allocationTimestamp) out["allocationTimestamp"] = *a.allocationTimestamp;
  return out;
}

nlohmann::json toJson(const ResourceClaimConsumerReference& r) {
  json out = {{"resource", r.resource}, {"name", r.name}, {"uid", r.uid}};
  if (!r.apiGroup.empty()) out["apiGroup"] = r.apiGroup;
  return out;
}

}  // namespace ksched::api
