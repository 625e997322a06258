// The framework's metrics (upstream frameworkruntime instrumentation):
// scheduler_framework_extension_point_duration_seconds for every extension point run as a whole,
// and scheduler_plugin_execution_duration_seconds for each plugin in the cycles sampled for it.
// Histogram children are looked up once and cached: the sampled cycles time every plugin on every
// node, and the registry's own lookup takes a lock.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/extension_point.h>
#include <ksched/plugin.h>
#include <ksched/status.h>

#include "metrics/metrics.h"

namespace ksched::framework {

// What the framework times as a whole: the SDK's extension points, plus Unreserve (which
// upstream reports under its own label).
struct TimedPoint {
  size_t index;
  constexpr TimedPoint(ExtensionPoint p) : index(indexOf(p)) {}  // NOLINT: implicit on purpose
  [[nodiscard]] static constexpr TimedPoint unreserve() { return TimedPoint(kNumExtensionPoints); }

 private:
  explicit constexpr TimedPoint(size_t i) : index(i) {}
};

class Instrumentation {
 public:
  // `metrics` null: nothing is recorded. `plugins`: the profile's plugins, whose per-plugin
  // children are cached.
  Instrumentation(metrics::SchedulerMetrics* metrics, std::string profile,
                  std::vector<const Plugin*> plugins);

  [[nodiscard]] bool enabled() const { return metrics_ != nullptr; }

  // Runs `fn` (returning Status) and records its duration under `point` and its status code.
  template <typename F>
  Status timed(TimedPoint point, F&& fn) const {
    if (metrics_ == nullptr) return fn();
    const auto start = std::chrono::steady_clock::now();
    Status s = fn();
    observePoint(point, s.code(), start);
    return s;
  }
  // Runs one plugin's `fn` at `point`, timed when this cycle records plugin metrics.
  template <typename F>
  Status timedPlugin(const Plugin* p, ExtensionPoint point, F&& fn) const {
    if (!recordPlugins_.load(std::memory_order_relaxed)) return fn();
    const auto start = std::chrono::steady_clock::now();
    Status s = fn();
    observePlugin(p, point, s.code(), start);
    return s;
  }
  // Whether the next cycles time each plugin (the scheduler samples 10% of cycles, as upstream).
  void setRecordPlugins(bool on) {
    recordPlugins_.store(on && metrics_ != nullptr, std::memory_order_relaxed);
  }

 private:
  static constexpr size_t kNumCodes = 6;
  using Children = std::array<std::atomic<prometheus::Histogram*>, kNumCodes>;

  void observePoint(TimedPoint point, Code code, std::chrono::steady_clock::time_point start) const;
  void observePlugin(const Plugin* p, ExtensionPoint point, Code code,
                     std::chrono::steady_clock::time_point start) const;

  metrics::SchedulerMetrics* const metrics_;
  const std::string profile_;
  const std::vector<const Plugin*> plugins_;
  std::atomic<bool> recordPlugins_{false};
  // By timed point and code, created on first use.
  mutable std::array<Children, kNumExtensionPoints + 1> pointChildren_{};
  // By plugin (position in plugins_), extension point and code, created on first use.
  std::unique_ptr<std::array<Children, kNumExtensionPoints>[]> pluginChildren_;
};

}  // namespace ksched::framework
