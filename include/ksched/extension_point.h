// The extension points of the scheduling framework, listed once: the order, the names upstream
// uses in configuration errors, metrics and logs, and the interface a plugin implements to serve
// each. The config layer's table (config/profile.h, kExtensionPoints) and the framework's plugin
// lists are indexed by this enum; nothing else spells the list.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <type_traits>
#include <utility>

#include <ksched/plugin.h>
#include <ksched/pod_group_plugin.h>

namespace ksched {

// In upstream's order (the order of the Plugins fields of KubeSchedulerConfiguration).
enum class ExtensionPoint : uint8_t {
  kPreEnqueue,
  kQueueSort,
  kPreFilter,
  kFilter,
  kPostFilter,
  kPreScore,
  kScore,
  kReserve,
  kPermit,
  kPreBind,
  kBind,
  kPostBind,
  // Pod-group points (GenericWorkload), after multiPoint in upstream's Plugins.
  kPlacementGenerate,
  kPlacementScore,
  kPlacementFeasible,
  kPodGroupPostFilter,
};
inline constexpr size_t kNumExtensionPoints = 16;

inline constexpr std::array<ExtensionPoint, kNumExtensionPoints> kAllExtensionPoints = {
    ExtensionPoint::kPreEnqueue,
    ExtensionPoint::kQueueSort,
    ExtensionPoint::kPreFilter,
    ExtensionPoint::kFilter,
    ExtensionPoint::kPostFilter,
    ExtensionPoint::kPreScore,
    ExtensionPoint::kScore,
    ExtensionPoint::kReserve,
    ExtensionPoint::kPermit,
    ExtensionPoint::kPreBind,
    ExtensionPoint::kBind,
    ExtensionPoint::kPostBind,
    ExtensionPoint::kPlacementGenerate,
    ExtensionPoint::kPlacementScore,
    ExtensionPoint::kPlacementFeasible,
    ExtensionPoint::kPodGroupPostFilter,
};

[[nodiscard]] constexpr size_t indexOf(ExtensionPoint p) { return static_cast<size_t>(p); }

// "PreFilter", as upstream names the point.
[[nodiscard]] constexpr std::string_view extensionPointName(ExtensionPoint p) {
  constexpr std::array<std::string_view, kNumExtensionPoints> kNames = {"PreEnqueue",
                                                                        "QueueSort",
                                                                        "PreFilter",
                                                                        "Filter",
                                                                        "PostFilter",
                                                                        "PreScore",
                                                                        "Score",
                                                                        "Reserve",
                                                                        "Permit",
                                                                        "PreBind",
                                                                        "Bind",
                                                                        "PostBind",
                                                                        "PlacementGenerate",
                                                                        "PlacementScore",
                                                                        "PlacementFeasible",
                                                                        "PodGroupPostFilter"};
  return kNames[indexOf(p)];
}

// The interface serving each point: ExtensionPointInterface<ExtensionPoint::kFilter> is
// FilterPlugin.
namespace detail {
template <ExtensionPoint P>
struct PointInterface;
template <>
struct PointInterface<ExtensionPoint::kPreEnqueue> {
  using type = PreEnqueuePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kQueueSort> {
  using type = QueueSortPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPreFilter> {
  using type = PreFilterPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kFilter> {
  using type = FilterPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPostFilter> {
  using type = PostFilterPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPreScore> {
  using type = PreScorePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kScore> {
  using type = ScorePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kReserve> {
  using type = ReservePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPermit> {
  using type = PermitPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPreBind> {
  using type = PreBindPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kBind> {
  using type = BindPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPostBind> {
  using type = PostBindPlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPlacementGenerate> {
  using type = PlacementGeneratePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPlacementScore> {
  using type = PlacementScorePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPlacementFeasible> {
  using type = PlacementFeasiblePlugin;
};
template <>
struct PointInterface<ExtensionPoint::kPodGroupPostFilter> {
  using type = PodGroupPostFilterPlugin;
};
}  // namespace detail

template <ExtensionPoint P>
using ExtensionPointInterface = typename detail::PointInterface<P>::type;

// A set of extension points.
class ExtensionPoints {
 public:
  constexpr ExtensionPoints() = default;
  [[nodiscard]] constexpr bool has(ExtensionPoint p) const {
    return (bits_ >> indexOf(p) & 1U) != 0;
  }
  constexpr ExtensionPoints& add(ExtensionPoint p) {
    bits_ = static_cast<uint16_t>(bits_ | (1U << indexOf(p)));
    return *this;
  }
  [[nodiscard]] constexpr bool empty() const { return bits_ == 0; }
  constexpr bool operator==(const ExtensionPoints&) const = default;

 private:
  uint16_t bits_ = 0;
};

// The points plugin class T serves, from its type alone: the registry knows them without
// building the plugin, so that configuration is validated without constructing anything.
template <typename T>
[[nodiscard]] constexpr ExtensionPoints extensionPointsOf() {
  ExtensionPoints out;
  [&]<size_t... I>(std::index_sequence<I...>) {
    ((std::is_base_of_v<ExtensionPointInterface<kAllExtensionPoints[I]>, T>
          ? void(out.add(kAllExtensionPoints[I]))
          : void()),
     ...);
  }
  (std::make_index_sequence<kNumExtensionPoints>{});
  return out;
}

// The same for a built plugin (dynamic_cast per point).
[[nodiscard]] ExtensionPoints extensionPointsOf(const Plugin& plugin);

}  // namespace ksched
