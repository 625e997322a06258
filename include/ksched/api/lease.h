// coordination.k8s.io/v1 Lease, read and written for leader election.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>

#include <ksched/api/meta.h>

namespace ksched::api {

inline constexpr std::string_view kLeaseAPIVersion = "coordination.k8s.io/v1";

// Times are metav1.MicroTime strings (formatRFC3339Micro in api/rfc3339.h).
struct LeaseSpec {
  std::optional<std::string> holderIdentity;
  std::optional<int32_t> leaseDurationSeconds;
  std::optional<std::string> acquireTime;
  std::optional<std::string> renewTime;
  std::optional<int32_t> leaseTransitions;

  friend bool operator==(const LeaseSpec&, const LeaseSpec&) = default;
};

struct Lease {
  ObjectMeta metadata;
  LeaseSpec spec;
};

void from_json(const nlohmann::json& j, LeaseSpec& s);
void from_json(const nlohmann::json& j, Lease& l);
// Unset fields are omitted.
void to_json(nlohmann::json& j, const LeaseSpec& s);
// A complete object for POST/PUT: apiVersion, kind, metadata (name, namespace and, for an
// update, resourceVersion) and spec.
void to_json(nlohmann::json& j, const Lease& l);

}  // namespace ksched::api
