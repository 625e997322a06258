// ImageLocality (Score).
//   Score: favors nodes that already have the pod's images. For each container and init
//          container whose image (normalized: ":latest" added when there is no tag or digest)
//          is on the node, adds size * (nodes having the image / all nodes); the sum is clamped
//          to [23MiB, 1000MiB * number of containers] and scaled linearly to [0, 100]. No
//          normalization.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/plugin_names.h>
#include <ksched/registry.h>

namespace ksched::plugins {

class ImageLocality final : public ScorePlugin, public SignPlugin {
 public:
  // Opportunistic batching: its answers on a node depend on the pod and that node only.
  [[nodiscard]] bool signPod(const api::Pod& /*pod*/) const override { return true; }
  static constexpr std::string_view kName = names::kImageLocality;
  static constexpr int64_t kMB = 1024 * 1024;
  static constexpr int64_t kMinThreshold = 23 * kMB;
  static constexpr int64_t kMaxContainerThreshold = 1000 * kMB;

  // `handle` must outlive the plugin.
  explicit ImageLocality(const Handle& handle) : handle_(handle) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Uses the snapshot's node count; thread-safe.
  [[nodiscard]] Status score(const CycleState& state, const api::Pod& pod, const NodeInfo& nodeInfo,
                             int64_t& score) const override;

  // Upstream normalizedImageName: appends ":latest" when the name has no tag or digest.
  [[nodiscard]] static std::string normalizedImageName(std::string_view image);
  // Upstream calculatePriority.
  [[nodiscard]] static int64_t calculatePriority(int64_t sumScores, int64_t numContainers);
  // Upstream sumImageScores.
  [[nodiscard]] static int64_t sumImageScores(const NodeInfo& nodeInfo, const api::Pod& pod,
                                              int64_t totalNumNodes);

 private:
  const Handle& handle_;
};

// Takes no args (ignored).
PluginFactory imageLocalityFactory();

}  // namespace ksched::plugins
