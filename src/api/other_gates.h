// Gates of the other Kubernetes components (other_gates.cc).
#pragma once

#include <string_view>

namespace ksched::features {

// Whether `name` is a gate of another component that kube-scheduler's process accepts (and
// ksched accepts with a warning): not a gate of ksched's own table.
[[nodiscard]] bool isOtherComponentGate(std::string_view name) noexcept;

}  // namespace ksched::features
