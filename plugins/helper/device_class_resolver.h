// Which extended resources a DeviceClass serves (KEP 5004, DRAExtendedResource), as upstream's
// framework.DeviceClassResolver: DynamicResources' state answers, NodeResourcesFit asks (it
// leaves such a resource to DynamicResources on nodes whose allocatable lacks it). One per
// scheduler, shared through the Handle, so neither plugin includes the other; it answers "no"
// until DynamicResources is built (a profile without it has no DRA to leave anything to).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string_view>

#include <ksched/handle.h>

namespace ksched::plugins::helper {

class DeviceClassResolver {
 public:
  using Serves = std::function<bool(std::string_view resource)>;

  // The scheduler's one resolver.
  [[nodiscard]] static std::shared_ptr<DeviceClassResolver> of(Handle& handle) {
    return handle.shared<DeviceClassResolver>(
        "DeviceClassResolver", [] { return std::make_shared<DeviceClassResolver>(); });
  }

  // DynamicResources' answer. Thread-safe.
  void set(Serves serves) {
    auto s = std::make_shared<const Serves>(std::move(serves));
    std::lock_guard lock(mu_);
    serves_ = std::move(s);
  }

  // Whether a DeviceClass serves the extended resource `resource`. Thread-safe.
  [[nodiscard]] bool serves(std::string_view resource) const {
    std::shared_ptr<const Serves> s;
    {
      std::lock_guard lock(mu_);
      s = serves_;
    }
    return s && (*s)(resource);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const Serves> serves_;
};

}  // namespace ksched::plugins::helper
