// Micro benchmarks of the DRA allocator (plugins/dynamic_resources/allocator.h): what Filter pays
// per node for one claim of one GPU (or of four, with and without device scoring), nodes of 8
// GPUs each. Figures are printed, never asserted.
//
// The device selector is `device.driver == "gpu.example.com"` evaluated by the tests' CEL
// stand-in (tests/support/dra_test_objects.h); its results are cached per device for the cycle,
// so only the first allocate() on a node evaluates it.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <ksched/api/node.h>
#include <ksched/api/resource.h>

#include "plugins/dynamic_resources/allocator.h"
#include "tests/support/dra_test_objects.h"

namespace ksched {
namespace {

using namespace plugins::dra;            // NOLINT(google-build-using-namespace)
using namespace plugins::dra::testutil;  // NOLINT(google-build-using-namespace)

const std::string kGpu = "gpu.example.com";
const std::string kPcieRoot = "resource.kubernetes.io/pcieRoot";

struct Cluster {
  std::vector<api::Node> nodes;
  std::vector<std::shared_ptr<const api::ResourceSlice>> slices;
  DeviceSet inUse;
  api::DeviceClass cls = deviceClass(kGpu, kGpu);
  api::ResourceClaim claim = testutil::claim("gpu-claim", {request("gpu", kGpu, 1)});

  // `used` GPUs of every node are allocated already.
  Cluster(int numNodes, int used) {
    for (int n = 0; n < numNodes; ++n) {
      const std::string name = "node-" + std::to_string(n);
      nodes.push_back(node(name, "region-1"));
      std::vector<api::Device> gpus;
      for (int g = 0; g < 8; ++g) {
        gpus.push_back(dev("gpu-" + std::to_string(g))
                           .cap("memory", "80Gi")
                           .attr("numa", int64_t{g / 4})
                           .attr(kPcieRoot, g % 2 == 0 ? "pci0000:00" : "pci0000:40"));
        if (g < used) inUse.insert({kGpu, name, "gpu-" + std::to_string(g)});
      }
      slices.push_back(std::make_shared<const api::ResourceSlice>(
          slice(name + "-gpus", onNode(name), pool(name), kGpu, std::move(gpus))));
    }
  }

  [[nodiscard]] AllocatorInputs inputs() const {
    AllocatorInputs in;
    in.claims = {&claim};
    in.deviceClass = [this](std::string_view) { return &cls; };
    in.slices = slices;
    in.inUse = &inUse;
    in.compile = fakeCompile;
    return in;
  }
};

// One node of 8 GPUs, steady state: the Allocator (one per cycle) is built once.
void BM_DraAllocateOneGpuOn8(benchmark::State& state) {
  const Cluster cluster(1, static_cast<int>(state.range(0)));
  const Allocator allocator(cluster.inputs());
  for (auto _ : state) {
    Result r = allocator.allocate(cluster.nodes[0]);
    benchmark::DoNotOptimize(r);
    if (!r.allocated()) state.SkipWithError("not allocated");
  }
}
BENCHMARK(BM_DraAllocateOneGpuOn8)->Arg(0)->Arg(7)->ArgName("inUse")->Unit(benchmark::kMicrosecond);

// Device scoring (allocator_scoring.cc): a claim of 4 GPUs on a node of 8 whose PCIe roots
// alternate (the first fit splits them), with `inUse` of them taken (one of each root per 2).
// scoring: 0 off (upstream's first fit), 1 topologyAttribute, 2 topology and packPartitions.
void BM_DraAllocateFourGpusOn8(benchmark::State& state) {
  Cluster cluster(1, static_cast<int>(state.range(0)));
  cluster.claim = testutil::claim("gpu-claim", {request("gpu", kGpu, 4)});
  AllocatorInputs in = cluster.inputs();
  if (state.range(1) > 0) in.scoring = {kPcieRoot, state.range(1) > 1};
  const Allocator allocator(std::move(in));
  for (auto _ : state) {
    Result r = allocator.allocate(cluster.nodes[0]);
    benchmark::DoNotOptimize(r);
    if (!r.allocated()) state.SkipWithError("not allocated");
  }
}
BENCHMARK(BM_DraAllocateFourGpusOn8)
    ->ArgsProduct({{0, 2}, {0, 1, 2}})
    ->ArgNames({"inUse", "scoring"})
    ->Unit(benchmark::kMicrosecond);

// A whole cycle over 500 nodes of 8 GPUs: build the Allocator, allocate on every node (with all
// GPUs in use, every node fails and says why). sliceIndex:1 reuses the slices' index from one
// cycle to the next, as DynamicResources does while no slice changes; 0 indexes them per cycle.
void BM_DraCycle500Nodes(benchmark::State& state) {
  const Cluster cluster(500, static_cast<int>(state.range(0)));
  const auto kept = state.range(1) != 0 ? indexSlices(cluster.slices) : nullptr;
  for (auto _ : state) {
    AllocatorInputs in = cluster.inputs();
    in.sliceIndex = kept;
    const Allocator allocator(std::move(in));
    for (const auto& n : cluster.nodes) {
      Result r = allocator.allocate(n);
      benchmark::DoNotOptimize(r);
    }
  }
  // Seconds per node (printed with an SI prefix: "1.5u" is 1.5 us).
  state.counters["per_node"] = benchmark::Counter(
      500, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_DraCycle500Nodes)
    ->ArgsProduct({{0, 8}, {0, 1}})
    ->ArgNames({"inUse", "sliceIndex"})
    ->Unit(benchmark::kMillisecond);

// Indexing the slices of 500 nodes (by pool and node): what a kept index saves each cycle.
void BM_DraIndexSlices500Nodes(benchmark::State& state) {
  const Cluster cluster(500, 0);
  for (auto _ : state) benchmark::DoNotOptimize(indexSlices(cluster.slices));
}
BENCHMARK(BM_DraIndexSlices500Nodes)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace ksched
