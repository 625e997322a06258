#include "plugins/selector_spread/selector_spread.h"

#include <algorithm>
#include <map>
#include <utility>

#include <ksched/api/pod.h>
#include <ksched/api/selectors.h>
#include <ksched/helper/default_selector.h>

namespace ksched::plugins {
namespace {

constexpr std::string_view kBetaZone = "failure-domain.beta.kubernetes.io/zone";
constexpr std::string_view kBetaRegion = "failure-domain.beta.kubernetes.io/region";

// When zone information is present, 2/3 of the weight goes to zone spreading, 1/3 to nodes.
constexpr double kZoneWeighting = 2.0 / 3.0;

struct PreScoreState final : StateData {
  api::Selector selector;

  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<PreScoreState>(*this);
  }
};

constexpr StateKey<PreScoreState> kPreScoreKey{SelectorSpread::kPreScoreStateKey};

// Pods with their own spreading constraints are PodTopologySpread's alone (defaults of that
// plugin are not considered).
bool skipSelectorSpread(const api::Pod& pod) { return !pod.spec.topologySpreadConstraints.empty(); }

std::string_view labelOr(const api::Labels& labels, std::string_view key,
                         std::string_view fallback) {
  if (auto it = labels.find(key); it != labels.end()) return it->second;
  if (auto it = labels.find(fallback); it != labels.end()) return it->second;
  return {};
}

int64_t countMatchingPods(const std::string& ns, const api::Selector& selector,
                          const NodeInfo& nodeInfo) {
  if (nodeInfo.pods().empty() || selector.isEverything()) return 0;
  int64_t count = 0;
  for (const PodInfoPtr& pi : nodeInfo.pods()) {
    const api::Pod& p = *pi->pod;
    if (p.metadata.namespace_ == ns && !p.metadata.deletionTimestamp &&
        selector.matches(p.metadata.labels)) {
      ++count;
    }
  }
  return count;
}

Status nodeNotInSnapshot(const std::string& name) {
  return Status::error("getting node \"" + name +
                       "\" from Snapshot: nodeinfo not found for node name \"" + name + "\"");
}

}  // namespace

std::string legacyZoneKey(const api::Node& node) {
  const api::Labels& labels = node.metadata.labels;
  const std::string_view zone = labelOr(labels, kBetaZone, api::kLabelTopologyZone);
  const std::string_view region = labelOr(labels, kBetaRegion, api::kLabelTopologyRegion);
  if (zone.empty() && region.empty()) return {};
  std::string key(region);
  key += ':';
  key += '\0';
  key += ':';
  key += zone;
  return key;
}

Status SelectorSpread::preScore(CycleState& state, const api::Pod& pod,
                                const std::vector<const NodeInfo*>& /*nodes*/) {
  if (skipSelectorSpread(pod)) return Status::skip();
  auto s = std::make_unique<PreScoreState>();
  s->selector = helper::legacyDefaultSelector(pod, handle_->listers());
  state.write(kPreScoreKey, std::move(s));
  return {};
}

Status SelectorSpread::score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const {
  score = 0;
  if (skipSelectorSpread(pod)) return {};
  const PreScoreState* s = state.read(kPreScoreKey);
  if (s == nullptr) {
    return Status::error("reading \"" + std::string(kPreScoreStateKey) +
                         "\" from cycleState: not found");
  }
  score = countMatchingPods(pod.metadata.namespace_, s->selector, nodeInfo);
  return {};
}

Status SelectorSpread::normalizeScore(const CycleState& /*state*/, const api::Pod& pod,
                                      std::vector<NodeScore>& scores) const {
  if (skipSelectorSpread(pod)) return {};
  const NodeInfoLister& snapshot = handle_->snapshot();

  // The zone of each scored node ("" when it has none), then the counts per zone.
  std::vector<std::string> zones;
  zones.reserve(scores.size());
  std::map<std::string, int64_t, std::less<>> countsByZone;
  int64_t maxCountByNodeName = 0;
  for (const NodeScore& ns : scores) {
    maxCountByNodeName = std::max(maxCountByNodeName, ns.score);
    const NodeInfo* ni = snapshot.get(ns.name);
    if (ni == nullptr || ni->node() == nullptr) return nodeNotInSnapshot(ns.name);
    zones.push_back(legacyZoneKey(*ni->node()));
    if (!zones.back().empty()) countsByZone[zones.back()] += ns.score;
  }
  int64_t maxCountByZone = 0;
  for (const auto& [zone, count] : countsByZone) maxCountByZone = std::max(maxCountByZone, count);
  const bool haveZones = !countsByZone.empty();

  const auto maxNodeScore = static_cast<double>(kMaxNodeScore);
  for (size_t i = 0; i < scores.size(); ++i) {
    double fScore = maxNodeScore;
    if (maxCountByNodeName > 0) {
      fScore = maxNodeScore * (static_cast<double>(maxCountByNodeName - scores[i].score) /
                               static_cast<double>(maxCountByNodeName));
    }
    if (haveZones && !zones[i].empty()) {
      double zoneScore = maxNodeScore;
      if (maxCountByZone > 0) {
        zoneScore = maxNodeScore * (static_cast<double>(maxCountByZone - countsByZone[zones[i]]) /
                                    static_cast<double>(maxCountByZone));
      }
      fScore = (fScore * (1.0 - kZoneWeighting)) + (kZoneWeighting * zoneScore);
    }
    scores[i].score = static_cast<int64_t>(fScore);
  }
  return {};
}

PluginFactory selectorSpreadFactory() {
  return makePluginFactory<SelectorSpread>(
      [](Handle& handle) { return std::make_unique<SelectorSpread>(handle); });
}

}  // namespace ksched::plugins
