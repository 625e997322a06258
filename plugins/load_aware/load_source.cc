#include "plugins/load_aware/load_source.h"

#include <httplib.h>
#include <pthread.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>

#include <ksched/api/quantity.h>
#include <ksched/api/rfc3339.h>
#include <ksched/cluster_api.h>

namespace ksched::plugins::load {

using nlohmann::json;

std::string ProviderConfig::key() const {
  return json::array({type, address, token, insecureSkipVerify, cpuQuery, memoryQuery,
                      cpuStddevQuery, memoryStddevQuery, nodeLabel, refreshInterval.count(),
                      staleAfter.count()})
      .dump();
}

std::string_view ProviderConfig::label() const {
  return type == kPrometheus ? "prometheus" : "metrics-server";
}

std::map<std::string, NodeLoad> parseNodeMetricsList(const json& list, size_t& skipped) {
  std::map<std::string, NodeLoad> out;
  skipped = 0;
  if (!list.is_object() || !list.contains("items") || !list["items"].is_array()) return out;
  for (const auto& item : list["items"]) {
    try {
      const std::string name = item.at("metadata").at("name").get<std::string>();
      const auto ts = api::parseRFC3339(item.at("timestamp").get<std::string>());
      const auto& usage = item.at("usage");
      auto cpu = api::Quantity::tryParse(usage.at("cpu").get<std::string>());
      auto mem = api::Quantity::tryParse(usage.at("memory").get<std::string>());
      if (name.empty() || !ts || !cpu || !mem) {
        ++skipped;
        continue;
      }
      NodeLoad l;
      l.absolute = true;
      l.cpu = static_cast<double>(cpu->milliValue());
      l.memory = static_cast<double>(mem->value());
      l.hasCpu = l.hasMemory = true;
      l.sampled = *ts;
      out[name] = l;
    } catch (const json::exception&) {
      ++skipped;
    }
  }
  return out;
}

LoadSource::LoadSource(ProviderConfig config, Handle& handle)
    : LoadSource(std::move(config), handle, nullptr) {}

LoadSource::LoadSource(ProviderConfig config, Handle& handle, Fetch fetch)
    : config_(std::move(config)),
      handle_(handle),
      fetch_(std::move(fetch)),
      reading_(std::make_shared<const LoadReading>()) {}

LoadSource::~LoadSource() {
  if (thread_.joinable()) {
    thread_.request_stop();
    cv_.notify_all();
    thread_.join();
  }
}

void LoadSource::start() {
  std::lock_guard lock(mu_);
  if (starts_++ > 0 || thread_.joinable()) return;
  thread_ = std::jthread([this](std::stop_token st) { run(std::move(st)); });
}

void LoadSource::stop() {
  {
    std::lock_guard lock(mu_);
    if (starts_ > 0 && --starts_ > 0) return;
  }
  if (thread_.joinable()) {
    thread_.request_stop();
    cv_.notify_all();
    thread_.join();
  }
}

std::shared_ptr<const LoadReading> LoadSource::reading() const {
  std::lock_guard lock(mu_);
  return reading_;
}

std::shared_ptr<const LoadReading> LoadSource::forCycle() {
  {
    std::lock_guard lock(mu_);
    if (published_ || starts_ > 0) return reading_;
  }
  std::call_once(readOnce_, [this] { refreshNow(); });
  return reading();
}

void LoadSource::run(std::stop_token st) {
  pthread_setname_np(pthread_self(), "load-metrics");
  while (!st.stop_requested()) {
    refreshNow();
    std::unique_lock lock(mu_);
    cv_.wait_for(lock, st, config_.refreshInterval, [] { return false; });
  }
}

void LoadSource::refreshNow() {
  LoadReading next;
  const auto start = std::chrono::steady_clock::now();
  std::string error;
  try {
    if (fetch_) {
      error = fetch_(next);
    } else if (config_.type == kPrometheus) {
      error = fetchPrometheus(next);
    } else {
      error = fetchMetricsApi(next);
    }
  } catch (const std::exception& e) {
    error = e.what();
  }
  publish(std::move(next), error,
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void LoadSource::publish(LoadReading next, const std::string& error, double seconds) {
  const std::string_view source = config_.label();
  handle_.metrics().observeLoadRefresh(source, error.empty(), seconds);
  std::shared_ptr<const LoadReading> current;
  if (error.empty()) {
    next.refreshed = Clock::now();
    current = std::make_shared<const LoadReading>(std::move(next));
    if (failing_) spdlog::info("load metrics ({}): reading again", source);
    failing_ = false;
  } else {
    if (!failing_) {
      spdlog::warn(
          "load metrics ({}): {}; the last reading is kept, and nodes are scored by their "
          "requests once it is older than {}s",
          source, error, config_.staleAfter.count() / 1000);
    }
    failing_ = true;
    auto kept = std::make_shared<LoadReading>(*reading());
    kept->lastError = error;
    current = std::move(kept);
  }
  // Fresh and stale nodes, and a log line for nodes that turned stale.
  const auto now = Clock::now();
  size_t fresh = 0;
  size_t stale = 0;
  std::vector<std::string> newlyStale;
  for (const auto& [node, l] : current->nodes) {
    if (now - l.sampled > config_.staleAfter) {
      ++stale;
      if (staleLogged_.insert(node).second) newlyStale.push_back(node);
    } else {
      ++fresh;
      staleLogged_.erase(node);
    }
  }
  if (!newlyStale.empty()) {
    std::sort(newlyStale.begin(), newlyStale.end());
    const size_t shown = std::min<size_t>(newlyStale.size(), 5);
    std::string names;
    for (size_t i = 0; i < shown; ++i) names += (i > 0 ? ", " : "") + newlyStale[i];
    if (shown < newlyStale.size()) names += ", ...";
    spdlog::warn(
        "load metrics ({}): {} node(s) have no reading newer than {}s ({}); scored by "
        "their requests",
        source, newlyStale.size(), config_.staleAfter.count() / 1000, names);
  }
  handle_.metrics().setLoadNodes(source, fresh, stale);
  std::lock_guard lock(mu_);
  reading_ = std::move(current);
  published_ = true;
  recountLocked(now);
}

std::string LoadSource::fetchPrometheus(LoadReading& out) {
  httplib::Client cli(config_.address);
  if (!cli.is_valid()) return "metricProvider.address " + config_.address + " is not usable";
  const auto timeout = std::min<std::chrono::milliseconds>(config_.refreshInterval,
                                                           std::chrono::milliseconds(10'000));
  cli.set_connection_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  cli.set_read_timeout(std::chrono::duration_cast<std::chrono::microseconds>(timeout));
  cli.enable_server_certificate_verification(!config_.insecureSkipVerify);
  httplib::Headers headers;
  if (!config_.token.empty()) headers.emplace("Authorization", "Bearer " + config_.token);
  auto query = [&](const std::string& q,
                   std::string& error) -> std::optional<std::map<std::string, double>> {
    auto res = cli.Get("/api/v1/query", httplib::Params{{"query", q}}, headers);
    if (!res) {
      error = "GET " + config_.address + "/api/v1/query: " + httplib::to_string(res.error());
      return std::nullopt;
    }
    if (res->status != 200 && res->status != 400 && res->status != 422) {
      error = "GET " + config_.address + "/api/v1/query: HTTP " + std::to_string(res->status);
      return std::nullopt;
    }
    std::string why;
    auto v = parsePrometheusVector(res->body, config_.nodeLabel, why);
    if (!v) error = "query " + q + ": " + why;
    return v;
  };
  std::string error;
  auto cpu = query(config_.cpuQuery, error);
  if (!cpu) return error;
  auto mem = query(config_.memoryQuery, error);
  if (!mem) return error;
  const auto now = Clock::now();
  for (const auto& [node, v] : *cpu) {
    auto& l = out.nodes[node];
    l.cpu = std::clamp(v, 0.0, 1.0);
    l.hasCpu = true;
    l.sampled = now;
  }
  for (const auto& [node, v] : *mem) {
    auto& l = out.nodes[node];
    l.memory = std::clamp(v, 0.0, 1.0);
    l.hasMemory = true;
    l.sampled = now;
  }
  // Standard deviations are optional: a failing query leaves them out.
  for (const auto& [q, field] : {std::pair{&config_.cpuStddevQuery, &NodeLoad::cpuStddev},
                                 std::pair{&config_.memoryStddevQuery, &NodeLoad::memoryStddev}}) {
    if (q->empty()) continue;
    std::string ignored;
    auto sd = query(*q, ignored);
    if (!sd) continue;
    for (const auto& [node, v] : *sd) {
      auto it = out.nodes.find(node);
      if (it != out.nodes.end()) it->second.*field = std::clamp(v, 0.0, 1.0);
    }
  }
  return "";
}

std::string LoadSource::fetchMetricsApi(LoadReading& out) {
  ClusterApi* api = handle_.api();
  if (api == nullptr) return "no apiserver connection";
  json list;
  if (auto err = api->get("/apis/metrics.k8s.io/v1beta1/nodes", &list)) return err->message;
  size_t skipped = 0;
  for (auto& [node, l] : parseNodeMetricsList(list, skipped)) out.nodes[node] = l;
  if (skipped > 0) {
    spdlog::warn("load metrics (metrics-server): {} NodeMetrics item(s) malformed, skipped",
                 skipped);
  }
  return "";
}

namespace {

void addTo(PlacedLoad& sum, const Placement& e, int sign) {
  sum.predictedMilliCPU += sign * e.predictedMilliCPU;
  sum.milliCPU += sign * e.milliCPU;
  sum.memory += sign * e.memory;
  sum.pods += sign;
}

}  // namespace

bool LoadSource::countedLocked(const Placement& e, const std::string& node) const {
  const auto r = reading_->nodes.find(node);
  const Clock::time_point sampled =
      r == reading_->nodes.end() ? Clock::time_point{} : r->second.sampled;
  return e.at > sampled - kReportingLag;  // else the reading includes it
}

void LoadSource::uncountLocked(const Placement& e, const std::string& node) {
  if (!countedLocked(e, node)) return;
  auto s = sums_.find(node);
  if (s == sums_.end()) return;
  addTo(s->second, e, -1);
  if (s->second.pods <= 0) sums_.erase(s);
}

void LoadSource::recountLocked(Clock::time_point now) {
  sums_.clear();
  for (auto it = placements_.begin(); it != placements_.end();) {
    auto& v = it->second;
    std::erase_if(v, [&](const Placement& e) { return now - e.at > kPlacementTtl; });
    if (v.empty()) {
      it = placements_.erase(it);
      continue;
    }
    for (const auto& e : v) {
      if (countedLocked(e, it->first)) addTo(sums_[it->first], e, 1);
    }
    ++it;
  }
}

void LoadSource::place(const Placement& p, const std::string& node) {
  std::lock_guard lock(mu_);
  auto& v = placements_[node];
  for (const auto& e : v) {
    if (e.uid == p.uid) return;  // several plugins of a profile share the source
  }
  // The node's expired placements go now; every node's at the next reading.
  const auto now = Clock::now();
  std::erase_if(v, [&](const Placement& e) {
    if (now - e.at <= kPlacementTtl) return false;
    uncountLocked(e, node);
    return true;
  });
  v.push_back(p);
  if (countedLocked(p, node)) addTo(sums_[node], p, 1);
}

void LoadSource::unplace(const std::string& uid, const std::string& node) {
  std::lock_guard lock(mu_);
  auto it = placements_.find(node);
  if (it == placements_.end()) return;
  std::erase_if(it->second, [&](const Placement& e) {
    if (e.uid != uid) return false;
    uncountLocked(e, node);
    return true;
  });
}

PlacedLoad LoadSource::placedOn(const std::string& node, std::string_view exceptUid) const {
  std::lock_guard lock(mu_);
  auto it = sums_.find(node);
  if (it == sums_.end()) return {};
  PlacedLoad sum = it->second;
  if (exceptUid.empty() || sum.pods == 0) return sum;
  if (auto p = placements_.find(node); p != placements_.end()) {
    for (const auto& e : p->second) {
      if (e.uid != exceptUid || !countedLocked(e, node)) continue;
      addTo(sum, e, -1);
      break;
    }
  }
  return sum;
}

}  // namespace ksched::plugins::load
