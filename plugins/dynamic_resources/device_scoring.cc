// Device scoring in DynamicResources, a ksched extension (off by default): its arguments, the
// node's score from the quality of the allocation Filter found there, and explain's account of
// it. Which devices the allocator prefers is allocator_scoring.cc.
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/api/features.h>
#include <ksched/helper/args_json.h>
#include <ksched/helper/field_error.h>

#include "plugins/dynamic_resources/dynamic_resources_cycle.h"

namespace ksched::plugins {

namespace {

// DNS-1123 subdomain of at most 63 characters (a device attribute's domain).
bool isAttributeDomain(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  char prev = '.';
  for (const char c : s) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    if (!alnum && c != '-' && c != '.') return false;
    // A label starts and ends with an alphanumeric.
    if (c == '.' && prev == '-') return false;
    if ((c == '-' || c == '.') && prev == '.') return false;
    prev = c;
  }
  return prev != '-' && prev != '.';
}

// C identifier of at most 32 characters (a device attribute's name).
bool isAttributeName(std::string_view s) {
  if (s.empty() || s.size() > 32) return false;
  if (std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  for (const char c : s) {
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_') return false;
  }
  return true;
}

// The largest device score (Result::Quality::score).
constexpr int64_t kMaxDeviceScore = 100;

}  // namespace

namespace dra {

DeviceScoring decodeDeviceScoring(const nlohmann::json& j, const features::Gates& gates) {
  const std::string path = "deviceScoring";
  DeviceScoring out;
  helper::expectObject(j, path, {"topologyAttribute", "packPartitions"});
  std::vector<helper::FieldError> errs;
  const std::string attributePath = path + ".topologyAttribute";
  if (helper::readString(j, "topologyAttribute", path, out.topologyAttribute)) {
    const std::string& a = out.topologyAttribute;
    const size_t slash = a.find('/');
    if (slash == std::string::npos) {
      errs.push_back(helper::invalid(attributePath, a,
                                     "must be a fully qualified attribute name with a domain (e.g. "
                                     "resource.kubernetes.io/pcieRoot)"));
    } else if (!isAttributeDomain(std::string_view(a).substr(0, slash))) {
      errs.push_back(helper::invalid(attributePath, a,
                                     "the domain must be a lowercase DNS subdomain of at most 63 "
                                     "characters"));
    } else if (!isAttributeName(std::string_view(a).substr(slash + 1))) {
      errs.push_back(helper::invalid(
          attributePath, a,
          "the name must be a C identifier (letters, digits, '_') of at most 32 characters"));
    }
  }
  if (const auto pack = helper::Decoder::throwing().boolean(j, "packPartitions", path)) {
    out.packPartitions = *pack;
    if (*pack && !gates.enabled(features::Feature::kDRAPartitionableDevices)) {
      errs.push_back({path + ".packPartitions",
                      "Forbidden: DRAPartitionableDevices feature gate is disabled"});
    }
  }
  helper::throwIfAny(errs);
  return out;
}

int64_t combinedScore(int64_t listScore, const Result::Quality* quality) {
  return listScore * (kMaxDeviceScore + 1) +
         (quality != nullptr ? quality->score : kMaxDeviceScore);
}

}  // namespace dra

std::string DynamicResources::explainScore(const CycleState& state, const api::Pod& /*pod*/,
                                           const NodeInfo& nodeInfo) const {
  if (!scoring_.enabled()) return "";
  const Cycle* cycle = state.read(kCycleKey);
  if (cycle == nullptr) return "";
  Cycle::Inner& in = *cycle->in;
  std::lock_guard lock(in.mu);
  auto it = in.nodeAllocations.find(nodeInfo.node()->metadata.name);
  if (it == in.nodeAllocations.end() || !it->second.quality) return "";
  const dra::Result::Quality& q = *it->second.quality;
  return "device score " + std::to_string(q.score) + ": " + q.reason;
}

}  // namespace ksched::plugins
