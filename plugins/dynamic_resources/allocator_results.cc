// What a successful search hands back per claim: the devices, the configs, the node selector
// (upstream's Allocate epilogue and createNodeSelector).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

bool sameValues(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  auto sa = a;
  auto sb = b;
  std::sort(sa.begin(), sa.end());
  sa.erase(std::unique(sa.begin(), sa.end()), sa.end());
  std::sort(sb.begin(), sb.end());
  sb.erase(std::unique(sb.begin(), sb.end()), sb.end());
  return sa == sb;
}

void addNew(const std::vector<api::NodeSelectorRequirement>& from,
            std::vector<api::NodeSelectorRequirement>& to) {
  for (const auto& r : from) {
    const bool present = std::any_of(to.begin(), to.end(), [&](const auto& e) {
      return e.key == r.key && e.operator_ == r.operator_ && sameValues(e.values, r.values);
    });
    if (!present) to.push_back(r);
  }
}

}  // namespace

std::optional<api::NodeSelector> Search::nodeSelector(const std::vector<Picked>& picks,
                                                      std::string* error) const {
  api::NodeSelectorTerm term;
  for (const Picked& p : picks) {
    const auto& spec = sliceOf(p.ref).slice->spec;
    const api::Device& dev = deviceOf(p.ref);
    const bool perDevice = spec.perDeviceNodeSelection.value_or(false);
    const auto& nodeName = perDevice ? dev.nodeName : spec.nodeName;
    const auto& selector = perDevice ? dev.nodeSelector : spec.nodeSelector;
    if ((nodeName && !nodeName->empty()) || dev.bindsToNode.value_or(false)) {
      api::NodeSelector local;
      local.nodeSelectorTerms.push_back(
          {{}, {{"metadata.name", api::SelectorOperator::kIn, {node_.metadata.name}}}});
      return local;
    }
    if (!selector) continue;
    const auto& terms = selector->nodeSelectorTerms;
    if (terms.size() > 1) {
      *error =
          "unsupported ResourceSlice.NodeSelector with " + std::to_string(terms.size()) + " terms";
      return std::nullopt;
    }
    if (terms.size() == 1) {
      addNew(terms[0].matchFields, term.matchFields);
      addNew(terms[0].matchExpressions, term.matchExpressions);
    }
  }
  if (term.empty()) return std::nullopt;
  api::NodeSelector ns;
  ns.nodeSelectorTerms.push_back(std::move(term));
  return ns;
}

Result Search::results() const {
  Result out;
  out.code = Result::Code::kAllocated;
  out.steps = steps_;
  out.allocations.resize(ix_.claims.size());
  for (uint32_t ci = 0; ci < ix_.claims.size(); ++ci) {
    const ClaimInfo& claim = ix_.claims[ci];
    const auto& spec = claim.claim->spec;
    api::AllocationResult& ar = out.allocations[ci];
    ar.devices.reserve(picks_[ci].size());
    for (const Picked& p : picks_[ci]) {
      const Slot& slot = ix_.slots[p.slot];
      const SliceInfo& si = sliceOf(p.ref);
      const api::Device& dev = deviceOf(p.ref);
      api::DeviceRequestAllocationResult r;
      r.request = slot.fullName;
      r.driver = si.slice->spec.driver;
      r.pool = si.slice->spec.pool.name;
      r.device = dev.name;
      if (slot.admin) r.adminAccess = true;
      r.tolerations = slot.exact->tolerations;
      if (f_.deviceBindingAndStatus) {
        r.bindingConditions = dev.bindingConditions;
        r.bindingFailureConditions = dev.bindingFailureConditions;
      }
      if (!p.shareId.empty()) r.shareID = p.shareId;
      if (p.multi) r.consumedCapacity = {p.consumed.begin(), p.consumed.end()};
      ar.devices.push_back(std::move(r));
    }

    // The slot a request ended up with: itself, or its chosen subrequest.
    auto chosen = [&](uint32_t ri) -> const Slot& {
      const RequestInfo& info = claim.requests[ri];
      return ix_.slots[info.firstSlot + (info.hasSubs ? selectedSub_[ci][ri] : 0)];
    };
    // Class configs once per class, naming every request that used the class.
    std::map<std::string_view, std::pair<size_t, size_t>> classRange;
    for (uint32_t ri = 0; ri < claim.requests.size(); ++ri) {
      const Slot& slot = chosen(ri);
      if (!slot.cls) continue;
      auto [it, added] = classRange.try_emplace(slot.cls->metadata.name);
      if (!added) {
        for (size_t i = it->second.first; i < it->second.second; ++i) {
          ar.config[i].config.requests.push_back(slot.fullName);
        }
        continue;
      }
      it->second.first = ar.config.size();
      for (const auto& c : slot.cls->spec.config) {
        api::DeviceAllocationConfiguration dc{std::string(api::kAllocationConfigFromClass), c};
        dc.config.requests = {slot.fullName};
        ar.config.push_back(std::move(dc));
      }
      it->second.second = ar.config.size();
    }
    // Claim configs that apply to a request (or its chosen subrequest) that was allocated.
    for (const auto& c : spec.config) {
      bool applies = c.requests.empty();
      for (uint32_t ri = 0; ri < spec.requests.size() && !applies; ++ri) {
        applies = contains(c.requests, spec.requests[ri].name) ||
                  (claim.requests[ri].hasSubs && contains(c.requests, chosen(ri).fullName));
      }
      if (applies) ar.config.push_back({std::string(api::kAllocationConfigFromClaim), c});
    }
    // A config naming every request says so by naming none.
    for (auto& dc : ar.config) {
      auto& names = dc.config.requests;
      if (names.empty()) continue;
      bool all = true;
      for (uint32_t ri = 0; ri < spec.requests.size() && all; ++ri) {
        all = contains(names, spec.requests[ri].name) ||
              (claim.requests[ri].hasSubs && contains(names, chosen(ri).fullName));
      }
      if (all) names.clear();
    }

    std::string error;
    ar.nodeSelector = nodeSelector(picks_[ci], &error);
    if (!error.empty()) {
      return fail(Result::Code::kError,
                  "create NodeSelector for claim " + claim.claim->metadata.name + ": " + error);
    }
  }
  return out;
}

}  // namespace ksched::plugins::dra::detail
