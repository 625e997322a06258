#include <ksched/api/resources.h>
#include <ksched/helper/resource_allocation.h>
#include <ksched/plugin.h>

namespace ksched::plugins::helper {

std::vector<ResourceSpec> defaultScoringResources() {
  return {{std::string(api::kResourceCPU), 1}, {std::string(api::kResourceMemory), 1}};
}

int64_t mulDiv(int64_t a, int64_t b, int64_t c) {
  int64_t product = 0;
  if (!__builtin_mul_overflow(a, b, &product)) return product / c;
  __extension__ typedef __int128 Int128;
  return static_cast<int64_t>(static_cast<Int128>(a) * b / c);
}

int64_t leastRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0 || requested > capacity) return 0;
  return mulDiv(capacity - requested, kMaxNodeScore, capacity);
}

int64_t mostRequestedScore(int64_t requested, int64_t capacity) {
  if (capacity == 0) return 0;
  if (requested > capacity) requested = capacity;  // non-zero defaults can exceed capacity
  return mulDiv(requested, kMaxNodeScore, capacity);
}

std::vector<int64_t> requestVector(const api::ResourceList& requests,
                                   const std::vector<ResourceSpec>& resources) {
  std::vector<int64_t> out;
  out.reserve(resources.size());
  for (const ResourceSpec& r : resources) {
    const api::Quantity q = api::quantityOf(requests, r.name);
    out.push_back(r.name == api::kResourceCPU ? q.milliValue() : q.value());
  }
  return out;
}

void requestedAndAllocatable(const NodeInfo& nodeInfo, const std::vector<ResourceSpec>& resources,
                             const std::vector<int64_t>& podRequests, bool nonZeroCpuMemory,
                             std::vector<int64_t>& req, std::vector<int64_t>& cap) {
  const api::Resource& alloc = nodeInfo.allocatable();
  const api::Resource& requested = nodeInfo.requested();
  const api::Resource& cpuMem = nonZeroCpuMemory ? nodeInfo.nonZeroRequested() : requested;
  req.assign(resources.size(), 0);
  cap.assign(resources.size(), 0);
  for (size_t i = 0; i < resources.size(); ++i) {
    const std::string& name = resources[i].name;
    const int64_t pod = i < podRequests.size() ? podRequests[i] : 0;
    int64_t a = 0;
    int64_t r = 0;
    if (pod == 0 && api::isScalarResourceName(name)) {
      continue;
    } else if (name == api::kResourceCPU) {
      a = alloc.milliCPU;
      r = cpuMem.milliCPU + pod;
    } else if (name == api::kResourceMemory) {
      a = alloc.memory;
      r = cpuMem.memory + pod;
    } else if (name == api::kResourceEphemeralStorage) {
      a = alloc.ephemeralStorage;
      r = requested.ephemeralStorage + pod;
    } else if (auto it = alloc.scalar.find(name); it != alloc.scalar.end()) {
      a = it->second;
      r = requested.scalarValue(name) + pod;
    }
    if (a == 0) continue;
    cap[i] = a;
    req[i] = r;
  }
}

}  // namespace ksched::plugins::helper
