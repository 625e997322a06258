#include <nlohmann/json.hpp>

#include <ksched/api/decode.h>
#include <ksched/api/lease.h>

namespace ksched::api {

void from_json(const nlohmann::json& j, LeaseSpec& s) {
  readField(j, "holderIdentity", s.holderIdentity);
  readField(j, "leaseDurationSeconds", s.leaseDurationSeconds);
  readField(j, "acquireTime", s.acquireTime);
  readField(j, "renewTime", s.renewTime);
  readField(j, "leaseTransitions", s.leaseTransitions);
}

void from_json(const nlohmann::json& j, Lease& l) {
  readField(j, "metadata", l.metadata);
  readField(j, "spec", l.spec);
}

void to_json(nlohmann::json& j, const LeaseSpec& s) {
  j = nlohmann::json::object();
  if (s.holderIdentity) j["holderIdentity"] = *s.holderIdentity;
  if (s.leaseDurationSeconds) j["leaseDurationSeconds"] = *s.leaseDurationSeconds;
  if (s.acquireTime) j["acquireTime"] = *s.acquireTime;
  if (s.renewTime) j["renewTime"] = *s.renewTime;
  if (s.leaseTransitions) j["leaseTransitions"] = *s.leaseTransitions;
}

void to_json(nlohmann::json& j, const Lease& l) {
  j = {{"apiVersion", kLeaseAPIVersion},
       {"kind", "Lease"},
       {"metadata", l.metadata},
       {"spec", l.spec}};
}

}  // namespace ksched::api
