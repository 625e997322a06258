#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>

#include <ksched/api/names.h>
#include <ksched/api/resources.h>

namespace ksched::api {
namespace {

int64_t satAdd(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) {
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

int64_t satSub(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) {
    return b < 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  }
  return r;
}

}  // namespace

bool isHugePageResourceName(std::string_view name) noexcept {
  return name.starts_with(kResourceHugePagesPrefix);
}

bool isAttachableVolumeResourceName(std::string_view name) noexcept {
  return name.starts_with(kResourceAttachableVolumesPrefix);
}

bool isPrefixedNativeResource(std::string_view name) noexcept {
  return name.find(kResourceDefaultNamespacePrefix) != std::string_view::npos;
}

bool isNativeResource(std::string_view name) noexcept {
  return name.find('/') == std::string_view::npos || isPrefixedNativeResource(name);
}

bool isExtendedResourceName(std::string_view name) noexcept {
  if (isNativeResource(name) || name.starts_with(kResourceRequestsPrefix)) return false;
  // "requests." + name must be a qualified name: "requests.<prefix>" a subdomain of at most
  // 253 characters, so <prefix> a subdomain of at most 253 - len("requests.").
  const size_t slash = name.find('/');
  if (name.find('/', slash + 1) != std::string_view::npos) return false;
  return isDNS1123Subdomain(name.substr(0, slash), 253 - kResourceRequestsPrefix.size()) &&
         isQualifiedNamePart(name.substr(slash + 1));
}

bool isScalarResourceName(std::string_view name) noexcept {
  return isExtendedResourceName(name) || isHugePageResourceName(name) ||
         isPrefixedNativeResource(name) || isAttachableVolumeResourceName(name);
}

Quantity quantityOf(const ResourceList& list, std::string_view name) {
  auto it = list.find(name);
  return it == list.end() ? Quantity() : it->second;
}

void addResourceList(ResourceList& into, const ResourceList& add) {
  for (const auto& [name, q] : add) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else {
      it->second += q;
    }
  }
}

void maxResourceList(ResourceList& into, const ResourceList& other) {
  for (const auto& [name, q] : other) {
    auto it = into.find(name);
    if (it == into.end()) {
      into.emplace(name, q);
    } else if (q > it->second) {
      it->second = q;
    }
  }
}

void from_json(const nlohmann::json& j, ResourceList& list) {
  if (!j.is_object()) throw DecodeError("expected an object");
  list.clear();
  for (auto it = j.begin(); it != j.end(); ++it) {
    try {
      Quantity q;
      from_json(it.value(), q);
      list.insert_or_assign(it.key(), q);
    } catch (const DecodeError& e) {
      throw DecodeError(it.key() + ": " + e.what());
    }
  }
}

Resource Resource::fromList(const ResourceList& list) {
  Resource r;
  r.add(list);
  return r;
}

void Resource::add(const ResourceList& list) {
  for (const auto& [name, q] : list) {
    if (name == kResourceCPU) {
      milliCPU = satAdd(milliCPU, q.milliValue());
    } else if (name == kResourceMemory) {
      memory = satAdd(memory, q.value());
    } else if (name == kResourceEphemeralStorage) {
      ephemeralStorage = satAdd(ephemeralStorage, q.value());
    } else if (name == kResourcePods) {
      allowedPodNumber = satAdd(allowedPodNumber, q.value());
    } else if (isScalarResourceName(name)) {
      addScalar(name, q.value());
    }
  }
}

void Resource::add(const Resource& other) {
  milliCPU = satAdd(milliCPU, other.milliCPU);
  memory = satAdd(memory, other.memory);
  ephemeralStorage = satAdd(ephemeralStorage, other.ephemeralStorage);
  allowedPodNumber = satAdd(allowedPodNumber, other.allowedPodNumber);
  for (const auto& [name, v] : other.scalar) addScalar(name, v);
}

void Resource::sub(const Resource& other) {
  milliCPU = satSub(milliCPU, other.milliCPU);
  memory = satSub(memory, other.memory);
  ephemeralStorage = satSub(ephemeralStorage, other.ephemeralStorage);
  allowedPodNumber = satSub(allowedPodNumber, other.allowedPodNumber);
  for (const auto& [name, v] : other.scalar) setScalar(name, satSub(scalarValue(name), v));
}

void Resource::setMaxResource(const ResourceList& list) {
  for (const auto& [name, q] : list) {
    if (name == kResourceCPU) {
      milliCPU = std::max(milliCPU, q.milliValue());
    } else if (name == kResourceMemory) {
      memory = std::max(memory, q.value());
    } else if (name == kResourceEphemeralStorage) {
      ephemeralStorage = std::max(ephemeralStorage, q.value());
    } else if (isScalarResourceName(name)) {
      setScalar(name, std::max(scalarValue(name), q.value()));
    }
  }
}

void Resource::addScalar(std::string_view name, int64_t amount) {
  auto it = scalar.find(name);
  if (it == scalar.end()) {
    scalar.emplace(std::string(name), amount);
  } else {
    it->second = satAdd(it->second, amount);
  }
}

void Resource::setScalar(std::string_view name, int64_t amount) {
  auto it = scalar.find(name);
  if (it == scalar.end()) {
    scalar.emplace(std::string(name), amount);
  } else {
    it->second = amount;
  }
}

int64_t Resource::scalarValue(std::string_view name) const noexcept {
  auto it = scalar.find(name);
  return it == scalar.end() ? 0 : it->second;
}

bool Resource::isZero() const noexcept {
  return milliCPU == 0 && memory == 0 && ephemeralStorage == 0 && allowedPodNumber == 0 &&
         std::all_of(scalar.begin(), scalar.end(), [](const auto& kv) { return kv.second == 0; });
}

ResourceList Resource::toList() const {
  ResourceList out;
  if (milliCPU != 0) out.emplace(kResourceCPU, Quantity::fromMilli(milliCPU));
  if (memory != 0) out.emplace(kResourceMemory, Quantity::fromValue(memory));
  if (ephemeralStorage != 0) {
    out.emplace(kResourceEphemeralStorage, Quantity::fromValue(ephemeralStorage));
  }
  if (allowedPodNumber != 0) out.emplace(kResourcePods, Quantity::fromValue(allowedPodNumber));
  for (const auto& [name, v] : scalar) {
    if (v != 0) out.emplace(name, Quantity::fromValue(v));
  }
  return out;
}

}  // namespace ksched::api
