// Micro benchmarks of device-selector evaluation (src/cel): the allocator
// evaluates every selector of a request once per candidate device on every node, so this is
// the per-device cost. Devices as a GPU driver publishes them: a dozen attributes and a few
// capacities. Figures are printed, never asserted (docs/performance.md).
#include <benchmark/benchmark.h>

#include <string>

#include "cel/cel.h"

namespace ksched {
namespace {

struct Device {
  api::DeviceAttributes attributes;
  api::DeviceCapacities capacity;

  Device() {
    attributes["model"] = api::DeviceAttribute{std::string("a100")};
    attributes["uuid"] = api::DeviceAttribute{std::string("gpu-6f1a2c3e-8d6b-4a9e-9b1f")};
    attributes["index"] = api::DeviceAttribute{int64_t{3}};
    attributes["minor"] = api::DeviceAttribute{int64_t{3}};
    attributes["migEnabled"] = api::DeviceAttribute{false};
    attributes["driverVersion"] = api::DeviceAttribute{api::DeviceAttribute::Version{"550.54.15"}};
    attributes["cudaComputeCapability"] =
        api::DeviceAttribute{api::DeviceAttribute::Version{"8.0.0"}};
    attributes["architecture"] = api::DeviceAttribute{std::string("Ampere")};
    attributes["brand"] = api::DeviceAttribute{std::string("Nvidia")};
    attributes["productName"] = api::DeviceAttribute{std::string("NVIDIA A100-SXM4-40GB")};
    attributes["resource.kubernetes.io/pcieRoot"] = api::DeviceAttribute{std::string("pci0000:00")};
    attributes["dra.net/numaNode"] = api::DeviceAttribute{int64_t{0}};
    capacity["memory"] = api::DeviceCapacity{api::Quantity::parse("40Gi"), std::nullopt};
    capacity["multiprocessors"] = api::DeviceCapacity{api::Quantity::parse("108"), std::nullopt};
  }
};

void evaluate(benchmark::State& state, const char* expression) {
  const cel::CompileResult compiled = cel::compile(expression);
  if (!compiled.program) {
    state.SkipWithError(compiled.error.c_str());
    return;
  }
  const Device d;
  const cel::DeviceView view{"x", &d.attributes, &d.capacity, false};
  for (auto _ : state) {
    cel::EvalResult r = compiled.program->evaluate(view);
    benchmark::DoNotOptimize(r.value);
  }
}

// The figure docs/dra.md quotes.
void BM_CelDriverAndModel(benchmark::State& state) {
  evaluate(state, R"(device.driver == "x" && device.attributes["x"].model == "a100")");
}
BENCHMARK(BM_CelDriverAndModel);

void BM_CelVersionAndMemory(benchmark::State& state) {
  evaluate(state, R"(device.attributes["x"].driverVersion.isGreaterThan(semver("550.0.0")) && )"
                  R"(device.capacity["x"].memory.compareTo(quantity("40Gi")) >= 0)");
}
BENCHMARK(BM_CelVersionAndMemory);

void BM_CelMatches(benchmark::State& state) {
  evaluate(state, R"(device.attributes["x"].productName.matches("^NVIDIA A100"))");
}
BENCHMARK(BM_CelMatches);

void BM_CelExistsOverAttributes(benchmark::State& state) {
  evaluate(state, R"(device.attributes["x"].exists(k, k.startsWith("cuda")))");
}
BENCHMARK(BM_CelExistsOverAttributes);

void BM_CelCompile(benchmark::State& state) {
  for (auto _ : state) {
    cel::CompileResult r =
        cel::compile(R"(device.driver == "x" && device.attributes["x"].model == "a100")");
    benchmark::DoNotOptimize(r.program);
  }
}
BENCHMARK(BM_CelCompile);

}  // namespace
}  // namespace ksched
