#include "framework/framework.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>
#include <utility>

#include <ksched/api/features.h>

namespace ksched::framework {

Framework::Framework(const config::Profile& profile, const Registry& registry, Services services,
                     const std::string& fieldPrefix)
    : profileName_(profile.schedulerName),
      percentage_(profile.percentageOfNodesToScore),
      placementPercentage_(profile.percentageOfPlacementsToScore),
      services_(std::move(services)) {
  build(profile, registry, fieldPrefix);
}

Framework::~Framework() {
  waiting_.rejectAll("scheduler is shutting down");
  waiting_.stopTimer();
}

void Framework::build(const config::Profile& profile, const Registry& registry,
                      const std::string& prefix) {
  const config::Wiring wiring = config::wire(profile, registry, prefix, services_.features);
  std::vector<std::string> errors = wiring.errors;
  // Each plugin once, with the services in place.
  std::vector<Plugin*> built(wiring.plugins.size(), nullptr);
  if (errors.empty()) {
    for (size_t i = 0; i < wiring.plugins.size(); ++i) {
      const config::WiredPlugin& wp = wiring.plugins[i];
      try {
        owned_.push_back(wp.factory->create(wp.args, *this));
        built[i] = owned_.back().get();
      } catch (const PluginArgsError& e) {
        errors.push_back(wp.argsPath + "." + e.what());
      } catch (const std::exception& e) {
        errors.push_back(wp.argsPath + ": " + e.what());
      }
    }
  }
  if (!errors.empty()) {
    std::string all;
    for (const auto& e : errors) all += (all.empty() ? "" : "\n") + e;
    throw FrameworkError(all);
  }
  // One typed list per extension point of the table, in the wiring's order.
  for (const ExtensionPoint point : kAllExtensionPoints) {
    for (const config::WiredRef& ref : wiring.at(point)) {
      if (!lists_.add(point, built[ref.plugin], ref.weight)) {
        throw FrameworkError(prefix + ": plugin \"" + wiring.plugins[ref.plugin].name +
                             "\" does not implement " + std::string(extensionPointName(point)) +
                             " although its factory says so");
      }
    }
  }
  // A plugin enabled somewhere but not at Reserve, which it implements: whatever it keeps at
  // Reserve (placed pods, claims) is not kept, which its other points may rely on.
  const auto reserving = lists_.plugins(ExtensionPoint::kReserve);
  for (size_t i = 0; i < built.size(); ++i) {
    const Plugin* p = built[i];
    if (!extensionPointsOf(*p).has(ExtensionPoint::kReserve) ||
        std::find(reserving.begin(), reserving.end(), p) != reserving.end()) {
      continue;
    }
    std::string at;
    for (const ExtensionPoint point : kAllExtensionPoints) {
      const auto list = lists_.plugins(point);
      if (std::find(list.begin(), list.end(), p) != list.end())
        at += (at.empty() ? "" : ", ") + std::string(extensionPointName(point));
    }
    if (at.empty()) continue;
    warnings_.push_back(prefix + ".plugins: plugin \"" + wiring.plugins[i].name +
                        "\" is enabled at " + at +
                        " but not at Reserve, which it implements: what it keeps there is not "
                        "kept (enable it under multiPoint)");
    spdlog::warn("{}", warnings_.back());
  }
  std::vector<const Plugin*> all;
  for (const auto& p : owned_) {
    all.push_back(p.get());
    const ExtensionPoints points = extensionPointsOf(*p);
    if (points.has(ExtensionPoint::kPreEnqueue) || points.has(ExtensionPoint::kPreFilter) ||
        points.has(ExtensionPoint::kFilter) || points.has(ExtensionPoint::kReserve) ||
        points.has(ExtensionPoint::kPermit) || points.has(ExtensionPoint::kPlacementFeasible)) {
      enqueueCandidates_.push_back(p.get());
    }
  }
  instrumentation_ = std::make_unique<Instrumentation>(services_.metrics, profileName_, all);
  // Opportunistic batching needs a signature from every plugin that filters or scores.
  batching_ = services_.features.enabled(features::Feature::kOpportunisticBatching);
  std::set<const Plugin*> signing;
  for (const auto* p : plugins<ExtensionPoint::kPreFilter>()) signing.insert(p);
  for (const auto* p : plugins<ExtensionPoint::kFilter>()) signing.insert(p);
  for (const auto* p : plugins<ExtensionPoint::kPreScore>()) signing.insert(p);
  for (const auto* p : plugins<ExtensionPoint::kScore>()) signing.insert(p);
  for (const Plugin* p : signing) {
    const auto* signer = dynamic_cast<const SignPlugin*>(p);
    if (signer == nullptr) {
      batching_ = false;
      break;
    }
    signers_.push_back(signer);
  }
}

bool Framework::signPod(const api::Pod& pod) const {
  if (!batching_ || !extenders().empty()) return false;
  for (const SignPlugin* s : signers_) {
    if (!s->signPod(pod)) return false;
  }
  return true;
}

const ScorePlugin* Framework::scorePlugin(std::string_view name) const {
  for (const ScorePlugin* p : plugins<ExtensionPoint::kScore>()) {
    if (p->name() == name) return p;
  }
  return nullptr;
}

std::vector<std::string> Framework::explainRejection(const CycleState& state,
                                                     const Status& rejection, const api::Pod& pod,
                                                     const NodeInfo& node) const {
  if (!rejection.details().empty()) return rejection.details();
  if (rejection.plugin().empty() || node.node() == nullptr) return {};
  for (const auto& p : owned_) {
    if (p->name() != rejection.plugin()) continue;
    const auto* explainer = dynamic_cast<const FilterExplainer*>(p.get());
    return explainer != nullptr ? explainer->explainRejection(state, pod, node)
                                : std::vector<std::string>{};
  }
  return {};
}

void Framework::start() {
  for (auto& p : owned_) p->start();
}

void Framework::close() {
  asyncWork_.drain();
  for (auto& p : owned_) p->close();
  waiting_.stopTimer();
}

std::map<std::string, std::vector<ClusterEventWithHint>> Framework::enqueueEvents() const {
  std::map<std::string, std::vector<ClusterEventWithHint>> out;
  for (Plugin* p : enqueueCandidates_) {
    if (auto* ext = dynamic_cast<EnqueueExtensions*>(p)) {
      out[std::string(p->name())] = ext->eventsToRegister();
    } else {
      out[std::string(p->name())] = {ClusterEventWithHint(EventResource::kWildcard, kAll)};
    }
  }
  return out;
}

std::map<std::string, std::vector<std::string>> Framework::pluginsPerExtensionPoint() const {
  std::map<std::string, std::vector<std::string>> out;
  for (const ExtensionPoint point : kAllExtensionPoints) {
    const auto list = lists_.plugins(point);
    for (size_t k = 0; k < list.size(); ++k) {
      std::string name(list[k]->name());
      if (point == ExtensionPoint::kScore) name += ":" + std::to_string(lists_.scoreWeights()[k]);
      out[std::string(extensionPointName(point))].push_back(std::move(name));
    }
  }
  return out;
}

const NodeInfoLister& Framework::snapshot() const {
  if (snapshot_ == nullptr) throw std::logic_error("no snapshot outside a scheduling cycle");
  return *snapshot_;
}

const ClusterListers& Framework::listers() const {
  static const StaticClusterListers kNone;
  return services_.listers != nullptr ? *services_.listers : kNone;
}

void Framework::addPodEventHandlers(PodEventHandlers handlers) {
  if (services_.addPodEventHandlers) services_.addPodEventHandlers(std::move(handlers));
}

std::shared_ptr<void> SharedObjects::get(std::string_view key,
                                         const std::function<std::shared_ptr<void>()>& make) {
  std::lock_guard lock(mu_);
  auto it = objects_.find(key);
  if (it == objects_.end()) it = objects_.emplace(std::string(key), make()).first;
  return it->second;
}

std::shared_ptr<const ObjectStore> Framework::watchObjects(const ObjectWatch& what,
                                                           ObjectEventHandlers handlers) {
  if (services_.watchObjects) return services_.watchObjects(what, std::move(handlers));
  return std::make_shared<EmptyObjectStore>();
}

void Framework::activate(const std::vector<PodPtr>& pods) {
  if (services_.activate) services_.activate(pods);
}

std::shared_ptr<const NodeInfo> Framework::currentNodeInfo(std::string_view nodeName) const {
  return services_.currentNodeInfo ? services_.currentNodeInfo(nodeName) : nullptr;
}

std::vector<PodInfoPtr> Framework::nominatedPodsForNode(const std::string& nodeName) const {
  if (!services_.nominatedPodsForNode) return {};
  return services_.nominatedPodsForNode(nodeName);
}

}  // namespace ksched::framework
