// Why the claims do not fit a node, for humans: computed only after the search failed, from
// each request on its own (which devices match, which of those are taken and why), then the
// claims' constraints, then the requests together. Upstream says only "cannot allocate all
// claims"; this is ksched's.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

struct SlotStats {
  int total = 0;     // devices the node can reach
  int ofClass = 0;   // of those, accepted by the class
  int matching = 0;  // and by the request's selectors
  int needed = 0;
  int inUse = 0;
  int taint = 0;
  int counters = 0;
  int capacity = 0;
  int binding = 0;
  int noPartitions = 0;
  std::vector<DeviceRef> usable;
  std::string taints;  // "key=value:Effect, ..." (the first three)
  int taintNames = 0;
  std::string counterShort;  // "counter set S of pool D/P"
  std::string celError;
  std::vector<int> selectorPasses;  // per request selector, over the devices of the class

  [[nodiscard]] bool satisfied(bool all) const {
    return all ? matching > 0 && int(usable.size()) == matching : int(usable.size()) >= needed;
  }
};

std::string plural(int n, std::string_view one) {
  return std::to_string(n) + " " + std::string(one) + (n == 1 ? "" : "s");
}

std::string taintText(const api::DeviceTaint& t) {
  std::string s = t.key;
  if (!t.value.empty()) s += "=" + t.value;
  return s + ":" + t.effect;
}

// The values of an attribute as keys: one for a scalar, one per distinct item of a list.
std::set<std::string> attrKeys(const api::DeviceAttribute& a) {
  std::set<std::string> keys;
  anyItem(a, [&](const AttrItem& x) {
    static constexpr std::string_view kTypes = "ibsv";
    std::string key(1, kTypes[x.type]);
    key += x.type == 2 || x.type == 3 ? std::string(x.text) : std::to_string(x.number);
    keys.insert(std::move(key));
    return false;
  });
  return keys;
}

std::string joined(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s;
}

}  // namespace

std::string Search::explain() {
  // After a failed search every device is given back, so what is "in use" below is what other
  // claims hold.
  const std::string savedError = error_;
  std::vector<std::string> poolNotes;
  for (const auto& pv : nv_.pools) {
    const auto& pool = ix_.pools[pv.pool];
    const std::string id = std::string(pool.driver) + "/" + std::string(pool.name);
    if (pv.incomplete) poolNotes.push_back("resource pool " + id + " is being updated");
    if (pv.invalid) poolNotes.push_back("resource pool " + id + " is invalid: " + pv.invalidReason);
  }

  auto stats = [&](uint32_t slotIndex) {
    const Slot& slot = ix_.slots[slotIndex];
    SlotStats st;
    st.needed = slot.all ? 1 : static_cast<int>(slot.count);
    st.selectorPasses.assign(slot.selectors.size(), 0);
    for (uint32_t p = 0; p < nv_.pools.size(); ++p) {
      const PoolView& pv = nv_.pools[p];
      for (uint32_t s = 0; s < pv.slices.size(); ++s) {
        const SliceInfo& si = ix_.slices[pv.slices[s]];
        const auto& devices = si.slice->spec.devices;
        for (uint32_t d = 0; d < devices.size(); ++d) {
          const DeviceRef ref{p, s, d};
          const api::Device& dev = devices[d];
          if (si.slice->spec.perDeviceNodeSelection.value_or(false) &&
              !nodeMatches(node_, dev.nodeName, dev.allNodes, dev.nodeSelector)) {
            continue;
          }
          ++st.total;
          std::string err;
          const uint32_t g = si.firstDevice + d;
          const uint8_t cm = ix_.classMatch(slot.classRow, g, *si.slice, dev, &err);
          if (cm == kCelError && st.celError.empty()) st.celError = err;
          if (cm != kMatch) continue;
          ++st.ofClass;
          const uint8_t sm = ix_.selectorMatch(slotIndex, g, *si.slice, dev, &err);
          if (sm == kCelError && st.celError.empty()) st.celError = err;
          if (sm != kMatch) continue;
          if (f_.consumableCapacity) {
            const auto fits = capacityFits(slotIndex, ref);
            if (!fits) continue;  // names a capacity the device does not have
            if (!*fits && slot.all) continue;
            if (!*fits) {
              ++st.matching;
              ++st.capacity;
              continue;
            }
          }
          ++st.matching;
          if (!f_.deviceBindingAndStatus && !dev.bindingConditions.empty()) {
            ++st.binding;
          } else if (!slot.admin && deviceInUse(ref)) {
            ++st.inUse;
          } else if (!f_.partitionableDevices && !dev.consumesCounters.empty()) {
            ++st.noPartitions;
          } else if (const auto* t = f_.deviceTaints
                                         ? untoleratedTaint(dev, slot.exact->tolerations)
                                         : nullptr) {
            ++st.taint;
            const std::string text = taintText(*t);
            if (st.taintNames < 3 && st.taints.find(text) == std::string::npos) {
              st.taints += (st.taints.empty() ? "" : ", ") + text;
              ++st.taintNames;
            }
          } else if (!dev.consumesCounters.empty() && !countersFit(ref)) {
            ++st.counters;
            if (st.counterShort.empty()) {
              const auto& pool = ix_.pools[pv.pool];
              st.counterShort = "counter set " + dev.consumesCounters.front().counterSet +
                                " of pool " + std::string(pool.driver) + "/" +
                                std::string(pool.name);
            }
          } else {
            st.usable.push_back(ref);
          }
        }
      }
    }
    if (st.matching < st.ofClass) {  // which selector rejects the devices of the class
      for (uint32_t p = 0; p < nv_.pools.size(); ++p) {
        const PoolView& pv = nv_.pools[p];
        for (uint32_t s = 0; s < pv.slices.size(); ++s) {
          const SliceInfo& si = ix_.slices[pv.slices[s]];
          const auto& devices = si.slice->spec.devices;
          for (uint32_t d = 0; d < devices.size(); ++d) {
            if (ix_.classMatch(slot.classRow, si.firstDevice + d, *si.slice, devices[d], nullptr) !=
                kMatch) {
              continue;
            }
            const cel::DeviceView view{si.slice->spec.driver, &devices[d].attributes,
                                       &devices[d].capacity,
                                       devices[d].allowMultipleAllocations.value_or(false)};
            for (size_t i = 0; i < slot.selectors.size(); ++i) {
              const auto& prog = slot.selectors[i].compiled.program;
              if (prog && prog->evaluate(view).value) ++st.selectorPasses[i];
            }
          }
        }
      }
    }
    return st;
  };

  auto describe = [&](const Slot& slot, const SlotStats& st) -> std::string {
    const std::string cls = "class \"" + slot.cls->metadata.name + "\"";
    const std::string where = " on this node (" + plural(st.total, "device") + ", " +
                              std::to_string(st.ofClass) + " of the class)";
    if (!st.celError.empty()) return st.celError;
    if (st.total == 0) {
      std::string s = "no devices on this node";
      for (const auto& n : poolNotes) s += "; " + n;
      return s;
    }
    if (st.ofClass == 0) return "no device of " + cls + where;
    if (st.matching < (slot.all ? 1 : st.needed)) {
      size_t worst = 0;
      for (size_t i = 1; i < st.selectorPasses.size(); ++i) {
        if (st.selectorPasses[i] < st.selectorPasses[worst]) worst = i;
      }
      const std::string selector =
          slot.selectors.empty()
              ? std::string()
              : " matches selector " + std::string(slot.selectors[worst].expression);
      if (st.matching == 0) {
        return selector.empty() ? "no device of " + cls + " can serve the request" + where
                                : "no device of " + cls + selector + where;
      }
      return plural(st.needed, "device") + " of " + cls + " needed, only " +
             std::to_string(st.matching) + selector + where;
    }
    const int blocked = st.matching - int(st.usable.size());
    const std::string matching = plural(st.matching, "matching device") + " of " + cls;
    struct Cause {
      int n;
      std::string all;   // every matching device is blocked by this cause
      std::string part;  // one cause among several
    };
    const std::vector<Cause> causes = {
        {st.inUse, "all " + matching + " are in use", std::to_string(st.inUse) + " in use"},
        {st.taint, "all " + matching + " have an untolerated taint (" + st.taints + ")",
         std::to_string(st.taint) + " with untolerated taint " + st.taints},
        {st.counters,
         "counters exhausted: all " + matching + " need more of " + st.counterShort +
             " than is left",
         std::to_string(st.counters) + " with counters exhausted in " + st.counterShort},
        {st.capacity, "all " + matching + " lack the capacity requested",
         std::to_string(st.capacity) + " without the capacity requested"},
        {st.binding,
         "all " + matching + " have binding conditions, which need DRADeviceBindingConditions",
         std::to_string(st.binding) +
             " with binding conditions (DRADeviceBindingConditions is off)"},
        {st.noPartitions,
         "all " + matching + " consume counters, which needs DRAPartitionableDevices",
         std::to_string(st.noPartitions) + " consuming counters (DRAPartitionableDevices is off)"},
    };
    if (st.usable.empty()) {
      for (const auto& c : causes) {
        if (c.n == blocked) return c.all + where;
      }
    }
    std::string parts;
    for (const auto& c : causes) {
      if (c.n > 0) parts += (parts.empty() ? "" : "; ") + c.part;
    }
    if (slot.all) {
      return "asks for all " + matching + ", " + std::to_string(blocked) + " of them not usable (" +
             parts + ")" + where;
    }
    return "needs " + plural(st.needed, "device") + " of " + cls + ", " +
           std::to_string(st.usable.size()) + " of " + plural(st.matching, "matching device") +
           " usable (" + parts + ")" + where;
  };

  // Each request on its own.
  std::vector<SlotStats> bySlot(ix_.slots.size());
  std::vector<bool> ok(ix_.slots.size(), false);
  for (uint32_t ci = 0; ci < ix_.claims.size(); ++ci) {
    const ClaimInfo& claim = ix_.claims[ci];
    for (const RequestInfo& ri : claim.requests) {
      std::vector<std::string> subReasons;
      bool any = false;
      for (uint32_t s = ri.firstSlot; s < ri.firstSlot + ri.numSlots; ++s) {
        bySlot[s] = stats(s);
        ok[s] = bySlot[s].satisfied(ix_.slots[s].all);
        any = any || ok[s];
        if (!ok[s]) {
          subReasons.push_back((ri.hasSubs ? ix_.slots[s].fullName + ": " : std::string()) +
                               describe(ix_.slots[s], bySlot[s]));
        }
      }
      if (any) continue;
      const Slot& first = ix_.slots[ri.firstSlot];
      const std::string request(first.isSub ? first.parentName : first.name);
      error_ = savedError;
      return "claim " + claim.claim->metadata.name + ", request " + request + ": " +
             (ri.hasSubs ? "no subrequest can be satisfied: " : "") + [&] {
               std::string s;
               for (const auto& r : subReasons) s += (s.empty() ? "" : "; ") + r;
               return s;
             }();
    }
  }

  // The slot a request would use: itself or its first satisfiable subrequest.
  auto slotFor = [&](const RequestInfo& ri) {
    for (uint32_t s = ri.firstSlot; s < ri.firstSlot + ri.numSlots; ++s) {
      if (ok[s]) return s;
    }
    return ri.firstSlot;
  };

  // The constraints of each claim, on the devices each request could use.
  for (uint32_t ci = 0; ci < ix_.claims.size(); ++ci) {
    const ClaimInfo& claim = ix_.claims[ci];
    for (const auto& c : claim.claim->spec.constraints) {
      const bool distinct = !c.matchAttribute.has_value();
      const std::string& attr = distinct ? *c.distinctAttribute : *c.matchAttribute;
      std::vector<uint32_t> inScope;
      std::vector<std::string> names;
      for (const RequestInfo& ri : claim.requests) {
        const uint32_t s = slotFor(ri);
        const Slot& slot = ix_.slots[s];
        Constraint probe;
        probe.requests = &c.requests;
        const std::string_view request = slot.isSub ? slot.parentName : slot.name;
        if (!probe.applies(request, slot.isSub ? slot.name : std::string_view())) continue;
        inScope.push_back(s);
        names.push_back(slot.fullName);
      }
      // The device's value of the attribute, if the constraint can compare it (a list only with
      // DRAListTypeAttributes). With sets, distinct devices need as many values in all as
      // devices, and matching ones one value they all have: still what is checked below.
      auto comparable = [&](const DeviceRef& ref) -> const api::DeviceAttribute* {
        const auto* a = lookupAttribute(deviceOf(ref), sliceOf(ref).slice->spec.driver, attr);
        return a != nullptr && (!a->isList() || f_.listTypeAttributes) ? a : nullptr;
      };
      bool feasible = true;
      if (distinct) {
        std::set<std::string> values;
        int needed = 0;
        for (uint32_t s : inScope) {
          needed += ix_.slots[s].all ? bySlot[s].matching : bySlot[s].needed;
          for (const auto& ref : bySlot[s].usable) {
            if (const auto* a = comparable(ref)) {
              const std::set<std::string> keys = attrKeys(*a);
              values.insert(keys.begin(), keys.end());
            }
          }
        }
        feasible = int(values.size()) >= needed;
      } else {
        // Per value: how many devices each request could take, and how many devices in all.
        struct PerValue {
          std::vector<int> counts;
          std::set<uint32_t> devices;
        };
        std::map<std::string, PerValue> perValue;
        int total = 0;
        for (size_t i = 0; i < inScope.size(); ++i) {
          const SlotStats& st = bySlot[inScope[i]];
          total += ix_.slots[inScope[i]].all ? st.matching : st.needed;
          for (const auto& ref : st.usable) {
            if (const auto* a = comparable(ref)) {
              // With sets a device counts for each of its values: any of them may be the one
              // every device shares.
              for (const std::string& key : attrKeys(*a)) {
                auto& pv = perValue[key];
                pv.counts.resize(inScope.size(), 0);
                ++pv.counts[i];
                pv.devices.insert(localOf(ref));
              }
            }
          }
        }
        feasible = inScope.empty();
        for (const auto& [value, pv] : perValue) {
          bool enough = int(pv.devices.size()) >= total;
          for (size_t i = 0; i < inScope.size() && enough; ++i) {
            const SlotStats& st = bySlot[inScope[i]];
            enough = pv.counts[i] >= (ix_.slots[inScope[i]].all ? st.matching : st.needed);
          }
          feasible = feasible || enough;
        }
      }
      if (!feasible) {
        error_ = savedError;
        return "claim " + claim.claim->metadata.name + ": constraint " +
               (distinct ? "distinctAttribute " : "matchAttribute ") + attr +
               " cannot be met by the matching devices of request" +
               (names.size() == 1 ? " " : "s ") + joined(names) + " on this node";
      }
    }
  }

  // The requests together.
  int needed = 0;
  std::set<uint32_t> usable;
  bool counters = false;
  std::vector<std::string> claimNames;
  std::vector<std::string> requestNames;
  for (const ClaimInfo& claim : ix_.claims) {
    claimNames.push_back(claim.claim->metadata.name);
    for (const RequestInfo& ri : claim.requests) {
      const uint32_t s = slotFor(ri);
      requestNames.push_back(ix_.slots[s].fullName);
      if (ix_.slots[s].admin) continue;
      needed += ix_.slots[s].all ? bySlot[s].matching : bySlot[s].needed;
      for (const auto& ref : bySlot[s].usable) {
        usable.insert(localOf(ref));
        counters = counters || !deviceOf(ref).consumesCounters.empty();
      }
    }
  }
  error_ = savedError;
  const std::string who = claimNames.size() == 1
                              ? "claim " + claimNames[0] + ": requests " + joined(requestNames)
                              : "claims " + joined(claimNames);
  if (int(usable.size()) < needed) {
    return who + " together need " + plural(needed, "device") + ", only " +
           plural(static_cast<int>(usable.size()), "matching device") + " usable on this node";
  }
  if (counters) {
    return "counters exhausted: " + who +
           " together need devices that consume more shared counters than are left on this node";
  }
  return who +
         ": no combination of the usable devices satisfies every request and constraint on "
         "this node (" +
         plural(static_cast<int>(steps_), "step") + " searched)";
}

}  // namespace ksched::plugins::dra::detail
