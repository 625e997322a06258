#include "plugins/image_locality/image_locality.h"

#include <string>
#include <string_view>

#include <ksched/api/pod.h>

namespace ksched::plugins {
namespace {

int64_t scaledImageScore(const ImageStateSummary& state, int64_t totalNumNodes) {
  if (totalNumNodes <= 0) return 0;
  const double spread = static_cast<double>(state.numNodes) / static_cast<double>(totalNumNodes);
  return static_cast<int64_t>(static_cast<double>(state.size) * spread);
}

// Whether `image` names no tag, so that kubelets report it with ":latest".
bool lacksTag(std::string_view image) {
  const size_t colon = image.rfind(':');
  const size_t slash = image.rfind('/');
  // Go: LastIndex(":") <= LastIndex("/"), with -1 for "not found".
  const auto pos = [](size_t p) {
    return p == std::string_view::npos ? int64_t{-1} : static_cast<int64_t>(p);
  };
  return pos(colon) <= pos(slash);
}

int64_t containerScores(const std::vector<api::Container>& containers, const NodeInfo& nodeInfo,
                        int64_t totalNumNodes) {
  int64_t sum = 0;
  const auto& states = nodeInfo.imageStates();
  // Score runs per node: the normalized name is built only for an image without a tag, in a
  // buffer the thread keeps.
  thread_local std::string withTag;
  for (const auto& c : containers) {
    std::string_view name = c.image;
    if (lacksTag(name)) {
      withTag.assign(name);
      withTag += ":latest";
      name = withTag;
    }
    auto it = states.find(name);
    if (it != states.end()) sum += scaledImageScore(it->second, totalNumNodes);
  }
  return sum;
}

}  // namespace

std::string ImageLocality::normalizedImageName(std::string_view image) {
  std::string out(image);
  if (lacksTag(image)) out += ":latest";
  return out;
}

int64_t ImageLocality::calculatePriority(int64_t sumScores, int64_t numContainers) {
  const int64_t maxThreshold = kMaxContainerThreshold * numContainers;
  if (sumScores < kMinThreshold) {
    sumScores = kMinThreshold;
  } else if (sumScores > maxThreshold) {
    sumScores = maxThreshold;
  }
  if (maxThreshold == kMinThreshold) return 0;
  return kMaxNodeScore * (sumScores - kMinThreshold) / (maxThreshold - kMinThreshold);
}

int64_t ImageLocality::sumImageScores(const NodeInfo& nodeInfo, const api::Pod& pod,
                                      int64_t totalNumNodes) {
  return containerScores(pod.spec.initContainers, nodeInfo, totalNumNodes) +
         containerScores(pod.spec.containers, nodeInfo, totalNumNodes);
}

Status ImageLocality::score(const CycleState& /*state*/, const api::Pod& pod,
                            const NodeInfo& nodeInfo, int64_t& score) const {
  const auto totalNumNodes = static_cast<int64_t>(handle_.snapshot().list().size());
  const int64_t sum = sumImageScores(nodeInfo, pod, totalNumNodes);
  score = calculatePriority(
      sum, static_cast<int64_t>(pod.spec.initContainers.size() + pod.spec.containers.size()));
  return {};
}

PluginFactory imageLocalityFactory() {
  return makePluginFactory<ImageLocality>(
      [](Handle& handle) { return std::make_unique<ImageLocality>(handle); });
}

}  // namespace ksched::plugins
