// The allocator's private parts, shared by allocator.cc (validation, search, results),
// allocator_pools.cc (the slice index and the pools a node sees), allocator_capacity.cc
// (consumable capacity), allocator_reason.cc (why a node fails) and allocator_scoring.cc
// (device scoring). Not part of the API.
//
// Indices: every device of every slice has a global index (SliceInfo::firstDevice + its
// position), which keys the per-cycle caches; the pools one node sees number their devices
// again from 0 (PoolView::localBase), which keys the per-call search state.
#pragma once

#include <atomic>
#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "plugins/dynamic_resources/allocator.h"

namespace ksched::plugins::dra::detail {

// counter name -> amount; counter set name -> its counters.
using CounterAmounts = std::map<std::string, api::Quantity, std::less<>>;
using CounterSets = std::map<std::string, CounterAmounts, std::less<>>;

struct SliceInfo {
  const api::ResourceSlice* slice = nullptr;
  uint32_t pool = 0;         // index into Index::pools
  uint32_t firstDevice = 0;  // global index of devices[0]
  bool dupNames = false;     // two of its devices share a name
};

// The counter sets of one generation of a pool and what the devices in use leave of them.
struct GenCounters {
  std::once_flag once;
  std::string invalidReason;  // non-empty: the pool is invalid (counter references)
  CounterSets available;      // may go negative when the devices in use overcommit
  CounterSets total;          // as the slices declare them (device scoring's shares)
};

struct PoolInfo {
  std::string_view driver;
  std::string_view name;
  std::vector<uint32_t> slices;  // every slice of the pool, any generation, input order
};

// Per pool, per cycle (they depend on the devices in use).
struct PoolCounters {
  std::mutex mu;
  std::map<int64_t, std::unique_ptr<GenCounters>> byGeneration;  // guarded by mu
};

// A pool as one node sees it (upstream's Pool).
struct PoolView {
  uint32_t pool = 0;
  int64_t generation = 0;
  bool incomplete = false;
  bool invalid = false;
  std::string invalidReason;
  std::vector<uint32_t> slices;           // device slices targeting the node, by name
  std::vector<uint32_t> localBase;        // node-local index of each slice's first device
  const GenCounters* counters = nullptr;  // partitionable pools only
  bool bindingConditions = false;
};

struct NodeView {
  std::vector<PoolView> pools;  // by (driver, pool), those with binding conditions last
  uint32_t localDevices = 0;
};

struct CompiledSelector {
  std::string_view expression;
  cel::CompileResult compiled;
};

// One request without subrequests, or one subrequest.
struct Slot {
  uint32_t claim = 0;
  uint32_t request = 0;
  uint32_t sub = 0;
  bool isSub = false;
  const api::ExactDeviceRequest* exact = nullptr;
  std::string_view name;        // the request's or the subrequest's
  std::string_view parentName;  // the request's, for a subrequest
  std::string fullName;         // "request" or "request/subrequest"
  const api::DeviceClass* cls = nullptr;
  uint32_t classRow = 0;
  std::vector<CompiledSelector> selectors;
  std::string staticError;  // the first node-independent problem, upstream's words
  bool all = false;
  int64_t count = 0;
  bool admin = false;
};

struct ClassRow {
  const api::DeviceClass* cls = nullptr;
  std::vector<CompiledSelector> selectors;
};

struct RequestInfo {
  std::string preError;  // feature checks that come before the (sub)requests' own
  uint32_t firstSlot = 0;
  uint32_t numSlots = 0;
  bool hasSubs = false;
};

struct ClaimInfo {
  const api::ResourceClaim* claim = nullptr;
  std::string key;  // "namespace/name", as upstream's klog.KObj
  std::vector<RequestInfo> requests;
  std::string constraintError;
};

// Match states in the per-cycle caches.
enum : uint8_t { kUnknown = 0, kMatch = 1, kNoMatch = 2, kCelError = 3 };
// Allocation state bits.
enum : uint8_t { kKnown = 1, kInUse = 2, kShared = 4 };

}  // namespace ksched::plugins::dra::detail

namespace ksched::plugins::dra {

struct SliceIndex {
  std::vector<detail::SliceInfo> slices;
  std::vector<detail::PoolInfo> pools;
  std::unordered_map<std::string_view, std::vector<uint32_t>> slicesOnNode;
  std::vector<uint32_t> slicesShared;  // no nodeName
  uint32_t numDevices = 0;
};

}  // namespace ksched::plugins::dra

namespace ksched::plugins::dra::detail {

struct Index {
  explicit Index(AllocatorInputs inputs);

  AllocatorInputs in;
  std::shared_ptr<const SliceIndex> sliceIndex;  // in.sliceIndex, or built for in.slices
  const std::vector<SliceInfo>& slices;
  const std::vector<PoolInfo>& pools;
  const std::unordered_map<std::string_view, std::vector<uint32_t>>& slicesOnNode;
  const std::vector<uint32_t>& slicesShared;
  const uint32_t numDevices;
  std::unique_ptr<PoolCounters[]> poolCounters;  // [pool]

  std::vector<ClaimInfo> claims;
  std::vector<Slot> slots;
  std::vector<ClassRow> classRows;

  // [row * numDevices + device]: whether the class's (request's) selectors accept the device.
  std::unique_ptr<std::atomic<uint8_t>[]> classCache;
  std::unique_ptr<std::atomic<uint8_t>[]> selectorCache;
  // [device]: kKnown | kInUse | kShared.
  std::unique_ptr<std::atomic<uint8_t>[]> allocatedCache;

  // allocator_pools.cc
  [[nodiscard]] NodeView gatherPools(const api::Node& node) const;
  [[nodiscard]] const GenCounters& genCounters(uint32_t pool, int64_t generation) const;

  // allocator.cc
  void indexClaims();
  // kInUse: the device (global index) is in AllocatorInputs::inUse; kShared: shared
  // allocations consume some of its capacity. Either makes it consume its counters.
  [[nodiscard]] uint8_t allocationState(uint32_t device, const api::ResourceSlice& slice,
                                        const api::Device& dev) const;
  [[nodiscard]] bool allocated(uint32_t device, const api::ResourceSlice& slice,
                               const api::Device& dev) const {
    return (allocationState(device, slice, dev) & (kInUse | kShared)) != 0;
  }
  // Evaluates (once per cycle) the selectors of a class row / slot for a device. kCelError
  // fills *error with upstream's message.
  [[nodiscard]] uint8_t classMatch(uint32_t row, uint32_t device, const api::ResourceSlice& slice,
                                   const api::Device& dev, std::string* error) const;
  [[nodiscard]] uint8_t selectorMatch(uint32_t slot, uint32_t device,
                                      const api::ResourceSlice& slice, const api::Device& dev,
                                      std::string* error) const;
};

// A device of the pools a node sees: pool (NodeView::pools), slice (PoolView::slices) and
// device (ResourceSliceSpec::devices) positions.
struct DeviceRef {
  uint32_t pool = 0;
  uint32_t slice = 0;
  uint32_t device = 0;
};

// matchAttribute or distinctAttribute of one claim, during one search.
struct Constraint {
  bool distinct = false;
  bool sets = false;  // DRAListTypeAttributes: values compare as sets, lists allowed
  std::string_view attribute;
  const std::vector<std::string>* requests = nullptr;  // empty: every request
  const api::DeviceAttribute* first = nullptr;         // matchAttribute without sets
  int count = 0;                                       // matchAttribute without sets
  std::vector<const api::DeviceAttribute*> values;     // distinctAttribute, or with sets

  [[nodiscard]] bool applies(std::string_view request, std::string_view sub) const;
  // Whether the device may join; if so it is counted (remove() undoes that).
  [[nodiscard]] bool add(std::string_view request, std::string_view sub, const api::Device& device,
                         std::string_view driver);
  void remove(std::string_view request, std::string_view sub, const api::Device& device,
              std::string_view driver);
};

// A device taken during the search, and what it took.
struct Picked {
  DeviceRef ref;
  uint32_t slot = 0;
  bool multi = false;          // allowMultipleAllocations: shared, not marked in use
  bool countersTaken = false;  // its consumesCounters were added to the pool's use
  CapacityAmounts consumed;    // shared devices: the capacity this allocation takes
  std::string shareId;
};

// Per slot, what this node makes of it.
struct RequestData {
  int numDevices = 0;
  std::vector<DeviceRef> allDevices;  // allocationMode All: the devices to take
};

enum class Step : uint8_t { kFail, kDone, kMaxSize, kStop };
enum class Take : uint8_t { kNo, kYes, kError };

// One allocate() call: upstream's allocator struct. Single-threaded.
class Search {
 public:
  Search(const Index& ix, const api::Node& node, Allocator::Clock::time_point deadline);
  [[nodiscard]] Result run();

 private:
  struct Indices {
    uint32_t claim = 0;
    uint32_t request = 0;
    uint32_t sub = 0;
    int device = 0;
  };

  [[nodiscard]] Result fail(Result::Code code, std::string message) const;
  [[nodiscard]] bool validateSlot(uint32_t slot);
  [[nodiscard]] Step allocateOne(Indices r, bool allocateSubRequest, DeviceRef start);
  // One device of allocateOne's loop: nullopt to go on with the next one. `resume`: where the
  // request's next device is looked for.
  [[nodiscard]] std::optional<Step> tryDevice(const Indices& r, uint32_t slot, DeviceRef ref,
                                              bool allocateSubRequest, DeviceRef resume);
  // Whether the search must stop: the deadline passed (timedOut_) or the scored attempt's
  // steps ran out (overBudget_).
  [[nodiscard]] bool pastLimits();
  [[nodiscard]] Take isSelectable(uint32_t slot, DeviceRef ref);
  [[nodiscard]] Take allocateDevice(const Indices& r, uint32_t slot, DeviceRef ref, bool must);
  void release(const Picked& p);
  [[nodiscard]] bool countersFit(DeviceRef ref) const;
  void useCounters(DeviceRef ref, bool add);
  [[nodiscard]] std::optional<bool> capacityFits(uint32_t slot, DeviceRef ref) const;
  [[nodiscard]] bool deviceInUse(DeviceRef ref) const;
  [[nodiscard]] bool allocatingForClaim(uint32_t local, uint32_t claim) const;
  [[nodiscard]] bool sharedInUse(DeviceRef ref) const;
  [[nodiscard]] const SliceInfo& sliceOf(DeviceRef ref) const;
  [[nodiscard]] const api::Device& deviceOf(DeviceRef ref) const;
  [[nodiscard]] uint32_t globalOf(DeviceRef ref) const;
  [[nodiscard]] uint32_t localOf(DeviceRef ref) const;
  [[nodiscard]] Result results() const;
  [[nodiscard]] std::optional<api::NodeSelector> nodeSelector(const std::vector<Picked>& picks,
                                                              std::string* error) const;
  // allocator_reason.cc: why the claims do not fit this node, for humans.
  [[nodiscard]] std::string explain();

  // allocator_scoring.cc (device scoring): the search in the preferred order, falling back to
  // the first fit; the quality of what it found.
  [[nodiscard]] Step searchScored();
  // Devices a pod takes by count (exactly, not All, not adminAccess), at least.
  [[nodiscard]] int64_t countedDevices() const;
  // The node's topology domains in the order tried (the tightest that can hold `need` first).
  [[nodiscard]] std::vector<const api::DeviceAttribute*> domains(int64_t need);
  // order_ := the node's devices in `domain` (nullptr: all) or without the attribute, partitions
  // of the most consumed counter sets first when packing.
  void orderDevices(const api::DeviceAttribute* domain);
  // Used share (0..1, its most used counter) of a counter set of a pool view, before (false) or
  // with (true) what this search took.
  [[nodiscard]] double setShare(uint32_t pool, std::string_view set, bool inFlight) const;
  [[nodiscard]] Result::Quality quality() const;

  // Calls fn(ref, device, slice) for each device of the node's complete, valid pools, in the
  // search's order.
  template <typename F>
  void forEachDevice(F&& fn) const {
    for (uint32_t p = 0; p < nv_.pools.size(); ++p) {
      const PoolView& pv = nv_.pools[p];
      if (pv.incomplete || pv.invalid) continue;
      for (uint32_t s = 0; s < pv.slices.size(); ++s) {
        const SliceInfo& si = ix_.slices[pv.slices[s]];
        const auto& devices = si.slice->spec.devices;
        for (uint32_t d = 0; d < devices.size(); ++d) fn(DeviceRef{p, s, d}, devices[d], si);
      }
    }
  }

  const Index& ix_;
  const Features& f_;
  const api::Node& node_;
  Allocator::Clock::time_point deadline_;
  NodeView nv_;
  int64_t steps_ = 0;
  bool timedOut_ = false;
  std::string error_;

  std::vector<RequestData> req_;                      // per slot
  std::vector<std::vector<uint32_t>> selectedSub_;    // per claim, per request
  std::vector<std::vector<Constraint>> constraints_;  // per claim
  uint32_t words_ = 1;                                // claim bits per local device
  std::vector<uint64_t> allocating_;                  // [local * words_ + claim / 64]
  std::vector<uint32_t> allocatingCount_;             // per local device, non-shared takes
  std::vector<uint32_t> sharedCount_;                 // per local device, shared takes
  std::vector<CapacityAmounts> sharedAmounts_;        // per local device, shared takes
  std::vector<CounterSets> counterUse_;               // per pool view, in flight
  std::vector<std::vector<Picked>> picks_;            // per claim

  // Device scoring: allocateOne walks order_ instead of the pools when `ordered_`; a scored
  // attempt stops after stepLimit_ steps.
  bool ordered_ = false;
  std::vector<DeviceRef> order_;
  int64_t stepLimit_ = INT64_MAX;
  bool overBudget_ = false;
};

// nodeName, then allNodes, then nodeSelector (upstream's NodeMatches).
[[nodiscard]] bool nodeMatches(const api::Node& node, const std::optional<std::string>& nodeName,
                               const std::optional<bool>& allNodes,
                               const std::optional<api::NodeSelector>& selector);

// The attribute of that fully qualified name ("domain/name"); a name of the device's driver may
// be stored without its domain. nullptr when absent.
[[nodiscard]] const api::DeviceAttribute* lookupAttribute(const api::Device& device,
                                                          std::string_view driver,
                                                          std::string_view name);

// One value of an attribute as sets compare them: the type (int, bool, string, version: the
// value's variant index % 4) and the value (an int or bool in `number`, else `text`).
struct AttrItem {
  uint8_t type = 0;
  int64_t number = 0;
  std::string_view text;
  friend bool operator==(const AttrItem&, const AttrItem&) = default;
};
// Calls f with each value of an attribute (the scalar, or the items of the list; strings
// borrowed) until it returns true; whether it did.
template <class F>
bool anyItem(const api::DeviceAttribute& a, F&& f) {
  using A = api::DeviceAttribute;
  const auto type = static_cast<uint8_t>(a.value.index() % 4);
  return std::visit(
      [&](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        auto one = [&](const auto& x) {
          using X = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<X, std::string>) {
            return f(AttrItem{type, 0, x});
          } else if constexpr (std::is_same_v<X, A::Version>) {
            return f(AttrItem{type, 0, x.value});
          } else {
            return f(AttrItem{type, static_cast<int64_t>(x), {}});
          }
        };
        if constexpr (std::is_same_v<T, A::Bools>) {
          for (const bool b : v) {
            if (one(b)) return true;
          }
          return false;
        } else if constexpr (std::is_same_v<T, A::Ints> || std::is_same_v<T, A::Strings> ||
                             std::is_same_v<T, A::Versions>) {
          for (const auto& x : v) {
            if (one(x)) return true;
          }
          return false;
        } else {
          return static_cast<bool>(one(v));
        }
      },
      a.value);
}
// Whether the attribute has that value.
[[nodiscard]] bool holds(const api::DeviceAttribute& a, const AttrItem& x);
// Whether the two share a value (a scalar is a set of one; different types never meet).
[[nodiscard]] bool intersects(const api::DeviceAttribute& a, const api::DeviceAttribute& b);

// A NoSchedule or NoExecute taint no toleration tolerates, or nullptr.
[[nodiscard]] const api::DeviceTaint* untoleratedTaint(
    const api::Device& device, const std::vector<api::DeviceToleration>& tolerations);

// allocator_capacity.cc: consumable capacity (upstream's consumable_capacity.go).
// Whether the device can serve the request's capacity on top of what `consumed` (existing
// allocations) and `allocating` (this search) already take. nullopt: the request names a
// capacity the device lacks.
[[nodiscard]] std::optional<bool> capacityFits(const api::CapacityRequirements& requests,
                                               const api::DeviceCapacities& capacity,
                                               const CapacityAmounts* consumed,
                                               const CapacityAmounts* allocating);
// What a shared allocation of the device consumes for the request (every capacity).
[[nodiscard]] CapacityAmounts consumedByRequest(const api::CapacityRequirements& requests,
                                                const api::DeviceCapacities& capacity);
// A random version 4 UUID, for shareID.
[[nodiscard]] std::string newShareId();

}  // namespace ksched::plugins::dra::detail
