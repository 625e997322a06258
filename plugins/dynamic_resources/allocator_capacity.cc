// Consumable capacity (KEP 5075, DRAConsumableCapacity): what a request takes of a device's
// capacity under the capacity's requestPolicy (upstream's consumable_capacity.go).
#include <cstdint>
#include <random>
#include <string>

#include "plugins/dynamic_resources/allocator_internal.h"

namespace ksched::plugins::dra::detail {
namespace {

bool hasRange(const api::CapacityRequestPolicy& p) {
  return p.validRangeMin || p.validRangeMax || p.validRangeStep;
}

// The multiple of step above min that is not below `requested`.
api::Quantity roundUpRange(const api::Quantity& requested, const api::CapacityRequestPolicy& p) {
  const api::Quantity& min = *p.validRangeMin;
  if (requested < min) return min;
  if (!p.validRangeStep) return requested;
  const int64_t step = p.validRangeStep->value();
  const int64_t base = min.value();
  const int64_t added = requested.value() - base;
  int64_t n = step > 0 ? added / step : 0;
  if (step > 0 && added % step != 0) ++n;
  return api::Quantity::fromValue(base + step * n, api::QuantityFormat::kBinarySI);
}

api::Quantity roundUpValidValues(const api::Quantity& requested,
                                 const std::vector<api::Quantity>& valid) {
  for (const auto& v : valid) {
    if (requested <= v) return v;
  }
  return requested;
}

// What the request takes of one capacity: the request rounded up to the policy, or (no
// request) the policy's default, or the whole capacity.
api::Quantity consumedOf(const api::Quantity* requested, const api::DeviceCapacity& capacity) {
  const auto& policy = capacity.requestPolicy;
  if (!requested) return policy && policy->defaultValue ? *policy->defaultValue : capacity.value;
  if (!policy) return *requested;
  if (policy->validRangeMin) return roundUpRange(*requested, *policy);
  if (!policy->validValues.empty()) return roundUpValidValues(*requested, policy->validValues);
  return *requested;
}

bool violatesPolicy(const api::Quantity& value,
                    const std::optional<api::CapacityRequestPolicy>& p) {
  if (!p) return false;
  if (p->defaultValue && value == *p->defaultValue) return false;
  if (hasRange(*p)) {
    if (p->validRangeMax && value > *p->validRangeMax) return true;
    if (p->validRangeStep) {
      const int64_t step = p->validRangeStep->value();
      const int64_t base = p->validRangeMin ? p->validRangeMin->value() : 0;
      if (step > 0 && (value.value() - base) % step != 0) return true;
    }
    return false;
  }
  if (!p->validValues.empty()) {
    for (const auto& v : p->validValues) {
      if (value == v) return false;
    }
    return true;
  }
  return false;
}

const api::Quantity* find(const api::CapacityRequirements& requests, const std::string& name) {
  auto it = requests.find(name);
  return it == requests.end() ? nullptr : &it->second;
}

}  // namespace

std::optional<bool> capacityFits(const api::CapacityRequirements& requests,
                                 const api::DeviceCapacities& capacity,
                                 const CapacityAmounts* consumed,
                                 const CapacityAmounts* allocating) {
  for (const auto& [name, value] : requests) {
    if (!capacity.contains(name)) return std::nullopt;
  }
  for (const auto& [name, cap] : capacity) {
    const api::Quantity take = consumedOf(find(requests, name), cap);
    if (violatesPolicy(take, cap.requestPolicy)) return false;
    api::Quantity total = take;
    if (consumed) {
      if (auto it = consumed->find(name); it != consumed->end()) total += it->second;
    }
    if (allocating) {
      if (auto it = allocating->find(name); it != allocating->end()) total += it->second;
    }
    if (total > cap.value) return false;
  }
  return true;
}

CapacityAmounts consumedByRequest(const api::CapacityRequirements& requests,
                                  const api::DeviceCapacities& capacity) {
  CapacityAmounts out;
  for (const auto& [name, cap] : capacity) out.emplace(name, consumedOf(find(requests, name), cap));
  return out;
}

std::string newShareId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  const uint64_t hi = rng();
  const uint64_t lo = rng();
  uint8_t b[16];
  for (int i = 0; i < 8; ++i) {
    b[i] = static_cast<uint8_t>(hi >> (56 - 8 * i));
    b[8 + i] = static_cast<uint8_t>(lo >> (56 - 8 * i));
  }
  b[6] = static_cast<uint8_t>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<uint8_t>((b[8] & 0x3f) | 0x80);  // RFC 4122 variant
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  s.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s.push_back('-');
    s.push_back(kHex[b[i] >> 4]);
    s.push_back(kHex[b[i] & 0xf]);
  }
  return s;
}

}  // namespace ksched::plugins::dra::detail
