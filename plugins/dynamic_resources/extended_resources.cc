#include "plugins/dynamic_resources/extended_resources.h"

#include <algorithm>
#include <iterator>
#include <optional>
#include <set>
#include <span>

#include <ksched/api/resources.h>

#include "plugins/dynamic_resources/dra_state.h"

namespace ksched::plugins::dra {

namespace {

using Mapping = api::ContainerExtendedResourceRequest;

// Whole units of a request; 0 for a fractional, zero or negative one (upstream AsInt64).
int64_t wholeUnits(const api::Quantity& q) {
  if (q.sign() <= 0 || q.milliValue() % 1000 != 0) return 0;
  return q.value();
}

}  // namespace

bool isDraExtendedResourceName(std::string_view name) noexcept {
  return name.starts_with(kDeviceClassPrefix) || api::isExtendedResourceName(name);
}

bool requestsDraExtendedResourceName(const api::Pod& pod) noexcept {
  auto any = [](const std::vector<api::Container>& cs) {
    for (const auto& c : cs) {
      for (const auto& [name, q] : c.resources.requests) {
        if (!q.isZero() && isDraExtendedResourceName(name)) return true;
      }
    }
    return false;
  };
  return any(pod.spec.containers) || any(pod.spec.initContainers);
}

ExtendedRequests extendedResourceRequests(
    const api::Pod& pod, const std::map<std::string, std::string, std::less<>>& classOf) {
  std::vector<const api::Container*> containers;
  for (const auto& c : pod.spec.initContainers) containers.push_back(&c);
  for (const auto& c : pod.spec.containers) containers.push_back(&c);
  const size_t numInit = pod.spec.initContainers.size();
  auto longLived = [&](size_t i) { return i >= numInit || containers[i]->isRestartable(); };

  ExtendedRequests out;
  for (const auto& entry : classOf) {
    // Named, not bound: lambdas below capture them.
    const std::string& resource = entry.first;
    const std::string& className = entry.second;
    // Container i's request for `resource`, after what `reusable` requests already give it.
    auto requestOf = [&](size_t i, std::span<const std::optional<api::DeviceRequest>> reusable,
                         std::vector<Mapping>& mappings) -> std::optional<api::DeviceRequest> {
      const api::ResourceList& reqs = containers[i]->resources.requests;
      const auto it = reqs.find(resource);
      if (it == reqs.end()) return std::nullopt;
      const int64_t want = wholeUnits(it->second);
      if (want == 0) return std::nullopt;
      int64_t have = 0;
      for (const auto& r : reusable) {
        if (!r) continue;
        have += r->exactly->count;
        mappings.push_back({containers[i]->name, resource, r->name});
        if (have >= want) return std::nullopt;
      }
      api::DeviceRequest d;
      d.name = "container-" + std::to_string(i) + "-request-" +
               std::to_string(std::distance(reqs.begin(), it));
      api::ExactDeviceRequest e;
      e.deviceClassName = className;
      e.allocationMode = std::string(api::kAllocationModeExactCount);
      e.count = want - have;
      d.exactly = std::move(e);
      mappings.push_back({containers[i]->name, resource, d.name});
      return d;
    };

    std::vector<std::optional<api::DeviceRequest>> longRequests(containers.size());
    std::vector<Mapping> longMappings;
    for (size_t i = 0; i < containers.size(); ++i) {
      if (longLived(i)) longRequests[i] = requestOf(i, {}, longMappings);
    }
    std::optional<api::DeviceRequest> maxShort;
    std::set<std::string> shortNames;
    std::vector<Mapping> shortMappings;
    for (size_t i = 0; i < numInit; ++i) {
      if (longLived(i)) continue;
      auto r = requestOf(i, std::span(longRequests).subspan(i), shortMappings);
      if (!r) continue;
      shortNames.insert(r->name);
      if (!maxShort || maxShort->exactly->count < r->exactly->count) maxShort = std::move(r);
    }
    if (maxShort && shortNames.size() > 1) {
      shortNames.erase(maxShort->name);
      for (auto& m : shortMappings) {
        if (shortNames.contains(m.requestName)) m.requestName = maxShort->name;
      }
    }
    if (maxShort) out.requests.push_back(std::move(*maxShort));
    for (auto& r : longRequests) {
      if (r) out.requests.push_back(std::move(*r));
    }
    out.mappings.insert(out.mappings.end(), longMappings.begin(), longMappings.end());
    out.mappings.insert(out.mappings.end(), shortMappings.begin(), shortMappings.end());
  }
  std::ranges::sort(out.requests, {}, &api::DeviceRequest::name);
  return out;
}

nlohmann::json extendedClaimObject(const api::Pod& pod,
                                   const std::vector<api::DeviceRequest>& requests,
                                   std::string_view apiVersion) {
  const bool flat = apiVersion == "resource.k8s.io/v1beta1";  // no `exactly` in v1beta1
  nlohmann::json reqs = nlohmann::json::array();
  for (const auto& r : requests) {
    nlohmann::json exact = {{"deviceClassName", r.exactly->deviceClassName},
                            {"allocationMode", r.exactly->allocationMode},
                            {"count", r.exactly->count}};
    nlohmann::json j = {{"name", r.name}};
    if (flat) {
      j.update(exact);
    } else {
      j["exactly"] = std::move(exact);
    }
    reqs.push_back(std::move(j));
  }
  return {
      {"apiVersion", apiVersion},
      {"kind", "ResourceClaim"},
      {"metadata",
       {{"generateName", pod.metadata.name + "-extended-resources-"},
        {"namespace", pod.metadata.namespace_},
        {"annotations", {{std::string(kExtendedResourceClaimAnnotation), "true"}}},
        {"ownerReferences",
         {{{"apiVersion", "v1"},
           {"kind", "Pod"},
           {"name", pod.metadata.name},
           {"uid", pod.metadata.uid},
           {"controller", true}}}},
        {"finalizers", {std::string(kFinalizer)}}}},
      {"spec", {{"devices", {{"requests", std::move(reqs)}}}}},
  };
}

nlohmann::json extendedClaimStatusPatch(
    const std::vector<api::ContainerExtendedResourceRequest>& mappings,
    std::string_view claimName) {
  nlohmann::json m = nlohmann::json::array();
  for (const auto& x : mappings) {
    m.push_back({{"containerName", x.containerName},
                 {"resourceName", x.resourceName},
                 {"requestName", x.requestName}});
  }
  return {{"status",
           {{"extendedResourceClaimStatus",
             {{"requestMappings", std::move(m)}, {"resourceClaimName", claimName}}}}}};
}

}  // namespace ksched::plugins::dra
