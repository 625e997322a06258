// Device scoring (AllocatorInputs::scoring), a ksched extension: upstream's allocator keeps the
// first allocation its search finds, so the order of pools, slices and devices decides which
// GPUs a pod gets; a 4-GPU pod on a node whose GPUs alternate between two PCIe roots gets two of
// each. With scoring on, the search is run in a preferred order first:
//
//   Topology   When the pod takes several devices by count, the devices are first looked for in
//              one value of the topology attribute at a time (a domain: one PCIe root), the
//              tightest domain that can hold them first (best fit: the domains left free stay
//              big). A device without the attribute may join any domain. All-mode requests and
//              adminAccess ones take what they take; they do not count.
//   Packing    Partitions (devices consuming shared counters) of the counter sets already most
//              consumed come first, so partly used devices fill up and whole ones stay whole.
//   Fallback   When no domain holds the devices, the search runs over every device (in packing
//              order when packing, which is as complete as the first fit); when a scored attempt
//              meets a selector error or runs out of its steps, it is the first fit as upstream's.
//              Nothing that fits today stops fitting; the caller's deadline still applies.
//
// The allocation found is then rated 0..100 (Result::quality), for Score to rank the nodes by.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

// Steps (allocateOne calls) all domain attempts of one allocate() may take together: a search
// for a few devices on a node takes tens; a domain that cannot hold the pod's devices under its
// constraints may take many more before it says so, and then the first fit is what is left.
constexpr int64_t kScoringSteps = 4096;

std::string scalarText(const std::string& v) { return v; }
std::string scalarText(bool v) { return v ? "true" : "false"; }
std::string scalarText(int64_t v) { return std::to_string(v); }
std::string scalarText(const api::DeviceAttribute::Version& v) { return v.value; }

// The domain a device is in: its attribute's value; of a list (DRAListTypeAttributes, e.g. a
// numaNode list of the device's own node and the nodes near it), the first, the device's own.
std::string scoringValueText(const api::DeviceAttribute& a) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, api::DeviceAttribute::Bools>) {
          return v.empty() ? std::string() : scalarText(static_cast<bool>(v.front()));
        } else if constexpr (requires { v.front(); } && !std::is_same_v<T, std::string>) {
          return v.empty() ? std::string() : scalarText(v.front());
        } else {
          return scalarText(v);
        }
      },
      a.value);
}

// "resource.kubernetes.io/pcieRoot" -> "pcieRoot".
std::string_view scoringShortName(std::string_view attribute) {
  const size_t slash = attribute.rfind('/');
  return slash == std::string_view::npos ? attribute : attribute.substr(slash + 1);
}

std::string devicesText(int64_t n) { return std::to_string(n) + (n == 1 ? " device" : " devices"); }

}  // namespace

int64_t Search::countedDevices() const {
  int64_t need = 0;
  for (const ClaimInfo& claim : ix_.claims) {
    for (const RequestInfo& ri : claim.requests) {
      if (ri.numSlots == 0) continue;
      int64_t least = INT64_MAX;
      for (uint32_t s = ri.firstSlot; s < ri.firstSlot + ri.numSlots; ++s) {
        const Slot& slot = ix_.slots[s];
        least = std::min(least, slot.all || slot.admin ? int64_t{0} : slot.count);
      }
      need += least;
    }
  }
  return need;
}

std::vector<const api::DeviceAttribute*> Search::domains(int64_t need) {
  const std::string& attribute = ix_.in.scoring.topologyAttribute;
  struct Domain {
    const api::DeviceAttribute* value;
    int64_t free;
  };
  std::vector<Domain> found;
  int64_t neutral = 0;
  forEachDevice([&](const DeviceRef& ref, const api::Device& dev, const SliceInfo& si) {
    if (deviceInUse(ref)) return;
    if (!dev.consumesCounters.empty() && (!f_.partitionableDevices || !countersFit(ref))) {
      return;
    }
    bool wanted = false;
    for (uint32_t k = 0; k < ix_.slots.size() && !wanted; ++k) {
      const Slot& slot = ix_.slots[k];
      wanted = !slot.all && !slot.admin && slot.staticError.empty() &&
               isSelectable(k, ref) == Take::kYes;
    }
    if (!wanted) return;
    const api::DeviceAttribute* value = lookupAttribute(dev, si.slice->spec.driver, attribute);
    if (value == nullptr) {
      ++neutral;
      return;
    }
    auto it = std::find_if(found.begin(), found.end(),
                           [&](const Domain& dm) { return *dm.value == *value; });
    if (it == found.end()) {
      found.push_back({value, 1});
    } else {
      ++it->free;
    }
  });
  error_.clear();  // a selector's error is the search's to report, if it meets it
  std::vector<const api::DeviceAttribute*> out;
  if (found.size() < 2) return out;  // one domain or none: nothing to choose
  std::stable_sort(found.begin(), found.end(),
                   [](const Domain& a, const Domain& b) { return a.free < b.free; });
  for (const Domain& dm : found) {
    if (dm.free + neutral >= need) out.push_back(dm.value);
  }
  return out;
}

double Search::setShare(uint32_t pool, std::string_view set, bool inFlight) const {
  const GenCounters* counters = nv_.pools[pool].counters;
  if (counters == nullptr) return 0;
  const auto total = counters->total.find(set);
  const auto available = counters->available.find(set);
  if (total == counters->total.end() || available == counters->available.end()) return 0;
  const CounterAmounts* taken = nullptr;
  if (inFlight) {
    const auto it = counterUse_[pool].find(set);
    if (it != counterUse_[pool].end()) taken = &it->second;
  }
  double share = 0;
  for (const auto& [name, amount] : total->second) {
    const auto a = available->second.find(name);
    if (amount.sign() <= 0 || a == available->second.end()) continue;
    api::Quantity used = amount - a->second;
    if (taken != nullptr) {
      if (auto t = taken->find(name); t != taken->end()) used += t->second;
    }
    share = std::max(
        share, static_cast<double>(used.milliValue()) / static_cast<double>(amount.milliValue()));
  }
  return std::clamp(share, 0.0, 1.0);
}

void Search::orderDevices(const api::DeviceAttribute* domain) {
  const DeviceScoring& scoring = ix_.in.scoring;
  ordered_ = true;
  order_.clear();
  std::vector<double> share;
  forEachDevice([&](const DeviceRef& ref, const api::Device& dev, const SliceInfo& si) {
    if (domain != nullptr) {
      const api::DeviceAttribute* value =
          lookupAttribute(dev, si.slice->spec.driver, scoring.topologyAttribute);
      if (value != nullptr && !(*value == *domain)) return;
    }
    order_.push_back(ref);
    if (!scoring.packPartitions) return;
    double most = 0;
    for (const auto& c : dev.consumesCounters) {
      most = std::max(most, setShare(ref.pool, c.counterSet, false));
    }
    share.push_back(most);
  });
  if (!scoring.packPartitions) return;
  std::vector<uint32_t> idx(order_.size());
  for (uint32_t i = 0; i < idx.size(); ++i) idx[i] = i;
  std::stable_sort(idx.begin(), idx.end(),
                   [&](uint32_t a, uint32_t b) { return share[a] > share[b]; });
  std::vector<DeviceRef> sorted;
  sorted.reserve(idx.size());
  for (uint32_t i : idx) sorted.push_back(order_[i]);
  order_ = std::move(sorted);
}

Step Search::searchScored() {
  const DeviceScoring& scoring = ix_.in.scoring;
  if (!scoring.topologyAttribute.empty()) {
    const int64_t need = countedDevices();
    if (need > 1) {
      stepLimit_ = steps_ + kScoringSteps;
      for (const api::DeviceAttribute* domain : domains(need)) {
        orderDevices(domain);
        const Step s = allocateOne({}, false, {});
        if (s == Step::kDone) {
          stepLimit_ = INT64_MAX;
          return s;
        }
        if (s == Step::kStop) {
          if (timedOut_) return s;
          error_.clear();
          break;  // out of steps, or a selector error the first fit reports if it meets it
        }
      }
      stepLimit_ = INT64_MAX;
      overBudget_ = false;
    }
  }
  if (scoring.packPartitions) {
    // Every device, in another order: as complete as the first fit.
    orderDevices(nullptr);
    const Step s = allocateOne({}, false, {});
    if (s != Step::kStop || timedOut_) return s;
    error_.clear();
  }
  ordered_ = false;
  return allocateOne({}, false, {});
}

Result::Quality Search::quality() const {
  const DeviceScoring& scoring = ix_.in.scoring;
  std::vector<std::string> why;
  int64_t aligned = -1;
  int64_t packed = -1;
  if (!scoring.topologyAttribute.empty()) {
    struct Group {
      const api::DeviceAttribute* value;
      int64_t n;
    };
    std::vector<Group> groups;
    int64_t counted = 0;
    for (const auto& picks : picks_) {
      for (const Picked& p : picks) {
        const Slot& slot = ix_.slots[p.slot];
        if (slot.all || slot.admin) continue;
        const api::DeviceAttribute* value = lookupAttribute(
            deviceOf(p.ref), sliceOf(p.ref).slice->spec.driver, scoring.topologyAttribute);
        if (value == nullptr) continue;
        ++counted;
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const Group& g) { return *g.value == *value; });
        if (it == groups.end()) {
          groups.push_back({value, 1});
        } else {
          ++it->n;
        }
      }
    }
    const std::string name(scoringShortName(scoring.topologyAttribute));
    if (groups.empty()) {
      aligned = 100;
      why.push_back("no device with " + name);
    } else {
      const Group& biggest = *std::max_element(
          groups.begin(), groups.end(), [](const Group& a, const Group& b) { return a.n < b.n; });
      aligned = 100 * biggest.n / counted;
      if (groups.size() == 1) {
        why.push_back(devicesText(counted) + " in " + name + " " +
                      scoringValueText(*biggest.value));
      } else {
        why.push_back(devicesText(counted) + " split over " + std::to_string(groups.size()) + " " +
                      name + " values, " + std::to_string(biggest.n) + " in " +
                      scoringValueText(*biggest.value));
      }
    }
  }
  if (scoring.packPartitions) {
    std::set<std::pair<uint32_t, std::string_view>> sets;
    for (const auto& picks : picks_) {
      for (const Picked& p : picks) {
        if (!p.countersTaken) continue;
        for (const auto& c : deviceOf(p.ref).consumesCounters)
          sets.emplace(p.ref.pool, c.counterSet);
      }
    }
    if (sets.empty()) {
      packed = 100;
      why.push_back("no partitions");
    } else {
      double sum = 0;
      for (const auto& [pool, set] : sets) sum += setShare(pool, set, true);
      packed = std::lround(100 * sum / static_cast<double>(sets.size()));
      why.push_back(sets.size() == 1
                        ? "partitions fill counter set " + std::string(sets.begin()->second) +
                              " to " + std::to_string(packed) + "%"
                        : "partitions fill their " + std::to_string(sets.size()) +
                              " counter sets to " + std::to_string(packed) + "% on average");
    }
  }
  Result::Quality q;
  // Topology weighs three times packing: one domain before tight partitions.
  if (aligned >= 0 && packed >= 0) {
    q.score = (3 * aligned + packed) / 4;
  } else {
    q.score = aligned >= 0 ? aligned : packed;
  }
  for (size_t i = 0; i < why.size(); ++i) q.reason += (i > 0 ? "; " : "") + why[i];
  return q;
}

}  // namespace ksched::plugins::dra::detail
