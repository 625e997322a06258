#include "plugins/load_aware/load_aware.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <sstream>

#include <ksched/api/pod_resources.h>
#include <ksched/api/quantity.h>
#include <ksched/api/rfc3339.h>
#include <ksched/cycle_state.h>
#include <ksched/helper/args_json.h>
#include <ksched/node_info.h>

#include "util/duration.h"

namespace ksched::plugins {

using nlohmann::json;

namespace {

[[noreturn]] void invalid(const std::string& path, const std::string& what) {
  throw PluginArgsError(path + ": " + what);
}

std::chrono::milliseconds readDuration(const json& j, std::string_view key, const std::string& path,
                                       std::chrono::milliseconds current) {
  std::string text;
  const std::string p = helper::childPath(path, key);
  if (!helper::readString(j, key, path, text)) return current;
  auto d = util::parseDuration(text);
  if (!d) invalid(p, "Invalid value: \"" + text + "\": not a duration (\"30s\", \"2m\")");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(*d);
  if (ms.count() <= 0) invalid(p, "Invalid value: \"" + text + "\": must be greater than 0");
  return ms;
}

// "metricProvider" (Trimaran's, with ksched's queries and timings) and "watcherAddress".
load::ProviderConfig readProvider(const json& j) {
  load::ProviderConfig c;
  if (const json* w = helper::member(j, "watcherAddress")) {
    invalid("watcherAddress",
            "Unsupported value: " + w->dump() +
                ": ksched reads metricProvider itself and does not use load-watcher");
  }
  const json* m = helper::member(j, "metricProvider");
  if (m == nullptr) return c;
  const std::string path = "metricProvider";
  helper::expectObject(
      *m, path,
      {"type", "address", "token", "insecureSkipVerify", "cpuQuery", "memoryQuery",
       "cpuStddevQuery", "memoryStddevQuery", "nodeLabel", "refreshInterval", "staleAfter"});
  helper::readString(*m, "type", path, c.type);
  if (c.type.empty()) c.type = std::string(load::kMetricsServer);
  if (c.type != load::kMetricsServer && c.type != load::kPrometheus) {
    invalid(path + ".type",
            "Unsupported value: \"" + c.type +
                "\": supported values: \"KubernetesMetricsServer\", \"Prometheus\"");
  }
  helper::readString(*m, "address", path, c.address);
  helper::readString(*m, "token", path, c.token);
  if (const json* v = helper::member(*m, "insecureSkipVerify")) {
    if (!v->is_boolean()) {
      invalid(path + ".insecureSkipVerify",
              "expected a boolean, got " + std::string(v->type_name()));
    }
    c.insecureSkipVerify = v->get<bool>();
  }
  for (const auto& [key, field] :
       {std::pair{"cpuQuery", &c.cpuQuery}, std::pair{"memoryQuery", &c.memoryQuery},
        std::pair{"cpuStddevQuery", &c.cpuStddevQuery},
        std::pair{"memoryStddevQuery", &c.memoryStddevQuery},
        std::pair{"nodeLabel", &c.nodeLabel}}) {
    helper::readString(*m, key, path, *field);
  }
  c.refreshInterval = readDuration(*m, "refreshInterval", path, c.refreshInterval);
  c.staleAfter = readDuration(*m, "staleAfter", path, c.staleAfter);
  if (c.type == load::kPrometheus) {
    if (c.address.empty())
      invalid(path + ".address", "Required value: Prometheus needs an address");
    if (!c.address.starts_with("http://") && !c.address.starts_with("https://")) {
      invalid(path + ".address",
              "Invalid value: \"" + c.address + "\": must start with http:// or https://");
    }
    if (c.cpuQuery.empty()) invalid(path + ".cpuQuery", "Required value");
    if (c.memoryQuery.empty()) invalid(path + ".memoryQuery", "Required value");
    if (c.nodeLabel.empty()) invalid(path + ".nodeLabel", "Required value");
  } else if (!c.address.empty()) {
    invalid(path + ".address",
            "Invalid value: \"" + c.address +
                "\": KubernetesMetricsServer is read through the scheduler's apiserver connection");
  }
  return c;
}

double readNumber(const json& j, std::string_view key, double current) {
  const json* v = helper::member(j, key);
  if (v == nullptr) return current;
  if (!v->is_number())
    invalid(std::string(key), "expected a number, got " + std::string(v->type_name()));
  return v->get<double>();
}

std::string percent(double ratio) {
  std::ostringstream s;
  s << static_cast<int64_t>(std::round(ratio * 100)) << "%";
  return s.str();
}

}  // namespace

TargetLoadPackingArgs TargetLoadPackingArgs::fromJson(const json& j) {
  TargetLoadPackingArgs a;
  if (j.is_null()) return a;
  helper::expectObject(
      j, "",
      {helper::kApiVersionKey, helper::kKindKey, "metricProvider", "watcherAddress",
       "targetUtilization", "defaultRequests", "defaultRequestsMultiplier"});
  a.metricProvider = readProvider(j);
  helper::readInt64(j, "targetUtilization", "", a.targetUtilization);
  if (a.targetUtilization < 1 || a.targetUtilization > 99) {
    invalid("targetUtilization", "Invalid value: " + std::to_string(a.targetUtilization) +
                                     ": must be in the range [1, 99]");
  }
  if (const json* d = helper::member(j, "defaultRequests")) {
    helper::expectObject(*d, "defaultRequests", {"cpu", "memory"});
    if (const json* cpu = helper::member(*d, "cpu")) {
      auto q = cpu->is_string() ? api::Quantity::tryParse(cpu->get<std::string>())
                                : std::optional<api::Quantity>();
      if (!q || q->milliValue() < 0) {
        invalid("defaultRequests.cpu", "Invalid value: " + cpu->dump() + ": not a quantity");
      }
      a.defaultRequestsMilliCPU = q->milliValue();
    }
  }
  std::string mult;
  if (helper::readString(j, "defaultRequestsMultiplier", "", mult)) {
    char* end = nullptr;
    const double v = std::strtod(mult.c_str(), &end);
    if (mult.empty() || end == mult.c_str() || *end != '\0' || !std::isfinite(v) || v < 0) {
      invalid("defaultRequestsMultiplier",
              "Invalid value: \"" + mult + "\": must be a non-negative number, e.g. \"1.5\"");
    }
    a.defaultRequestsMultiplier = v;
  }
  return a;
}

LoadVariationRiskBalancingArgs LoadVariationRiskBalancingArgs::fromJson(const json& j) {
  LoadVariationRiskBalancingArgs a;
  if (j.is_null()) return a;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "metricProvider",
                        "watcherAddress", "safeVarianceMargin", "safeVarianceSensitivity"});
  a.metricProvider = readProvider(j);
  a.safeVarianceMargin = readNumber(j, "safeVarianceMargin", a.safeVarianceMargin);
  a.safeVarianceSensitivity = readNumber(j, "safeVarianceSensitivity", a.safeVarianceSensitivity);
  for (const auto& [key, v] : {std::pair{"safeVarianceMargin", a.safeVarianceMargin},
                               std::pair{"safeVarianceSensitivity", a.safeVarianceSensitivity}}) {
    if (!(v >= 0) || !std::isfinite(v)) {
      std::ostringstream s;
      s << v;
      invalid(key, "Invalid value: " + s.str() + ": must be greater than or equal to 0");
    }
  }
  return a;
}

LoadAwareFilterArgs LoadAwareFilterArgs::fromJson(const json& j) {
  LoadAwareFilterArgs a;
  if (j.is_null()) return a;
  helper::expectObject(j, "",
                       {helper::kApiVersionKey, helper::kKindKey, "metricProvider",
                        "watcherAddress", "usageThresholds"});
  a.metricProvider = readProvider(j);
  if (const json* t = helper::member(j, "usageThresholds")) {
    helper::expectObject(*t, "usageThresholds", {"cpu", "memory"});
    helper::readInt64(*t, "cpu", "usageThresholds", a.cpuThreshold);
    helper::readInt64(*t, "memory", "usageThresholds", a.memoryThreshold);
    for (const auto& [key, v] :
         {std::pair{"cpu", a.cpuThreshold}, std::pair{"memory", a.memoryThreshold}}) {
      if (v < 0 || v > 100) {
        invalid(std::string("usageThresholds.") + key,
                "Invalid value: " + std::to_string(v) + ": must be in the range [0, 100]");
      }
    }
  }
  return a;
}

namespace load {

struct CycleLoad final : StateData {
  std::shared_ptr<const LoadReading> reading;
  Clock::time_point now{};
  std::chrono::milliseconds staleAfter{};
  std::string_view source;
  std::string podUid;  // a placement of the pod itself is not counted (explain of a bound pod)
  int64_t podPredictedMilliCPU = 0;
  int64_t podMilliCPU = 0;
  int64_t podMemory = 0;
  [[nodiscard]] std::unique_ptr<StateData> clone() const override {
    return std::make_unique<CycleLoad>(*this);
  }
};

LoadAwareBase::LoadAwareBase(std::string_view name, const ProviderConfig& config, Handle& handle)
    : name_(name), handle_(handle) {
  source_ = handle.shared<LoadSource>("load-aware:" + config.key(),
                                      [&] { return std::make_shared<LoadSource>(config, handle); });
  handle.addPodEventHandlers({[this](const PodPtr& p) { onPod(nullptr, p); },
                              [this](const PodPtr& o, const PodPtr& n) { onPod(o, n); },
                              [this](const PodPtr& p) { onPod(p, nullptr); }});
}

Placement LoadAwareBase::placementOf(const api::Pod& pod, Clock::time_point at) const {
  const api::Resource req =
      api::effectiveRequestsResource(pod, api::PodResourcesOptions(handle_.features()));
  return {pod.metadata.uid, predictedMilliCPU(pod, defaultMilliCPU_, multiplier_), req.milliCPU,
          req.memory, at};
}

void LoadAwareBase::onPod(const PodPtr& oldPod, const PodPtr& newPod) {
  auto finished = [](const api::Pod& p) {
    return p.status.phase == "Succeeded" || p.status.phase == "Failed";
  };
  if (newPod == nullptr) {
    if (oldPod && !oldPod->spec.nodeName.empty())
      source_->unplace(oldPod->metadata.uid, oldPod->spec.nodeName);
    return;
  }
  const api::Pod& pod = *newPod;
  if (pod.spec.nodeName.empty()) return;
  if (finished(pod)) {
    source_->unplace(pod.metadata.uid, pod.spec.nodeName);
    return;
  }
  if (oldPod != nullptr) {
    if (oldPod->spec.nodeName.empty())
      source_->place(placementOf(pod, Clock::now()), pod.spec.nodeName);
    return;
  }
  // First seen assigned (the informer's list at start-up, say): bound when its PodScheduled
  // condition turned true; placements older than a reading's lag are not counted anyway.
  for (const auto& c : pod.status.conditions) {
    if (c.type != "PodScheduled" || c.status != "True") continue;
    if (auto at = api::parseRFC3339(c.lastTransitionTime);
        at && Clock::now() - *at < LoadSource::kPlacementTtl) {
      source_->place(placementOf(pod, *at), pod.spec.nodeName);
    }
  }
}

int64_t LoadAwareBase::predictedMilliCPU(const api::Pod& pod, int64_t defaultMilliCPU,
                                         double multiplier) {
  int64_t sum = 0;
  for (const auto& c : pod.spec.containers) {
    if (auto l = c.resources.limits.find("cpu"); l != c.resources.limits.end()) {
      sum += l->second.milliValue();
    } else if (auto r = c.resources.requests.find("cpu"); r != c.resources.requests.end()) {
      sum += static_cast<int64_t>(
          std::round(static_cast<double>(r->second.milliValue()) * multiplier));
    } else {
      sum += defaultMilliCPU;
    }
  }
  if (auto o = pod.spec.overhead.find("cpu"); o != pod.spec.overhead.end()) {
    sum += o->second.milliValue();
  }
  return sum;
}

std::unique_ptr<CycleLoad> LoadAwareBase::read(const api::Pod& pod) const {
  auto c = std::make_unique<CycleLoad>();
  c->reading = source_->forCycle();
  c->now = Clock::now();
  c->staleAfter = source_->config().staleAfter;
  c->source = source_->config().label();
  c->podUid = pod.metadata.uid;
  c->podPredictedMilliCPU = predictedMilliCPU(pod, defaultMilliCPU_, multiplier_);
  const api::Resource req =
      api::effectiveRequestsResource(pod, api::PodResourcesOptions(handle_.features()));
  c->podMilliCPU = req.milliCPU;
  c->podMemory = req.memory;
  return c;
}

void LoadAwareBase::readIntoState(CycleState& state, const api::Pod& pod,
                                  const std::vector<const NodeInfo*>* nodes) const {
  auto c = read(pod);
  if (nodes != nullptr) {
    size_t missing = 0;
    size_t stale = 0;
    for (const NodeInfo* n : *nodes) {
      auto it = c->reading->nodes.find(n->name());
      if (it == c->reading->nodes.end()) {
        ++missing;
      } else if (c->now - it->second.sampled > c->staleAfter) {
        ++stale;
      }
    }
    if (missing > 0) handle_.metrics().observeLoadFallback(name_, "missing", missing);
    if (stale > 0) handle_.metrics().observeLoadFallback(name_, "stale", stale);
  }
  state.write(StateKey<CycleLoad>{name_}, std::move(c));
}

const CycleLoad* LoadAwareBase::cycleLoad(const CycleState& state, const api::Pod& pod,
                                          std::shared_ptr<const CycleLoad>& hold) const {
  if (const CycleLoad* c = state.read(StateKey<CycleLoad>{name_})) return c;
  std::lock_guard lock(lazyMu_);
  if (lazyState_ != &state || lazyUid_ != pod.metadata.uid || lazy_ == nullptr ||
      Clock::now() - lazy_->now > std::chrono::seconds(1)) {
    lazy_ = read(pod);
    lazyState_ = &state;
    lazyUid_ = pod.metadata.uid;
  }
  hold = lazy_;
  return hold.get();
}

NodeUtilization LoadAwareBase::utilization(const CycleLoad& c, const NodeInfo& node,
                                           bool cpuOfCapacity) const {
  NodeUtilization u;
  const double allocCpu = static_cast<double>(node.allocatable().milliCPU);
  const double allocMem = static_cast<double>(node.allocatable().memory);
  const double capCpu =
      node.capacityMilliCPU() > 0 ? static_cast<double>(node.capacityMilliCPU()) : allocCpu;
  const double capMem =
      node.capacityMemory() > 0 ? static_cast<double>(node.capacityMemory()) : allocMem;
  const double cpuDenom = cpuOfCapacity ? capCpu : allocCpu;
  u.cpuDenominator = cpuDenom;
  auto it = c.reading->nodes.find(node.name());
  const bool have = it != c.reading->nodes.end() && it->second.hasCpu && it->second.hasMemory;
  const auto age =
      have ? std::chrono::duration_cast<std::chrono::seconds>(c.now - it->second.sampled)
           : std::chrono::seconds(0);
  if (!have || c.now - it->second.sampled > c.staleAfter) {
    u.fromRequests = true;
    u.cpu = cpuDenom > 0 ? static_cast<double>(node.requested().milliCPU) / cpuDenom : 0;
    u.memory = allocMem > 0 ? static_cast<double>(node.requested().memory) / allocMem : 0;
    u.why = !have ? "no " + std::string(c.source) + " reading, scored by requests"
                  : std::string(c.source) + " reading " + std::to_string(age.count()) +
                        "s old (stale), scored by requests";
    return u;
  }
  const NodeLoad& l = it->second;
  double cpuUsed = l.absolute ? l.cpu : l.cpu * capCpu;
  double memUsed = l.absolute ? l.memory : l.memory * capMem;
  if (const PlacedLoad p = source_->placedOn(node.name(), c.podUid); p.pods > 0) {
    cpuUsed += static_cast<double>(cpuOfCapacity ? p.predictedMilliCPU : p.milliCPU);
    memUsed += static_cast<double>(p.memory);
    u.placedPods = p.pods;
  }
  u.cpu = cpuDenom > 0 ? cpuUsed / cpuDenom : 0;
  u.memory = allocMem > 0 ? memUsed / allocMem : 0;
  u.cpuStddev = std::max(0.0, l.cpuStddev);
  u.memoryStddev = std::max(0.0, l.memoryStddev);
  u.why = std::string(c.source) + ", " + std::to_string(age.count()) + "s old";
  if (u.placedPods > 0) u.why += ", +" + std::to_string(u.placedPods) + " pod(s) placed since";
  return u;
}

Status LoadAwareBase::reserve(CycleState& /*state*/, const api::Pod& pod,
                              const std::string& nodeName) {
  source_->place(placementOf(pod, Clock::now()), nodeName);
  return {};
}

void LoadAwareBase::unreserve(CycleState& /*state*/, const api::Pod& pod,
                              const std::string& nodeName) {
  source_->unplace(pod.metadata.uid, nodeName);
}

}  // namespace load

// TargetLoadPacking

TargetLoadPacking::TargetLoadPacking(TargetLoadPackingArgs args, Handle& handle)
    : LoadAwareBase(kName, args.metricProvider, handle), args_(std::move(args)) {
  defaultMilliCPU_ = args_.defaultRequestsMilliCPU;
  multiplier_ = args_.defaultRequestsMultiplier;
}

Status TargetLoadPacking::preScore(CycleState& state, const api::Pod& pod,
                                   const std::vector<const NodeInfo*>& nodes) {
  readIntoState(state, pod, &nodes);
  return {};
}

int64_t TargetLoadPacking::scoreOf(double u, int64_t t) {
  const auto td = static_cast<double>(t);
  if (u > 100) return 0;
  if (u > td) return static_cast<int64_t>(std::round(td * (100 - u) / (100 - td)));
  return static_cast<int64_t>(std::round((100 - td) * u / td + td));
}

Status TargetLoadPacking::score(const CycleState& state, const api::Pod& pod,
                                const NodeInfo& nodeInfo, int64_t& score) const {
  std::shared_ptr<const load::CycleLoad> hold;
  const auto* c = cycleLoad(state, pod, hold);
  const auto u = utilization(*c, nodeInfo, /*cpuOfCapacity=*/true);
  const double cap = u.cpuDenominator;
  const double predicted =
      cap > 0 ? 100 * (u.cpu * cap + static_cast<double>(c->podPredictedMilliCPU)) / cap : 0;
  score = scoreOf(predicted, args_.targetUtilization);
  return {};
}

std::string TargetLoadPacking::explainScore(const CycleState& state, const api::Pod& pod,
                                            const NodeInfo& nodeInfo) const {
  std::shared_ptr<const load::CycleLoad> hold;
  const auto* c = cycleLoad(state, pod, hold);
  const auto u = utilization(*c, nodeInfo, true);
  int64_t s = 0;
  (void)score(state, pod, nodeInfo, s);
  return "cpu " + percent(u.cpu) + " (" + u.why + ") + pod " +
         std::to_string(c->podPredictedMilliCPU) + "m, target " +
         std::to_string(args_.targetUtilization) + "%: " + std::to_string(s);
}

// LoadVariationRiskBalancing

LoadVariationRiskBalancing::LoadVariationRiskBalancing(LoadVariationRiskBalancingArgs args,
                                                       Handle& handle)
    : LoadAwareBase(kName, args.metricProvider, handle), args_(std::move(args)) {}

Status LoadVariationRiskBalancing::preScore(CycleState& state, const api::Pod& pod,
                                            const std::vector<const NodeInfo*>& nodes) {
  readIntoState(state, pod, &nodes);
  return {};
}

double LoadVariationRiskBalancing::riskScore(double mu, double sigma, double margin,
                                             double sensitivity) {
  mu = std::clamp(mu, 0.0, 1.0);
  sigma = std::clamp(sigma, 0.0, 1.0);
  if (sensitivity >= 0 && sensitivity != 1) sigma = std::pow(sigma, 1 / sensitivity);
  sigma = std::clamp(sigma * margin, 0.0, 1.0);
  return (1 - (mu + sigma) / 2) * 100;
}

Status LoadVariationRiskBalancing::score(const CycleState& state, const api::Pod& pod,
                                         const NodeInfo& nodeInfo, int64_t& score) const {
  std::shared_ptr<const load::CycleLoad> hold;
  const auto* c = cycleLoad(state, pod, hold);
  const auto u = utilization(*c, nodeInfo, /*cpuOfCapacity=*/false);
  const auto allocCpu = static_cast<double>(nodeInfo.allocatable().milliCPU);
  const auto allocMem = static_cast<double>(nodeInfo.allocatable().memory);
  if (allocCpu <= 0 || allocMem <= 0) {
    score = 0;
    return {};
  }
  const double cpu = riskScore(u.cpu + static_cast<double>(c->podMilliCPU) / allocCpu, u.cpuStddev,
                               args_.safeVarianceMargin, args_.safeVarianceSensitivity);
  const double mem =
      riskScore(u.memory + static_cast<double>(c->podMemory) / allocMem, u.memoryStddev,
                args_.safeVarianceMargin, args_.safeVarianceSensitivity);
  score = static_cast<int64_t>(std::round(std::min(cpu, mem)));
  return {};
}

std::string LoadVariationRiskBalancing::explainScore(const CycleState& state, const api::Pod& pod,
                                                     const NodeInfo& nodeInfo) const {
  std::shared_ptr<const load::CycleLoad> hold;
  const auto* c = cycleLoad(state, pod, hold);
  const auto u = utilization(*c, nodeInfo, false);
  int64_t s = 0;
  (void)score(state, pod, nodeInfo, s);
  std::string out = "cpu " + percent(u.cpu);
  if (u.cpuStddev > 0) out += " ±" + percent(u.cpuStddev);
  out += ", memory " + percent(u.memory);
  if (u.memoryStddev > 0) out += " ±" + percent(u.memoryStddev);
  return out + " (" + u.why + "): " + std::to_string(s);
}

// LoadAwareFilter

LoadAwareFilter::LoadAwareFilter(LoadAwareFilterArgs args, Handle& handle)
    : LoadAwareBase(kName, args.metricProvider, handle), args_(std::move(args)) {}

Status LoadAwareFilter::preFilter(CycleState& state, const api::Pod& pod,
                                  const NodeInfoLister& /*nodes*/, PreFilterResult& /*result*/) {
  readIntoState(state, pod, nullptr);
  return {};
}

Status LoadAwareFilter::filter(const CycleState& state, const api::Pod& pod,
                               const NodeInfo& nodeInfo) const {
  std::shared_ptr<const load::CycleLoad> hold;
  const auto* c = cycleLoad(state, pod, hold);
  const auto u = utilization(*c, nodeInfo, /*cpuOfCapacity=*/false);
  if (u.fromRequests) return {};  // no fresh reading: not filtered
  const auto allocCpu = static_cast<double>(nodeInfo.allocatable().milliCPU);
  const auto allocMem = static_cast<double>(nodeInfo.allocatable().memory);
  if (args_.cpuThreshold > 0 && allocCpu > 0) {
    const auto pct = static_cast<int64_t>(
        std::round(100 * (u.cpu + static_cast<double>(c->podMilliCPU) / allocCpu)));
    if (pct > args_.cpuThreshold)
      return Status::unschedulable("node(s) cpu usage exceed threshold");
  }
  if (args_.memoryThreshold > 0 && allocMem > 0) {
    const auto pct = static_cast<int64_t>(
        std::round(100 * (u.memory + static_cast<double>(c->podMemory) / allocMem)));
    if (pct > args_.memoryThreshold) {
      return Status::unschedulable("node(s) memory usage exceed threshold");
    }
  }
  return {};
}

PluginFactory targetLoadPackingFactory() {
  return makePluginFactory<TargetLoadPacking>(
      [](const json& args) { return TargetLoadPackingArgs::fromJson(args); },
      [](const TargetLoadPackingArgs& a, Handle& h) {
        return std::make_unique<TargetLoadPacking>(a, h);
      });
}

PluginFactory loadVariationRiskBalancingFactory() {
  return makePluginFactory<LoadVariationRiskBalancing>(
      [](const json& args) { return LoadVariationRiskBalancingArgs::fromJson(args); },
      [](const LoadVariationRiskBalancingArgs& a, Handle& h) {
        return std::make_unique<LoadVariationRiskBalancing>(a, h);
      });
}

PluginFactory loadAwareFilterFactory() {
  return makePluginFactory<LoadAwareFilter>(
      [](const json& args) { return LoadAwareFilterArgs::fromJson(args); },
      [](const LoadAwareFilterArgs& a, Handle& h) {
        return std::make_unique<LoadAwareFilter>(a, h);
      });
}

}  // namespace ksched::plugins
