// The structured-parameters allocator of Dynamic Resource Allocation (KEP 4381): which devices
// of the ResourceSlices a node can reach satisfy a pod's unallocated ResourceClaims, as
// upstream's k8s.io/dynamic-resource-allocation/structured allocator ("incubating", the one
// that runs with the GA and beta features) decides it. Pure logic over the api types.
//
// Behaviour (upstream's, re-derived):
//   Pools      Slices are grouped per (driver, pool); of the slices the node can reach (nodeName,
//              nodeSelector, allNodes, or perDeviceNodeSelection with one device for the node),
//              only the newest generation counts. A pool with fewer slices than its
//              resourceSliceCount is incomplete, one with duplicate device names or broken
//              counter references invalid: neither gives devices. A request for All devices
//              is an error while a reachable pool is incomplete or invalid; a node where no
//              allocation is found but an invalid pool was seen gets "invalid resource pools
//              were encountered". Pools are tried in (driver, pool) order, slices by name, pools
//              with binding conditions last.
//   Requests   ExactCount takes `count` devices, All every matching device (at least one).
//              A firstAvailable request takes the first subrequest that can be satisfied; its
//              results name "request/subrequest". A device matches when every selector of its
//              class and of the request is true (a CEL error is an error for the claim). Devices
//              in use (by other claims, or taken earlier in this pod) are skipped, except by
//              adminAccess requests, which take a device in use (once per claim).
//   Limits     Devices with untolerated NoSchedule/NoExecute taints, devices whose counters
//              (sharedCounters) would be exceeded, devices whose capacity cannot serve the
//              request are skipped. A device with allowMultipleAllocations serves several
//              requests; each takes capacity as the capacity's requestPolicy rounds it, and its
//              result has a shareID and the consumed capacity. matchAttribute: every device of
//              the listed requests has the same value of the attribute; distinctAttribute: no
//              two share a value; a device without the attribute fails either.
//   Lists      With DRAListTypeAttributes (KEP 5491) an attribute may be a list (ints, bools,
//              strings, versions) and both constraints compare sets, a scalar being a set of
//              one: matchAttribute needs a value every device has (a non-empty intersection of
//              all of them), distinctAttribute no value two devices share (pairwise disjoint);
//              values of different types are different. For scalars that is the rule above.
//              Without the gate a list attribute fails both constraints, as a missing one does.
//              Selectors see a list attribute as a CEL list either way (`1 in x.numa`); the
//              gate adds `includes()` and lets the macros iterate it (attributes are `dyn`).
//   Search     Depth-first over claims, requests, devices, trying combinations rather than
//              permutations within a request, backtracking on failure; a claim gets at most
//              32 devices; the search stops at the caller's deadline. With device scoring (a
//              ksched extension, off by default: AllocatorInputs::scoring) the search runs in a
//              preferred order first and rates what it found (allocator_scoring.cc).
//   Result     Per claim: the devices in request order, the class and claim configs as
//              upstream copies them, and a node selector (the node's name when a device is
//              node-local, else the union of the slices' selectors, else none).
//
// Where ksched departs from upstream's code (not its intent): the counters a device takes are
// given back when a taint, a constraint or its capacity then rejects it (upstream keeps them
// for the rest of the search); distinctAttribute compares every device of the set (upstream
// only the last one of each request). All over devices with counters, which crashed
// kube-scheduler 1.36.0 (kubernetes#138882), works.
//
// Thread-safety: an Allocator is immutable after construction apart from its per-cycle caches
// (CEL results per device, available counters per pool), which are filled under atomics or
// once-flags; allocate() may run on many threads at once. The inputs (claims, classes, slices,
// inUse, consumedCapacity) are borrowed and must outlive the Allocator.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/api/node.h>
#include <ksched/api/resource.h>

#include "cel/cel.h"

namespace ksched::plugins::dra {

// A device: driver, pool, device name.
struct DeviceId {
  std::string driver;
  std::string pool;
  std::string device;

  // "driver/pool/device", as upstream prints a DeviceID.
  [[nodiscard]] std::string toString() const;
  friend bool operator==(const DeviceId&, const DeviceId&) = default;
};

// The same, borrowed (lookups without building strings).
struct DeviceIdView {
  std::string_view driver;
  std::string_view pool;
  std::string_view device;
};

struct DeviceIdHash {
  using is_transparent = void;
  [[nodiscard]] size_t operator()(const DeviceId& id) const noexcept;
  [[nodiscard]] size_t operator()(const DeviceIdView& id) const noexcept;
};
struct DeviceIdEqual {
  using is_transparent = void;
  template <typename A, typename B>
  [[nodiscard]] bool operator()(const A& a, const B& b) const noexcept {
    return a.device == b.device && a.pool == b.pool && a.driver == b.driver;
  }
};

using DeviceSet = std::unordered_set<DeviceId, DeviceIdHash, DeviceIdEqual>;
// capacity name -> amount.
using CapacityAmounts = std::map<std::string, api::Quantity, std::less<>>;
// Per device, the capacity that allocations sharing it (allowMultipleAllocations, a shareID in
// the result) consume: upstream's AllocatedState.AggregatedCapacity.
using ConsumedCapacity = std::unordered_map<DeviceId, CapacityAmounts, DeviceIdHash, DeviceIdEqual>;

// Which DRA features are on. The defaults are Kubernetes 1.37's; fromGates() reads the gates.
struct Features {
  bool adminAccess = true;             // DRAAdminAccess (GA)
  bool prioritizedList = true;         // DRAPrioritizedList (GA)
  bool partitionableDevices = true;    // DRAPartitionableDevices (beta)
  bool deviceTaints = true;            // DRADeviceTaints (GA)
  bool deviceBindingAndStatus = true;  // DRADeviceBindingConditions && DRAResourceClaimDeviceStatus
  bool consumableCapacity = true;      // DRAConsumableCapacity (beta)
  bool listTypeAttributes = false;     // DRAListTypeAttributes (alpha)

  [[nodiscard]] static Features fromGates(const features::Gates& gates) noexcept;
  // Every feature off: the GA core (ExactCount, All, selectors, constraints, config).
  [[nodiscard]] static Features none() noexcept;
  friend bool operator==(const Features&, const Features&) = default;
};

// Device scoring, a ksched extension (upstream allocates the first fit it finds; see
// allocator_scoring.cc). Off unless one of the fields is set; off, allocate() is upstream's.
struct DeviceScoring {
  // A fully qualified device attribute ("resource.kubernetes.io/pcieRoot"): the devices of a pod
  // that needs several are preferably taken from one value of it (one topology domain), the
  // tightest domain that holds them first. "": no preference.
  std::string topologyAttribute;
  // Devices that consume shared counters (partitions of a device) are preferably taken from the
  // counter sets already most consumed, so whole devices stay whole.
  bool packPartitions = false;

  [[nodiscard]] bool enabled() const noexcept {
    return !topologyAttribute.empty() || packPartitions;
  }
  friend bool operator==(const DeviceScoring&, const DeviceScoring&) = default;
};

// Upstream's limit on the devices of one claim (resource.k8s.io AllocationResultsMaxSize).
inline constexpr int kMaxDevicesPerClaim = 32;

// The slices grouped by pool and by node: what does not depend on the claims or on the devices
// in use. Built by indexSlices() once per set of slices and shared by the allocators of every
// cycle until the slices change. It borrows the slices, which must outlive it.
struct SliceIndex;
[[nodiscard]] std::shared_ptr<const SliceIndex> indexSlices(
    std::span<const std::shared_ptr<const api::ResourceSlice>> slices);

// Everything allocate() needs besides the node; the plugin builds it once per scheduling cycle.
struct AllocatorInputs {
  // The claims to allocate, in the pod's order; none may be allocated already.
  std::vector<const api::ResourceClaim*> claims;
  // The DeviceClass of that name, or nullptr.
  std::function<const api::DeviceClass*(std::string_view)> deviceClass;
  // Every ResourceSlice of the cluster.
  std::span<const std::shared_ptr<const api::ResourceSlice>> slices;
  // indexSlices(slices), when the caller keeps it from one cycle to the next; nullptr: the
  // Allocator indexes the slices itself.
  std::shared_ptr<const SliceIndex> sliceIndex;
  // Devices allocated to other claims, including claims in flight (assumed, not yet written):
  // every result without adminAccess and without a shareID. nullptr: none. Results with
  // adminAccess never make a device used; results with a shareID go to consumedCapacity.
  const DeviceSet* inUse = nullptr;
  // Per device, the capacity that allocations with a shareID (allowMultipleAllocations) take,
  // summed over their results' consumedCapacity. nullptr: none. A device in inUse or here
  // consumes its counters (partitionable devices).
  const ConsumedCapacity* consumedCapacity = nullptr;
  // Compiles a device selector; the plugin passes its cel::Cache (`cache.get(expression)`).
  std::function<cel::CompileResult(std::string_view)> compile;
  Features features;
  // Off by default: the first fit, as upstream.
  DeviceScoring scoring;
};

struct Result {
  enum class Code : uint8_t {
    kAllocated,      // allocations holds one AllocationResult per claim
    kUnschedulable,  // this node cannot satisfy the claims (message, reason)
    kError,          // a claim or class is broken (message): upstream aborts the pod's cycle
    kTimedOut,       // the deadline passed during the search
  };
  Code code = Code::kUnschedulable;
  std::vector<api::AllocationResult> allocations;
  // The status text, as upstream's plugin words it: kCannotAllocate or kInvalidPools for
  // kUnschedulable, kTimedOut's text, or the error (e.g. "claim ns/c, request r: could not
  // retrieve device class x: ...").
  std::string message;
  // kUnschedulable: why, for humans (computed only when the search failed), naming the claim,
  // request and cause, e.g.
  //   claim gpu-claim, request gpu: no device of class "gpu.example.com" matches selector
  //   device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) >= 0 on this node
  //   (4 devices, 4 of the class)
  std::string reason;
  // Steps of the search (upstream's allocateOne invocations) this call took.
  int64_t steps = 0;
  // kAllocated with AllocatorInputs::scoring enabled: how good the allocation is, 0..100 (all
  // devices in one topology domain, partitions filling their counter sets), and why in one line
  // ("4 devices in pcieRoot pci0000:00").
  struct Quality {
    int64_t score = 0;
    std::string reason;
    friend bool operator==(const Quality&, const Quality&) = default;
  };
  std::optional<Quality> quality;

  [[nodiscard]] bool allocated() const noexcept { return code == Code::kAllocated; }
};

inline constexpr std::string_view kCannotAllocate = "cannot allocate all claims";
inline constexpr std::string_view kInvalidPools = "invalid resource pools were encountered";
inline constexpr std::string_view kTimedOut = "timed out trying to allocate devices";

namespace detail {
struct Index;
}  // namespace detail

class Allocator {
 public:
  // Indexes the slices by node and pool (unless inputs.sliceIndex has them) and validates what
  // does not depend on the node (the claims' requests, classes, constraints; CEL compilation).
  // Never throws for bad input: problems surface from allocate() in upstream's order.
  explicit Allocator(AllocatorInputs inputs);
  ~Allocator();
  Allocator(const Allocator&) = delete;
  Allocator& operator=(const Allocator&) = delete;

  using Clock = std::chrono::steady_clock;
  // Allocates every claim on `node`, or says why not. Thread-safe. The search gives up with
  // kTimedOut once `deadline` has passed (checked every few dozen steps).
  [[nodiscard]] Result allocate(const api::Node& node,
                                Clock::time_point deadline = Clock::time_point::max()) const;

 private:
  std::unique_ptr<detail::Index> index_;  // constant after construction, caches aside
};

}  // namespace ksched::plugins::dra
