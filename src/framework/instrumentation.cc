#include "framework/instrumentation.h"

#include <algorithm>

namespace ksched::framework {

Instrumentation::Instrumentation(metrics::SchedulerMetrics* metrics, std::string profile,
                                 std::vector<const Plugin*> plugins)
    : metrics_(metrics),
      profile_(std::move(profile)),
      plugins_(std::move(plugins)),
      pluginChildren_(
          std::make_unique<std::array<Children, kNumExtensionPoints>[]>(plugins_.size())) {}

void Instrumentation::observePoint(TimedPoint point, Code code,
                                   std::chrono::steady_clock::time_point start) const {
  const auto c = static_cast<size_t>(code);
  if (c >= kNumCodes || point.index >= pointChildren_.size()) return;
  auto& slot = pointChildren_[point.index][c];
  prometheus::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    const std::string_view name = point.index < kNumExtensionPoints
                                      ? extensionPointName(kAllExtensionPoints[point.index])
                                      : std::string_view("Unreserve");
    h = &metrics_->extensionPoint(name, codeName(code), profile_);
    slot.store(h, std::memory_order_release);
  }
  h->Observe(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

void Instrumentation::observePlugin(const Plugin* p, ExtensionPoint point, Code code,
                                    std::chrono::steady_clock::time_point start) const {
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const auto c = static_cast<size_t>(code);
  const auto owner = std::find(plugins_.begin(), plugins_.end(), p);
  if (c >= kNumCodes || owner == plugins_.end()) {
    metrics_->pluginExecution(p->name(), extensionPointName(point), codeName(code))
        .Observe(seconds);
    return;
  }
  auto& slot = pluginChildren_[static_cast<size_t>(owner - plugins_.begin())][indexOf(point)][c];
  prometheus::Histogram* h = slot.load(std::memory_order_acquire);
  if (h == nullptr) {
    h = &metrics_->pluginExecution(p->name(), extensionPointName(point), codeName(code));
    slot.store(h, std::memory_order_release);
  }
  h->Observe(seconds);
}

}  // namespace ksched::framework
