// LabelPreference (Score): an out-of-tree plugin built against the installed ksched SDK.
//   Score: `score` for a node whose label `key` has one of `values`, 0 otherwise. No
//          normalization (the scores are already in [0, 100]).
//   Args:  key     a label name (required)
//          values  the preferred values (required, at least one)
//          score   1..100 (default 100)
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include <ksched/handle.h>
#include <ksched/plugin.h>
#include <ksched/registry.h>
#include <nlohmann/json_fwd.hpp>

namespace example {

struct LabelPreferenceArgs {
  std::string key;
  std::set<std::string, std::less<>> values;
  int64_t score = ksched::kMaxNodeScore;
};

// Decodes and validates; throws ksched::PluginArgsError("<field>: <what is wrong>").
[[nodiscard]] LabelPreferenceArgs decodeArgs(const nlohmann::json& args);

class LabelPreference final : public ksched::ScorePlugin {
 public:
  static constexpr std::string_view kName = "LabelPreference";

  explicit LabelPreference(LabelPreferenceArgs args) : args_(std::move(args)) {}

  [[nodiscard]] std::string_view name() const override { return kName; }
  // Reads only the node's labels: thread-safe, as Score must be.
  [[nodiscard]] ksched::Status score(const ksched::CycleState& state, const ksched::api::Pod& pod,
                                     const ksched::NodeInfo& nodeInfo,
                                     int64_t& score) const override;

 private:
  const LabelPreferenceArgs args_;
};

// The factory registered under kName: `decode` checks a profile's args while the configuration
// is validated (building nothing); `create` builds the plugin once per profile that enables it.
[[nodiscard]] ksched::PluginFactory labelPreferenceFactory();

}  // namespace example
