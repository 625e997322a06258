// The plugins of one profile per extension point, typed: PluginLists::at<ExtensionPoint::kFilter>()
// is a std::vector<FilterPlugin*>. One list per point of the SDK's table
// (include/ksched/extension_point.h), filled by one cast per point.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <ksched/extension_point.h>

namespace ksched::framework {

namespace detail {
template <typename Seq>
struct ListsOf;
template <size_t... I>
struct ListsOf<std::index_sequence<I...>> {
  using type = std::tuple<std::vector<ExtensionPointInterface<kAllExtensionPoints[I]>*>...>;
};
}  // namespace detail

class PluginLists {
 public:
  template <ExtensionPoint P>
  [[nodiscard]] auto& at() {
    return std::get<indexOf(P)>(lists_);
  }
  template <ExtensionPoint P>
  [[nodiscard]] const auto& at() const {
    return std::get<indexOf(P)>(lists_);
  }

  // Appends `plugin` to the list of `point` (Score: with `weight`); false when the plugin does
  // not implement the point's interface.
  bool add(ExtensionPoint point, Plugin* plugin, int64_t weight = 0) {
    constexpr auto kAdders = []<size_t... I>(std::index_sequence<I...>) {
      return std::array<bool (*)(PluginLists&, Plugin*), kNumExtensionPoints>{
          [](PluginLists& self, Plugin* p) {
            constexpr ExtensionPoint kPoint = kAllExtensionPoints[I];
            auto* typed = dynamic_cast<ExtensionPointInterface<kPoint>*>(p);
            if (typed == nullptr) return false;
            self.at<kPoint>().push_back(typed);
            return true;
          }...};
    }
    (std::make_index_sequence<kNumExtensionPoints>{});
    if (!kAdders[indexOf(point)](*this, plugin)) return false;
    if (point == ExtensionPoint::kScore) scoreWeights_.push_back(weight);
    return true;
  }

  // The plugins of `point`, untyped, in order.
  [[nodiscard]] std::vector<const Plugin*> plugins(ExtensionPoint point) const {
    std::vector<const Plugin*> out;
    [&]<size_t... I>(std::index_sequence<I...>) {
      (((indexOf(point) == I) ? out.assign(std::get<I>(lists_).begin(), std::get<I>(lists_).end())
                              : void()),
       ...);
    }
    (std::make_index_sequence<kNumExtensionPoints>{});
    return out;
  }

  // Score weights, parallel to at<ExtensionPoint::kScore>().
  [[nodiscard]] const std::vector<int64_t>& scoreWeights() const { return scoreWeights_; }

 private:
  typename detail::ListsOf<std::make_index_sequence<kNumExtensionPoints>>::type lists_;
  std::vector<int64_t> scoreWeights_;
};

}  // namespace ksched::framework
