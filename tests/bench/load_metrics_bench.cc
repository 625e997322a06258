// Micro benchmark of the load-aware plugins' refresh (plugins/load_aware/load_source.h): one
// Prometheus /api/v1/query answer for 5000 nodes (node_exporter's instance label, "host:port"),
// about 0.6 MB, read into node -> value as each refresh reads its two to four answers. Figures
// are printed, never asserted (docs/load-aware.md).
#include <benchmark/benchmark.h>

#include <string>

#include "plugins/load_aware/load_source.h"

namespace ksched {
namespace {

std::string prometheusAnswer(int nodes) {
  std::string body = R"({"status":"success","data":{"resultType":"vector","result":[)";
  for (int i = 0; i < nodes; ++i) {
    if (i > 0) body += ',';
    body += R"({"metric":{"instance":"node-)" + std::to_string(i) +
            R"(:9100","job":"node-exporter","mode":"idle"},"value":[1764460800.123,"0.)" +
            std::to_string(100000 + i * 7 % 90000) + R"("]})";
  }
  return body + "]}}";
}

void BM_ParsePrometheusVector5000(benchmark::State& state) {
  const std::string body = prometheusAnswer(5000);
  for (auto _ : state) {
    std::string error;
    auto v = plugins::load::parsePrometheusVector(body, "instance", error);
    if (!v || v->size() != 10000) state.SkipWithError("not parsed");
    benchmark::DoNotOptimize(v);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * body.size()));
}
BENCHMARK(BM_ParsePrometheusVector5000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ksched
