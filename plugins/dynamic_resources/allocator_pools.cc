// The slice index (once per set of slices) and the pools one node sees (upstream's GatherPools).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

bool hasDuplicateNames(const api::ResourceSlice& slice) {
  const auto& devices = slice.spec.devices;
  if (devices.size() < 2) return false;
  std::vector<std::string_view> names;
  names.reserve(devices.size());
  for (const auto& d : devices) names.push_back(d.name);
  std::sort(names.begin(), names.end());
  return std::adjacent_find(names.begin(), names.end()) != names.end();
}

// The first name two devices of these slices share, or "".
std::string_view duplicateName(const std::vector<SliceInfo>& info,
                               const std::vector<uint32_t>& slices) {
  if (slices.size() == 1) {
    const auto& s = info[slices[0]];
    if (!s.dupNames) return {};
  }
  std::unordered_set<std::string_view> seen;
  for (uint32_t si : slices) {
    for (const auto& d : info[si].slice->spec.devices) {
      if (!seen.insert(d.name).second) return d.name;
    }
  }
  return {};
}

struct Candidate {
  uint32_t pool = 0;
  int64_t generation = 0;
  std::vector<uint32_t> slices;
};

}  // namespace

bool nodeMatches(const api::Node& node, const std::optional<std::string>& nodeName,
                 const std::optional<bool>& allNodes,
                 const std::optional<api::NodeSelector>& selector) {
  if (nodeName && !nodeName->empty()) return node.metadata.name == *nodeName;
  if (allNodes.value_or(false)) return true;
  if (selector) return selector->matches(node);
  return false;
}

const GenCounters& Index::genCounters(uint32_t poolIndex, int64_t generation) const {
  const PoolInfo& pool = pools[poolIndex];
  PoolCounters& counters = poolCounters[poolIndex];
  GenCounters* gc = nullptr;
  {
    std::lock_guard lock(counters.mu);
    auto& entry = counters.byGeneration[generation];
    if (!entry) entry = std::make_unique<GenCounters>();
    gc = entry.get();
  }
  std::call_once(gc->once, [&] {
    std::vector<uint32_t> deviceSlices;
    for (uint32_t si : pool.slices) {
      const auto& spec = slices[si].slice->spec;
      if (spec.pool.generation != generation) continue;
      if (spec.sharedCounters.empty()) {
        deviceSlices.push_back(si);
        continue;
      }
      for (const auto& set : spec.sharedCounters) {
        if (!gc->available.try_emplace(set.name, set.counters).second) {
          gc->invalidReason = "duplicate counter set name " + set.name;
          return;
        }
        gc->total.try_emplace(set.name, set.counters);
      }
    }
    for (uint32_t si : deviceSlices) {
      for (const auto& d : slices[si].slice->spec.devices) {
        for (const auto& use : d.consumesCounters) {
          auto set = gc->available.find(use.counterSet);
          if (set == gc->available.end()) {
            gc->invalidReason = "counter set " + use.counterSet + " not found";
            return;
          }
          for (const auto& [name, value] : use.counters) {
            if (!set->second.contains(name)) {
              gc->invalidReason = "counter " + name + " not found in counter set " + set->first;
              return;
            }
          }
        }
      }
    }
    for (uint32_t si : deviceSlices) {
      const auto& info = slices[si];
      const auto& devices = info.slice->spec.devices;
      for (size_t i = 0; i < devices.size(); ++i) {
        if (devices[i].consumesCounters.empty()) continue;
        if (!allocated(info.firstDevice + static_cast<uint32_t>(i), *info.slice, devices[i])) {
          continue;
        }
        for (const auto& use : devices[i].consumesCounters) {
          auto& set = gc->available[use.counterSet];
          for (const auto& [name, value] : use.counters) set[name] -= value;
        }
      }
    }
  });
  return *gc;
}

NodeView Index::gatherPools(const api::Node& node) const {
  const Features& f = in.features;
  std::vector<Candidate> candidates;
  auto add = [&](uint32_t si) {
    const auto& spec = slices[si].slice->spec;
    const uint32_t pool = slices[si].pool;
    auto it = std::find_if(candidates.begin(), candidates.end(),
                           [&](const Candidate& c) { return c.pool == pool; });
    if (it == candidates.end()) {
      candidates.push_back({pool, spec.pool.generation, {si}});
    } else if (spec.pool.generation > it->generation) {
      it->generation = spec.pool.generation;
      it->slices.assign(1, si);
    } else if (spec.pool.generation == it->generation) {
      it->slices.push_back(si);
    }
  };
  auto consider = [&](uint32_t si) {
    const auto& spec = slices[si].slice->spec;
    if (!f.partitionableDevices &&
        (spec.perDeviceNodeSelection.has_value() || !spec.sharedCounters.empty())) {
      return;
    }
    bool relevant = false;
    if ((spec.nodeName && !spec.nodeName->empty()) || spec.allNodes.value_or(false) ||
        spec.nodeSelector) {
      relevant = nodeMatches(node, spec.nodeName, spec.allNodes, spec.nodeSelector);
    } else if (spec.perDeviceNodeSelection.value_or(false)) {
      relevant = std::any_of(spec.devices.begin(), spec.devices.end(), [&](const api::Device& d) {
        return nodeMatches(node, d.nodeName, d.allNodes, d.nodeSelector);
      });
    } else {
      return;  // a way of reaching nodes this version does not know
    }
    if (relevant) add(si);
  };
  if (auto it = slicesOnNode.find(node.metadata.name); it != slicesOnNode.end()) {
    for (uint32_t si : it->second) consider(si);
  }
  for (uint32_t si : slicesShared) consider(si);

  NodeView view;
  view.pools.reserve(candidates.size());
  auto byName = [&](uint32_t a, uint32_t b) {
    return slices[a].slice->metadata.name < slices[b].slice->metadata.name;
  };
  for (auto& c : candidates) {
    const PoolInfo& pool = pools[c.pool];
    const int64_t count = slices[c.slices[0]].slice->spec.pool.resourceSliceCount;
    PoolView pv;
    pv.pool = c.pool;
    pv.generation = c.generation;
    std::vector<uint32_t> all;  // every slice of the generation, when the node's are not all
    if (static_cast<int64_t>(c.slices.size()) != count) {
      bool obsolete = false;
      for (uint32_t si : pool.slices) {
        const int64_t g = slices[si].slice->spec.pool.generation;
        if (g > c.generation) obsolete = true;
        if (g == c.generation) all.push_back(si);
      }
      if (obsolete) continue;  // the driver is replacing this generation
      if (static_cast<int64_t>(all.size()) != count) {
        pv.incomplete = true;
        view.pools.push_back(std::move(pv));
        continue;
      }
    }
    std::stable_sort(c.slices.begin(), c.slices.end(), byName);
    std::vector<uint32_t> deviceSlices;
    for (uint32_t si : c.slices) {
      if (f.partitionableDevices && !slices[si].slice->spec.sharedCounters.empty()) continue;
      deviceSlices.push_back(si);
    }
    if (auto dup = duplicateName(slices, deviceSlices); !dup.empty()) {
      pv.invalid = true;
      pv.invalidReason = "duplicate device name " + std::string(dup);
      view.pools.push_back(std::move(pv));
      continue;
    }
    if (f.partitionableDevices) {
      const GenCounters& gc = genCounters(c.pool, c.generation);
      if (!gc.invalidReason.empty()) {
        pv.invalid = true;
        pv.invalidReason = gc.invalidReason;
        view.pools.push_back(std::move(pv));
        continue;
      }
      if (!gc.available.empty()) pv.counters = &gc;
    }
    for (uint32_t si : deviceSlices) {
      for (const auto& d : slices[si].slice->spec.devices) {
        if (!d.bindingConditions.empty()) pv.bindingConditions = true;
      }
    }
    pv.slices = std::move(deviceSlices);
    view.pools.push_back(std::move(pv));
  }

  std::sort(view.pools.begin(), view.pools.end(), [&](const PoolView& a, const PoolView& b) {
    if (a.bindingConditions != b.bindingConditions) return b.bindingConditions;
    const PoolInfo& pa = pools[a.pool];
    const PoolInfo& pb = pools[b.pool];
    if (pa.driver != pb.driver) return pa.driver < pb.driver;
    return pa.name < pb.name;
  });
  for (auto& pv : view.pools) {
    pv.localBase.reserve(pv.slices.size());
    for (uint32_t si : pv.slices) {
      pv.localBase.push_back(view.localDevices);
      view.localDevices += static_cast<uint32_t>(slices[si].slice->spec.devices.size());
    }
  }
  return view;
}

}  // namespace ksched::plugins::dra::detail

namespace ksched::plugins::dra {

std::shared_ptr<const SliceIndex> indexSlices(
    std::span<const std::shared_ptr<const api::ResourceSlice>> input) {
  auto index = std::make_shared<SliceIndex>();
  auto& slices = index->slices;
  auto& pools = index->pools;
  std::map<std::pair<std::string_view, std::string_view>, uint32_t> byId;
  slices.reserve(input.size());
  for (const auto& ptr : input) {
    if (!ptr) continue;
    const auto& s = *ptr;
    const auto key =
        std::make_pair(std::string_view(s.spec.driver), std::string_view(s.spec.pool.name));
    auto [it, added] = byId.try_emplace(key, static_cast<uint32_t>(pools.size()));
    if (added) pools.push_back({key.first, key.second, {}});
    const auto si = static_cast<uint32_t>(slices.size());
    pools[it->second].slices.push_back(si);
    slices.push_back({&s, it->second, index->numDevices, detail::hasDuplicateNames(s)});
    index->numDevices += static_cast<uint32_t>(s.spec.devices.size());
    if (s.spec.nodeName && !s.spec.nodeName->empty()) {
      index->slicesOnNode[*s.spec.nodeName].push_back(si);
    } else {
      index->slicesShared.push_back(si);
    }
  }
  return index;
}

}  // namespace ksched::plugins::dra
