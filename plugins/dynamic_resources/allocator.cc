// The Allocator, the feature set, and what is built once per cycle: the claims' requests
// validated (upstream's validateDeviceRequest, the node-independent part) and the per-device
// caches of selector results and allocation state.
#include "plugins/dynamic_resources/allocator.h"

#include <algorithm>
#include <climits>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra {

std::string DeviceId::toString() const { return driver + "/" + pool + "/" + device; }

size_t DeviceIdHash::operator()(const DeviceIdView& id) const noexcept {
  const std::hash<std::string_view> h;
  size_t seed = h(id.driver);
  seed ^= h(id.pool) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  seed ^= h(id.device) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
  return seed;
}

size_t DeviceIdHash::operator()(const DeviceId& id) const noexcept {
  return (*this)(DeviceIdView{id.driver, id.pool, id.device});
}

Features Features::fromGates(const features::Gates& gates) noexcept {
  using features::Feature;
  Features f;
  f.adminAccess = gates.enabled(Feature::kDRAAdminAccess);
  f.prioritizedList = gates.enabled(Feature::kDRAPrioritizedList);
  f.partitionableDevices = gates.enabled(Feature::kDRAPartitionableDevices);
  f.deviceTaints = gates.enabled(Feature::kDRADeviceTaints);
  f.deviceBindingAndStatus = gates.enabled(Feature::kDRADeviceBindingConditions) &&
                             gates.enabled(Feature::kDRAResourceClaimDeviceStatus);
  f.consumableCapacity = gates.enabled(Feature::kDRAConsumableCapacity);
  f.listTypeAttributes = gates.enabled(Feature::kDRAListTypeAttributes);
  return f;
}

Features Features::none() noexcept {
  Features f;
  f.adminAccess = f.prioritizedList = f.partitionableDevices = f.deviceTaints =
      f.deviceBindingAndStatus = f.consumableCapacity = f.listTypeAttributes = false;
  return f;
}

namespace detail {
namespace {

std::string objectKey(const api::ObjectMeta& m) {
  return m.namespace_.empty() ? m.name : m.namespace_ + "/" + m.name;
}

uint8_t evalSelectors(const std::vector<CompiledSelector>& selectors, std::string_view who,
                      const api::ResourceSlice& slice, const api::Device& dev, std::string* error) {
  for (size_t i = 0; i < selectors.size(); ++i) {
    const auto& s = selectors[i];
    if (!s.compiled.program) {
      if (error) {
        *error = std::string(who) + ": selector #" + std::to_string(i) +
                 ": CEL compile error: " + s.compiled.error;
      }
      return kCelError;
    }
    const cel::DeviceView view{slice.spec.driver, &dev.attributes, &dev.capacity,
                               dev.allowMultipleAllocations.value_or(false)};
    const cel::EvalResult r = s.compiled.program->evaluate(view);
    if (!r.ok()) {
      if (error) {
        *error = std::string(who) + ": selector #" + std::to_string(i) + " on device " +
                 slice.spec.driver + "/" + slice.spec.pool.name + "/" + dev.name +
                 ": CEL runtime error: " + r.error;
      }
      return kCelError;
    }
    if (!r.value) return kNoMatch;
  }
  return kMatch;
}

uint8_t cached(std::atomic<uint8_t>& cell, const auto& compute) {
  const uint8_t v = cell.load(std::memory_order_relaxed);
  if (v == kMatch || v == kNoMatch) return v;
  const uint8_t r = compute();
  if (r != kCelError) cell.store(r, std::memory_order_relaxed);
  return r;
}

}  // namespace

Index::Index(AllocatorInputs inputs)
    : in(std::move(inputs)),
      sliceIndex(in.sliceIndex ? in.sliceIndex : indexSlices(in.slices)),
      slices(sliceIndex->slices),
      pools(sliceIndex->pools),
      slicesOnNode(sliceIndex->slicesOnNode),
      slicesShared(sliceIndex->slicesShared),
      numDevices(sliceIndex->numDevices),
      poolCounters(new PoolCounters[pools.size()]) {
  indexClaims();
  classCache.reset(new std::atomic<uint8_t>[classRows.size() * numDevices]());
  selectorCache.reset(new std::atomic<uint8_t>[slots.size() * numDevices]());
  allocatedCache.reset(new std::atomic<uint8_t>[numDevices]());
}

void Index::indexClaims() {
  const Features& f = in.features;
  std::unordered_map<std::string_view, cel::CompileResult> compiled;
  auto compile = [&](std::string_view expression) {
    auto [it, added] = compiled.try_emplace(expression);
    if (added) {
      if (in.compile) {
        it->second = in.compile(expression);
      } else {
        it->second.error = "no CEL evaluator";
      }
    }
    return it->second;
  };
  std::unordered_map<const api::DeviceClass*, uint32_t> rows;

  auto addSlot = [&](Slot slot, const std::string& key) {
    const api::ExactDeviceRequest& r = *slot.exact;
    const std::string where = "claim " + key + ", request " + std::string(slot.name);
    for (size_t i = 0; i < r.selectors.size() && slot.staticError.empty(); ++i) {
      if (r.selectors[i].celExpression.empty()) {
        slot.staticError = where + ", selector #" + std::to_string(i) +
                           ": CEL expression empty (unsupported selector type?)";
      }
    }
    slot.admin = !slot.isSub && r.adminAccess.value_or(false);
    if (slot.staticError.empty() && !slot.isSub && !f.adminAccess && r.adminAccess.has_value()) {
      slot.staticError = where + ": admin access is requested, but the feature is disabled";
    }
    if (slot.staticError.empty() && r.deviceClassName.empty()) {
      slot.staticError = where + ": missing device class name (unsupported request type?)";
    }
    if (slot.staticError.empty()) {
      slot.cls = in.deviceClass ? in.deviceClass(r.deviceClassName) : nullptr;
      if (!slot.cls) {
        slot.staticError = where + ": could not retrieve device class " + r.deviceClassName +
                           ": deviceclass.resource.k8s.io \"" + r.deviceClassName + "\" not found";
      }
    }
    if (slot.staticError.empty()) {
      if (r.allocationMode == api::kAllocationModeExactCount) {
        slot.count = r.count;
      } else if (r.allocationMode == api::kAllocationModeAll) {
        slot.all = true;
      } else {
        slot.staticError = where + ": unsupported count mode " + r.allocationMode;
      }
    }
    if (slot.staticError.empty()) {
      auto [row, added] = rows.try_emplace(slot.cls, static_cast<uint32_t>(classRows.size()));
      if (added) {
        ClassRow cr{slot.cls, {}};
        for (const auto& s : slot.cls->spec.selectors) {
          cr.selectors.push_back({s.celExpression, compile(s.celExpression)});
        }
        classRows.push_back(std::move(cr));
      }
      slot.classRow = row->second;
      for (const auto& s : r.selectors) {
        slot.selectors.push_back({s.celExpression, compile(s.celExpression)});
      }
    }
    slots.push_back(std::move(slot));
  };

  for (uint32_t ci = 0; ci < in.claims.size(); ++ci) {
    const api::ResourceClaim& claim = *in.claims[ci];
    ClaimInfo info;
    info.claim = &claim;
    info.key = objectKey(claim.metadata);
    const auto& requests = claim.spec.requests;
    for (uint32_t ri = 0; ri < requests.size(); ++ri) {
      const api::DeviceRequest& request = requests[ri];
      RequestInfo r;
      r.firstSlot = static_cast<uint32_t>(slots.size());
      r.hasSubs = !request.firstAvailable.empty();
      const std::string where = "claim " + info.key + ", request " + request.name;
      if (!f.prioritizedList && r.hasSubs) {
        r.preError = where + ": has subrequests, but the DRAPrioritizedList feature is disabled";
      } else if (!f.consumableCapacity) {
        if (request.exactly && !request.exactly->capacity.empty()) {
          r.preError =
              where + ": has capacity requests, but the DRAConsumableCapacity feature is disabled";
        }
        for (const auto& sub : request.firstAvailable) {
          if (r.preError.empty() && !sub.request.capacity.empty()) {
            r.preError = "claim " + info.key + ", subrequest " + sub.name +
                         ": has capacity requests, but the DRAConsumableCapacity feature is "
                         "disabled";
          }
        }
      }
      Slot base;
      base.claim = ci;
      base.request = ri;
      if (r.hasSubs) {
        for (uint32_t si = 0; si < request.firstAvailable.size(); ++si) {
          const auto& sub = request.firstAvailable[si];
          Slot slot = base;
          slot.sub = si;
          slot.isSub = true;
          slot.exact = &sub.request;
          slot.name = sub.name;
          slot.parentName = request.name;
          slot.fullName = request.name + "/" + sub.name;
          addSlot(std::move(slot), info.key);
        }
      } else {
        static const api::ExactDeviceRequest kMissing{.deviceClassName = ""};
        Slot slot = base;
        slot.exact = request.exactly ? &*request.exactly : &kMissing;
        slot.name = request.name;
        slot.fullName = request.name;
        addSlot(std::move(slot), info.key);
      }
      r.numSlots = static_cast<uint32_t>(slots.size()) - r.firstSlot;
      info.requests.push_back(std::move(r));
    }
    const auto& constraints = claim.spec.constraints;
    for (size_t i = 0; i < constraints.size(); ++i) {
      if (!constraints[i].matchAttribute && !constraints[i].distinctAttribute) {
        info.constraintError = "claim " + info.key + ", constraint #" + std::to_string(i) +
                               ": empty constraint (unsupported constraint type?)";
        break;
      }
    }
    claims.push_back(std::move(info));
  }
}

uint8_t Index::allocationState(uint32_t device, const api::ResourceSlice& slice,
                               const api::Device& dev) const {
  auto& cell = allocatedCache[device];
  uint8_t v = cell.load(std::memory_order_relaxed);
  if (v & kKnown) return v;
  v = kKnown;
  const DeviceIdView id{slice.spec.driver, slice.spec.pool.name, dev.name};
  if (in.inUse && in.inUse->find(id) != in.inUse->end()) v |= kInUse;
  if (in.consumedCapacity && in.consumedCapacity->find(id) != in.consumedCapacity->end()) {
    v |= kShared;
  }
  cell.store(v, std::memory_order_relaxed);
  return v;
}

uint8_t Index::classMatch(uint32_t row, uint32_t device, const api::ResourceSlice& slice,
                          const api::Device& dev, std::string* error) const {
  return cached(classCache[size_t(row) * numDevices + device], [&] {
    return evalSelectors(classRows[row].selectors, "class " + classRows[row].cls->metadata.name,
                         slice, dev, error);
  });
}

uint8_t Index::selectorMatch(uint32_t slot, uint32_t device, const api::ResourceSlice& slice,
                             const api::Device& dev, std::string* error) const {
  const Slot& s = slots[slot];
  if (s.selectors.empty()) return kMatch;
  return cached(selectorCache[size_t(slot) * numDevices + device], [&] {
    return evalSelectors(s.selectors, "claim " + claims[s.claim].key, slice, dev, error);
  });
}

}  // namespace detail

Allocator::Allocator(AllocatorInputs inputs)
    : index_(std::make_unique<detail::Index>(std::move(inputs))) {}

Allocator::~Allocator() = default;

Result Allocator::allocate(const api::Node& node, Clock::time_point deadline) const {
  detail::Search search(*index_, node, deadline);
  return search.run();
}

}  // namespace ksched::plugins::dra
