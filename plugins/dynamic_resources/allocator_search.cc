// One allocate() call: the claims checked against the node's pools, the depth-first search over
// requests and devices, and the constraints it keeps (upstream's allocator_incubating.go:
// Allocate, validateDeviceRequest's All part, allocateOne, allocateDevice, constraint.go).
#include <algorithm>
#include <climits>
#include <string>
#include <string_view>
#include <utility>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

// "request/sub" == name, without building the string.
bool isSubName(std::string_view name, std::string_view request, std::string_view sub) {
  return name.size() == request.size() + 1 + sub.size() && name.starts_with(request) &&
         name[request.size()] == '/' && name.ends_with(sub);
}

// upstream's resourceclaim.ToleratesTaint
bool tolerates(const api::DeviceToleration& t, const api::DeviceTaint& taint) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.operator_.empty() || t.operator_ == "Equal") return t.value == taint.value;
  return t.operator_ == "Exists";
}

}  // namespace

bool Constraint::applies(std::string_view request, std::string_view sub) const {
  if (requests->empty()) return true;
  for (const auto& name : *requests) {
    if (name == request) return true;
    if (!sub.empty() && isSubName(name, request, sub)) return true;
  }
  return false;
}

bool holds(const api::DeviceAttribute& a, const AttrItem& x) {
  return anyItem(a, [&](const AttrItem& item) { return item == x; });
}

bool intersects(const api::DeviceAttribute& a, const api::DeviceAttribute& b) {
  if (a.value.index() % 4 != b.value.index() % 4) return false;
  return anyItem(a, [&](const AttrItem& x) { return holds(b, x); });
}

bool Constraint::add(std::string_view request, std::string_view sub, const api::Device& device,
                     std::string_view driver) {
  if (!applies(request, sub)) return true;
  const api::DeviceAttribute* attr = lookupAttribute(device, driver, attribute);
  // Without DRAListTypeAttributes a list is no value the constraints can compare.
  if (!attr || (attr->isList() && !sets)) return false;
  if (sets) {
    if (distinct) {
      // Pairwise disjoint.
      for (const auto* v : values) {
        if (intersects(*v, *attr)) return false;
      }
    } else {
      // Some value of this device that every device taken so far has: the intersection of all
      // of them stays non-empty.
      const bool common = anyItem(*attr, [&](const AttrItem& item) {
        return std::all_of(values.begin(), values.end(),
                           [&](const api::DeviceAttribute* v) { return holds(*v, item); });
      });
      if (!common) return false;
    }
    values.push_back(attr);
    return true;
  }
  if (distinct) {
    for (const auto* v : values) {
      if (*v == *attr) return false;
    }
    values.push_back(attr);
    return true;
  }
  if (count == 0) {
    first = attr;
  } else if (!(*attr == *first)) {
    return false;
  }
  ++count;
  return true;
}

void Constraint::remove(std::string_view request, std::string_view sub, const api::Device& device,
                        std::string_view driver) {
  if (!applies(request, sub)) return;
  if (!distinct && !sets) {
    --count;
    return;
  }
  const api::DeviceAttribute* attr = lookupAttribute(device, driver, attribute);
  auto it = std::find(values.rbegin(), values.rend(), attr);
  if (it != values.rend()) values.erase(std::next(it).base());
}

const api::DeviceAttribute* lookupAttribute(const api::Device& device, std::string_view driver,
                                            std::string_view name) {
  if (auto it = device.attributes.find(name); it != device.attributes.end()) return &it->second;
  const auto slash = name.find('/');
  if (slash == std::string_view::npos || name.substr(0, slash) != driver) return nullptr;
  if (auto it = device.attributes.find(name.substr(slash + 1)); it != device.attributes.end()) {
    return &it->second;
  }
  return nullptr;
}

const api::DeviceTaint* untoleratedTaint(const api::Device& device,
                                         const std::vector<api::DeviceToleration>& tolerations) {
  for (const auto& taint : device.taints) {
    if (taint.effect != api::kDeviceTaintNoSchedule && taint.effect != api::kDeviceTaintNoExecute) {
      continue;  // None and unknown effects do not prevent allocation
    }
    if (std::none_of(tolerations.begin(), tolerations.end(),
                     [&](const api::DeviceToleration& t) { return tolerates(t, taint); })) {
      return &taint;
    }
  }
  return nullptr;
}

Search::Search(const Index& ix, const api::Node& node, Allocator::Clock::time_point deadline)
    : ix_(ix), f_(ix.in.features), node_(node), deadline_(deadline) {}

const SliceInfo& Search::sliceOf(DeviceRef ref) const {
  return ix_.slices[nv_.pools[ref.pool].slices[ref.slice]];
}
const api::Device& Search::deviceOf(DeviceRef ref) const {
  return sliceOf(ref).slice->spec.devices[ref.device];
}
uint32_t Search::globalOf(DeviceRef ref) const { return sliceOf(ref).firstDevice + ref.device; }
uint32_t Search::localOf(DeviceRef ref) const {
  return nv_.pools[ref.pool].localBase[ref.slice] + ref.device;
}

Result Search::fail(Result::Code code, std::string message) const {
  Result r;
  r.code = code;
  r.message = std::move(message);
  r.steps = steps_;
  return r;
}

bool Search::deviceInUse(DeviceRef ref) const {
  const auto& s = sliceOf(ref);
  return (ix_.allocationState(globalOf(ref), *s.slice, deviceOf(ref)) & kInUse) ||
         allocatingCount_[localOf(ref)] > 0;
}

bool Search::allocatingForClaim(uint32_t local, uint32_t claim) const {
  return (allocating_[size_t(local) * words_ + claim / 64] >> (claim % 64)) & 1;
}

bool Search::sharedInUse(DeviceRef ref) const {
  const auto& s = sliceOf(ref);
  return (ix_.allocationState(globalOf(ref), *s.slice, deviceOf(ref)) & kShared) ||
         sharedCount_[localOf(ref)] > 0;
}

Take Search::isSelectable(uint32_t slot, DeviceRef ref) {
  const SliceInfo& si = sliceOf(ref);
  const api::Device& dev = deviceOf(ref);
  if (!f_.deviceBindingAndStatus && !dev.bindingConditions.empty()) return Take::kNo;
  const Slot& s = ix_.slots[slot];
  const uint32_t g = si.firstDevice + ref.device;
  uint8_t m = ix_.classMatch(s.classRow, g, *si.slice, dev, &error_);
  if (m == kMatch) m = ix_.selectorMatch(slot, g, *si.slice, dev, &error_);
  if (m == kCelError) return Take::kError;
  if (m != kMatch) return Take::kNo;
  if (si.slice->spec.perDeviceNodeSelection.value_or(false) &&
      !nodeMatches(node_, dev.nodeName, dev.allNodes, dev.nodeSelector)) {
    return Take::kNo;
  }
  return Take::kYes;
}

std::optional<bool> Search::capacityFits(uint32_t slot, DeviceRef ref) const {
  const SliceInfo& si = sliceOf(ref);
  const api::Device& dev = deviceOf(ref);
  const CapacityAmounts* consumed = nullptr;
  if (ix_.in.consumedCapacity) {
    auto it = ix_.in.consumedCapacity->find(
        DeviceIdView{si.slice->spec.driver, si.slice->spec.pool.name, dev.name});
    if (it != ix_.in.consumedCapacity->end()) consumed = &it->second;
  }
  const uint32_t local = localOf(ref);
  const CapacityAmounts* allocating = sharedCount_[local] > 0 ? &sharedAmounts_[local] : nullptr;
  return detail::capacityFits(ix_.slots[slot].exact->capacity, dev.capacity, consumed, allocating);
}

bool Search::countersFit(DeviceRef ref) const {
  const PoolView& pv = nv_.pools[ref.pool];
  if (!pv.counters) return true;
  const api::Device& dev = deviceOf(ref);
  const CounterSets& inFlight = counterUse_[ref.pool];
  for (const auto& [setName, counters] : pv.counters->available) {
    const auto used = inFlight.find(setName);
    for (const auto& [name, available] : counters) {
      api::Quantity total;
      if (used != inFlight.end()) {
        if (auto it = used->second.find(name); it != used->second.end()) total = it->second;
      }
      for (const auto& c : dev.consumesCounters) {
        if (c.counterSet != setName) continue;
        if (auto it = c.counters.find(name); it != c.counters.end()) total += it->second;
      }
      if (available < total) return false;
    }
  }
  return true;
}

void Search::useCounters(DeviceRef ref, bool add) {
  CounterSets& use = counterUse_[ref.pool];
  for (const auto& c : deviceOf(ref).consumesCounters) {
    auto& set = use[c.counterSet];
    for (const auto& [name, value] : c.counters) {
      if (add) {
        set[name] += value;
      } else {
        set[name] -= value;
      }
    }
  }
}

bool Search::validateSlot(uint32_t slotIndex) {
  const Slot& slot = ix_.slots[slotIndex];
  if (!slot.staticError.empty()) {
    error_ = slot.staticError;
    return false;
  }
  RequestData& rd = req_[slotIndex];
  if (!slot.all) {
    rd.numDevices = slot.count > INT_MAX ? INT_MAX : static_cast<int>(slot.count);
    return true;
  }
  const std::string& key = ix_.claims[slot.claim].key;
  for (uint32_t p = 0; p < nv_.pools.size(); ++p) {
    const PoolView& pv = nv_.pools[p];
    const PoolInfo& pool = ix_.pools[pv.pool];
    const std::string id = std::string(pool.driver) + "/" + std::string(pool.name);
    if (pv.incomplete || pv.invalid) {
      error_ = "claim " + key + ", request " + std::string(slot.name) +
               ": asks for all devices, but resource pool " + id + " is currently " +
               (pv.incomplete ? "being updated" : "invalid");
      return false;
    }
    for (uint32_t s = 0; s < pv.slices.size(); ++s) {
      const auto& devices = ix_.slices[pv.slices[s]].slice->spec.devices;
      for (uint32_t d = 0; d < devices.size(); ++d) {
        const DeviceRef ref{p, s, d};
        const Take t = isSelectable(slotIndex, ref);
        if (t == Take::kError) return false;
        if (t == Take::kNo) continue;
        if (f_.consumableCapacity) {
          const auto fits = capacityFits(slotIndex, ref);
          if (!fits || !*fits) continue;
        }
        rd.allDevices.push_back(ref);
      }
    }
  }
  rd.numDevices = static_cast<int>(rd.allDevices.size());
  return true;
}

Take Search::allocateDevice(const Indices& r, uint32_t slotIndex, DeviceRef ref, bool must) {
  const Slot& slot = ix_.slots[slotIndex];
  const api::Device& dev = deviceOf(ref);
  const uint32_t local = localOf(ref);
  const bool multi = f_.consumableCapacity && dev.allowMultipleAllocations.value_or(false);
  if (!multi && slot.admin && allocatingForClaim(local, r.claim)) return Take::kNo;
  if (!slot.admin && deviceInUse(ref)) return Take::kNo;
  if (!f_.partitionableDevices && !dev.consumesCounters.empty()) return Take::kNo;
  const bool needCounters = !dev.consumesCounters.empty() && !(multi && sharedInUse(ref));
  if (needCounters && !countersFit(ref)) return Take::kNo;
  if (f_.deviceTaints && untoleratedTaint(dev, slot.exact->tolerations)) return Take::kNo;

  const std::string_view request = slot.isSub ? slot.parentName : slot.name;
  const std::string_view sub = slot.isSub ? slot.name : std::string_view();
  const std::string_view driver = sliceOf(ref).slice->spec.driver;
  auto& constraints = constraints_[r.claim];
  for (size_t i = 0; i < constraints.size(); ++i) {
    if (constraints[i].add(request, sub, dev, driver)) continue;
    for (size_t j = 0; j < i; ++j) constraints[j].remove(request, sub, dev, driver);
    if (!must) return Take::kNo;
    const SliceInfo& si = sliceOf(ref);
    error_ = "claim " + ix_.claims[r.claim].key + ", request " + std::string(slot.name) +
             ": cannot add device " + si.slice->spec.driver + "/" + si.slice->spec.pool.name + "/" +
             dev.name + " because a claim constraint would not be satisfied";
    return Take::kError;
  }

  Picked p;
  p.ref = ref;
  p.slot = slotIndex;
  p.multi = multi;
  if (f_.consumableCapacity) {
    const auto fits = capacityFits(slotIndex, ref);
    if (!fits || !*fits) {
      for (auto& c : constraints) c.remove(request, sub, dev, driver);
      return Take::kNo;
    }
    if (multi) {
      p.consumed = consumedByRequest(slot.exact->capacity, dev.capacity);
      p.shareId = newShareId();
      for (const auto& [name, value] : p.consumed) sharedAmounts_[local][name] += value;
      ++sharedCount_[local];
    }
  }
  if (!multi) {
    allocating_[size_t(local) * words_ + r.claim / 64] |= uint64_t{1} << (r.claim % 64);
    ++allocatingCount_[local];
  }
  if (needCounters) {
    useCounters(ref, true);
    p.countersTaken = true;
  }
  picks_[r.claim].push_back(std::move(p));
  return Take::kYes;
}

void Search::release(const Picked& p) {
  const Slot& slot = ix_.slots[p.slot];
  const api::Device& dev = deviceOf(p.ref);
  const uint32_t local = localOf(p.ref);
  const std::string_view request = slot.isSub ? slot.parentName : slot.name;
  const std::string_view sub = slot.isSub ? slot.name : std::string_view();
  const std::string_view driver = sliceOf(p.ref).slice->spec.driver;
  for (auto& c : constraints_[slot.claim]) c.remove(request, sub, dev, driver);
  if (p.multi) {
    for (const auto& [name, value] : p.consumed) sharedAmounts_[local][name] -= value;
    if (--sharedCount_[local] == 0) sharedAmounts_[local].clear();
  } else {
    allocating_[size_t(local) * words_ + slot.claim / 64] &= ~(uint64_t{1} << (slot.claim % 64));
    --allocatingCount_[local];
  }
  if (p.countersTaken) useCounters(p.ref, false);
}

bool Search::pastLimits() {
  if (steps_ > stepLimit_) {
    overBudget_ = true;
    return true;
  }
  if (deadline_ != Allocator::Clock::time_point::max() && Allocator::Clock::now() >= deadline_) {
    timedOut_ = true;
    return true;
  }
  return false;
}

std::optional<Step> Search::tryDevice(const Indices& r, uint32_t slotIndex, DeviceRef ref,
                                      bool allocateSubRequest, DeviceRef resume) {
  if (ix_.slots[slotIndex].admin ? allocatingForClaim(localOf(ref), r.claim) : deviceInUse(ref)) {
    return std::nullopt;
  }
  const Take sel = isSelectable(slotIndex, ref);
  if (sel == Take::kError) return Step::kStop;
  if (sel == Take::kNo) return std::nullopt;
  const Take t = allocateDevice(r, slotIndex, ref, false);
  if (t == Take::kError) return Step::kStop;
  if (t == Take::kNo) return std::nullopt;
  const Step st =
      allocateOne({r.claim, r.request, r.sub, r.device + 1}, allocateSubRequest, resume);
  if (st == Step::kDone) return st;
  release(picks_[r.claim].back());
  picks_[r.claim].pop_back();
  if (st != Step::kFail) return st;
  return std::nullopt;
}

Step Search::allocateOne(Indices r, bool allocateSubRequest, DeviceRef start) {
  if ((++steps_ & 63) == 1 && pastLimits()) return Step::kStop;
  if (r.claim >= ix_.claims.size()) return Step::kDone;
  const ClaimInfo& claim = ix_.claims[r.claim];
  if (r.request >= claim.requests.size()) {
    const Step s = allocateOne({r.claim + 1, 0, 0, 0}, false, {});
    return s == Step::kMaxSize ? Step::kFail : s;
  }
  const RequestInfo& ri = claim.requests[r.request];
  if (!allocateSubRequest && ri.hasSubs) {
    bool allExceeded = true;
    for (uint32_t sub = 0; sub < ri.numSlots; ++sub) {
      r.sub = sub;
      const Step s = allocateOne(r, true, {});
      if (s == Step::kMaxSize) continue;
      allExceeded = false;
      if (s == Step::kStop) return s;
      if (s == Step::kDone) {
        selectedSub_[r.claim][r.request] = sub;
        return s;
      }
    }
    return allExceeded ? Step::kMaxSize : Step::kFail;
  }

  const uint32_t slotIndex = ri.firstSlot + r.sub;
  const Slot& slot = ix_.slots[slotIndex];
  const RequestData& rd = req_[slotIndex];
  if (slot.all && rd.allDevices.empty()) return Step::kFail;
  if (r.device >= rd.numDevices) return allocateOne({r.claim, r.request + 1, 0, 0}, false, {});
  const size_t after = picks_[r.claim].size() + size_t(rd.numDevices - r.device);
  if (after > size_t(kMaxDevicesPerClaim)) return Step::kMaxSize;
  const Indices next{r.claim, r.request, r.sub, r.device + 1};

  if (slot.all) {
    const Take t = allocateDevice(r, slotIndex, rd.allDevices[size_t(r.device)], true);
    if (t == Take::kError) return Step::kStop;
    if (t == Take::kNo) return Step::kFail;
    const Step s = allocateOne(next, allocateSubRequest, {});
    if (s != Step::kDone) {
      release(picks_[r.claim].back());
      picks_[r.claim].pop_back();
    }
    return s;
  }

  if (ordered_) {
    // Device scoring (allocator_scoring.cc): the devices in order_, `start.device` the position.
    for (uint32_t i = start.device; i < order_.size(); ++i) {
      if (auto st = tryDevice(r, slotIndex, order_[i], allocateSubRequest, {0, 0, i + 1})) {
        return *st;
      }
    }
    return Step::kFail;
  }
  for (uint32_t p = start.pool; p < nv_.pools.size(); ++p) {
    const PoolView& pv = nv_.pools[p];
    if (pv.incomplete || pv.invalid) continue;
    const uint32_t firstSlice = p == start.pool ? start.slice : 0;
    for (uint32_t s = firstSlice; s < pv.slices.size(); ++s) {
      const auto& devices = ix_.slices[pv.slices[s]].slice->spec.devices;
      const uint32_t firstDevice = (p == start.pool && s == start.slice) ? start.device : 0;
      for (uint32_t d = firstDevice; d < devices.size(); ++d) {
        if (auto st = tryDevice(r, slotIndex, {p, s, d}, allocateSubRequest, {p, s, d + 1})) {
          return *st;
        }
      }
    }
  }
  return Step::kFail;
}

Result Search::run() {
  nv_ = ix_.gatherPools(node_);
  req_.assign(ix_.slots.size(), {});
  const size_t numClaims = ix_.claims.size();
  selectedSub_.resize(numClaims);
  constraints_.resize(numClaims);
  picks_.resize(numClaims);
  words_ = static_cast<uint32_t>(std::max<size_t>(1, (numClaims + 63) / 64));
  allocating_.assign(size_t(nv_.localDevices) * words_, 0);
  allocatingCount_.assign(nv_.localDevices, 0);
  sharedCount_.assign(nv_.localDevices, 0);
  sharedAmounts_.resize(f_.consumableCapacity ? nv_.localDevices : 0);
  counterUse_.resize(nv_.pools.size());
  for (uint32_t ci = 0; ci < numClaims; ++ci) {
    const ClaimInfo& claim = ix_.claims[ci];
    int minDevices = 0;
    for (const RequestInfo& ri : claim.requests) {
      if (!ri.preError.empty()) return fail(Result::Code::kError, ri.preError);
      int minRequest = INT_MAX;
      for (uint32_t s = ri.firstSlot; s < ri.firstSlot + ri.numSlots; ++s) {
        if (!validateSlot(s)) return fail(Result::Code::kError, error_);
        minRequest = std::min(minRequest, req_[s].numDevices);
      }
      if (ri.numSlots > 0)
        minDevices = std::min<int64_t>(INT_MAX, int64_t{minDevices} + minRequest);
    }
    if (minDevices > kMaxDevicesPerClaim) {
      return fail(Result::Code::kError, "claim " + claim.key + ": number of requested devices " +
                                            std::to_string(minDevices) +
                                            " exceeds the claim limit of " +
                                            std::to_string(kMaxDevicesPerClaim));
    }
    if (!claim.constraintError.empty()) return fail(Result::Code::kError, claim.constraintError);
    selectedSub_[ci].assign(claim.requests.size(), 0);
    for (const auto& c : claim.claim->spec.constraints) {
      Constraint k;
      k.distinct = !c.matchAttribute.has_value();
      k.sets = f_.listTypeAttributes;
      k.attribute = c.matchAttribute ? *c.matchAttribute : *c.distinctAttribute;
      k.requests = &c.requests;
      constraints_[ci].push_back(std::move(k));
    }
    picks_[ci].reserve(size_t(std::max(minDevices, 0)));
  }

  const Step s = ix_.in.scoring.enabled() ? searchScored() : allocateOne({}, false, {});
  if (s == Step::kStop) {
    if (timedOut_) return fail(Result::Code::kTimedOut, std::string(kTimedOut));
    return fail(Result::Code::kError, error_);
  }
  if (s == Step::kDone) {
    Result r = results();
    if (r.allocated() && ix_.in.scoring.enabled()) r.quality = quality();
    return r;
  }
  const bool invalid = std::any_of(nv_.pools.begin(), nv_.pools.end(),
                                   [](const PoolView& pv) { return pv.invalid; });
  Result r =
      fail(Result::Code::kUnschedulable, std::string(invalid ? kInvalidPools : kCannotAllocate));
  r.reason = explain();
  return r;
}

}  // namespace ksched::plugins::dra::detail
