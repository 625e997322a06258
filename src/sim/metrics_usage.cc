#include "sim/metrics_usage.h"

#include <algorithm>
#include <optional>

#include <ksched/api/quantity.h>

namespace ksched::sim {
namespace metrics_usage_detail {

constexpr std::string_view kGroup = "metrics.k8s.io/";

// Whether `key` ("<apiVersion>/<kind>") names metrics.k8s.io's `kind`.
bool isMetrics(const std::string& key, std::string_view kind) {
  return key.starts_with(kGroup) && key.ends_with("/" + std::string(kind));
}

// A quantity as served ("250m"), or as a YAML file may write it (3).
std::optional<api::Quantity> quantityOf(const nlohmann::json& usage, const char* key) {
  const auto q = usage.find(key);
  if (q == usage.end()) return std::nullopt;
  if (q->is_string()) return api::Quantity::tryParse(q->get<std::string>());
  if (q->is_number()) return api::Quantity::tryParse(q->dump());
  return std::nullopt;
}

// The usage of one "usage" object; false when a quantity is missing or does not parse.
bool add(const nlohmann::json& usage, MetricsUsage& into) {
  if (!usage.is_object()) return false;
  const auto c = quantityOf(usage, "cpu");
  const auto m = quantityOf(usage, "memory");
  if (!c || !m) return false;
  into.milliCPU += c->milliValue();
  into.memory += m->value();
  return true;
}

// A PodMetrics item's usage: its containers' summed.
bool podUsage(const nlohmann::json& item, MetricsUsage& out) {
  const auto containers = item.find("containers");
  if (containers == item.end() || !containers->is_array()) return false;
  for (const auto& c : *containers) {
    if (!c.is_object() || !c.contains("usage") || !add(c["usage"], out)) return false;
  }
  return true;
}

}  // namespace metrics_usage_detail

std::string usageKey(const api::ObjectMeta& m) {
  return (m.namespace_.empty() ? std::string("default") : m.namespace_) + "/" + m.name;
}

std::unordered_map<std::string, MetricsUsage> podUsages(const Cluster& cluster) {
  using namespace metrics_usage_detail;
  std::unordered_map<std::string, MetricsUsage> out;
  for (const auto& [key, objects] : cluster.others) {
    if (!isMetrics(key, "PodMetrics")) continue;
    for (const auto& o : objects) {
      MetricsUsage u;
      if (!o->metadata.name.empty() && podUsage(o->object, u)) out[usageKey(o->metadata)] = u;
    }
  }
  return out;
}

std::unordered_map<std::string, MetricsUsage> nodeUsages(const Cluster& cluster) {
  using namespace metrics_usage_detail;
  std::unordered_map<std::string, MetricsUsage> out;
  for (const auto& [key, objects] : cluster.others) {
    if (!isMetrics(key, "NodeMetrics")) continue;
    for (const auto& o : objects) {
      MetricsUsage u;
      const auto usage = o->object.find("usage");
      if (!o->metadata.name.empty() && usage != o->object.end() && add(*usage, u)) {
        out[o->metadata.name] = u;
      }
    }
  }
  return out;
}

void releaseUsage(Cluster& cluster, const std::vector<PodPtr>& evicted) {
  using namespace metrics_usage_detail;
  if (evicted.empty()) return;
  std::unordered_map<std::string, std::string> nodeOf;  // "namespace/name" -> node
  for (const auto& p : evicted) {
    if (!p->spec.nodeName.empty()) nodeOf[usageKey(p->metadata)] = p->spec.nodeName;
  }
  for (auto& [key, objects] : cluster.others) {
    if (!isMetrics(key, "PodMetrics")) continue;
    const std::string version = key.substr(0, key.size() - std::string_view("PodMetrics").size());
    std::unordered_map<std::string, MetricsUsage> released;  // node -> usage taken off
    std::erase_if(objects, [&](const UnstructuredPtr& o) {
      const auto it = nodeOf.find(usageKey(o->metadata));
      if (it == nodeOf.end()) return false;
      MetricsUsage u;
      if (podUsage(o->object, u)) {
        released[it->second].milliCPU += u.milliCPU;
        released[it->second].memory += u.memory;
      }
      return true;
    });
    auto nodes = cluster.others.find(version + "NodeMetrics");
    if (released.empty() || nodes == cluster.others.end()) continue;
    for (auto& o : nodes->second) {
      const auto r = released.find(o->metadata.name);
      MetricsUsage now;
      const auto usage = o->object.find("usage");
      if (r == released.end() || usage == o->object.end() || !add(*usage, now)) continue;
      auto next = std::make_shared<UnstructuredObject>(*o);
      next->object["usage"]["cpu"] =
          api::Quantity::fromMilli(std::max<int64_t>(0, now.milliCPU - r->second.milliCPU))
              .toString();
      next->object["usage"]["memory"] =
          api::Quantity::fromValue(std::max<int64_t>(0, now.memory - r->second.memory),
                                   api::QuantityFormat::kBinarySI)
              .toString();
      o = std::move(next);
    }
  }
}

}  // namespace ksched::sim
