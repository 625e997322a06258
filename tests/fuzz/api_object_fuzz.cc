// Every API object kind ksched decodes from the apiserver's JSON. The first byte picks the
// kind (a letter or digit below, any other byte one by its value), the rest is the object as a LIST
// page item or watch event carries it: parsed as the client parses them (client::parseObjectJson,
// managedFields dropped), then decoded as the informers do (api::decode<T>, whose DecodeError
// they log and skip), a PodGroup as Coscheduling does (DecodeError), a Lease as leader
// election does (json::get<api::Lease>, any std::exception), the Workload API's kinds
// (scheduling.k8s.io) as served and as LIST items without apiVersion (DecodeError). What was
// decoded is then used as the scheduler uses it (resource sums, a node's preferAvoidPods
// annotation, device taints against tolerations, a group's conditions) and serialized where
// ksched writes it out (extender arguments, the Lease it writes back, metadata, a claim's
// allocation and a group's conditions, which must decode back to themselves).
#include <string_view>

#include <ksched/api/decode.h>
#include <ksched/api/event.h>
#include <ksched/api/lease.h>
#include <ksched/api/node.h>
#include <ksched/api/pod.h>
#include <ksched/api/pod_group.h>
#include <ksched/api/pod_resources.h>
#include <ksched/api/policy.h>
#include <ksched/api/resource.h>
#include <ksched/api/resources.h>
#include <ksched/api/storage.h>
#include <ksched/api/workloads.h>

#include "client/object_json.h"
#include "extender/encode.h"
#include "plugins/coscheduling/podgroup.h"
#include "plugins/node_prefer_avoid_pods/node_prefer_avoid_pods.h"
#include "scheduler/object_informer.h"
#include "tests/fuzz/fuzz_util.h"

namespace {

using namespace ksched;
using nlohmann::json;

// What an informer does with a decoded object: its metadata keys the store.
void useMeta(const api::ObjectMeta& m) {
  (void)m.key();
  fuzz::dump(json(m));
}

// api::decode<T> as Informer<T> calls it; false on the DecodeError it logs and skips.
template <typename T>
bool informerDecode(const json& j, T& out) {
  try {
    out = api::decode<T>(j);
    return true;
  } catch (const api::DecodeError&) {
    return false;
  }
}

template <typename T>
void informerKind(const json& j) {
  T obj;
  if (informerDecode(j, obj)) useMeta(obj.metadata);
}

void pod(const json& j) {
  api::Pod p;
  if (!informerDecode(j, p)) return;
  useMeta(p.metadata);
  const features::Gates gates;
  (void)api::nonZeroRequests(p, gates);
  (void)api::effectiveRequestsResource(p, api::PodResourcesOptions(gates));
  (void)api::nodePodRequests(p, gates);
  (void)api::schedulingRequestsResource(p, gates);
  fuzz::dump(extender::encodePod(p));
}

void node(const json& j) {
  api::Node n;
  if (!informerDecode(j, n)) return;
  useMeta(n.metadata);
  api::Resource allocatable = api::Resource::fromList(n.status.allocatable);
  allocatable.sub(api::Resource::fromList(n.status.capacity));
  (void)allocatable.toList();
  // NodePreferAvoidPods reads this annotation's JSON (and logs what it cannot decode).
  if (auto it = n.metadata.annotations.find(plugins::kPreferAvoidPodsAnnotationKey);
      it != n.metadata.annotations.end()) {
    (void)plugins::NodePreferAvoidPods::avoidedControllers(it->second);
  }
  fuzz::dump(extender::encodeNode(n));
}

void lease(const json& j) {
  api::Lease l;
  try {
    l = j.get<api::Lease>();
  } catch (const std::exception&) {
    return;
  }
  useMeta(l.metadata);
  fuzz::dump(json(l));
}

void podGroup(const json& j) {
  try {
    plugins::coscheduling::PodGroup pg = plugins::coscheduling::decodePodGroup(j);
    useMeta(pg.metadata);
    fuzz::dump(plugins::coscheduling::statusToJson(pg.status));
  } catch (const api::DecodeError&) {
  }
}

// A custom resource (Handle::watchObjects): only its metadata is decoded.
void unstructured(const json& j) {
  UnstructuredObject o;
  if (!informerDecode(j, o)) return;
  useMeta(o.metadata);
  fuzz::dump(o.object);
}

void event(const json& j) {
  api::Event e;
  if (!informerDecode(j, e)) return;
  useMeta(e.metadata);
  fuzz::dump(json(e));
}

// Each toleration against each taint, as the allocator matches them.
void tolerate(const std::vector<api::DeviceTaint>& taints,
              const std::vector<api::DeviceToleration>& tolerations) {
  for (const auto& taint : taints) {
    for (const auto& t : tolerations) (void)t.tolerates(taint);
  }
}

const std::vector<api::DeviceToleration> kTolerations = {
    {"", "Exists", "", "", std::nullopt},
    {"k", "Equal", "v", "NoSchedule", std::nullopt},
    {"k", "Exists", "", "NoExecute", 60},
};
const std::vector<api::DeviceTaint> kTaints = {
    {"k", "v", "NoSchedule", std::nullopt},
    {"k", "", "NoExecute", "2025-01-01T00:00:00Z"},
};

void resourceSlice(const json& j) {
  api::ResourceSlice s;
  if (!informerDecode(j, s)) return;
  useMeta(s.metadata);
  for (const auto& d : s.spec.devices) tolerate(d.taints, kTolerations);
}

// The claim's allocation as ksched writes it must read back as the same allocation.
void resourceClaim(const json& j) {
  api::ResourceClaim c;
  if (!informerDecode(j, c)) return;
  useMeta(c.metadata);
  for (const auto& r : c.spec.requests) {
    if (r.exactly) tolerate(kTaints, r.exactly->tolerations);
    for (const auto& sub : r.firstAvailable) tolerate(kTaints, sub.request.tolerations);
  }
  for (const auto& ref : c.status.reservedFor) fuzz::dump(api::toJson(ref));
  if (!c.status.allocation) return;
  const json written = api::toJson(*c.status.allocation);
  fuzz::dump(written);
  api::ResourceClaim back;
  fuzz::check(informerDecode(json{{"status", {{"allocation", written}}}}, back),
              "a written allocation decodes");
  fuzz::check(back.status.allocation == c.status.allocation,
              "a written allocation decodes to itself");
}

// A group's status conditions as ksched writes them back must read back as themselves.
void groupStatus(const api::PodGroupStatus& s) {
  for (const auto& c : s.conditions) {
    const json written = c;
    fuzz::dump(written);
    fuzz::check(written.get<api::Condition>() == c, "a written condition decodes to itself");
  }
}

// A Workload API kind as served, then as a LIST item (no apiVersion, the collection's version
// standing in): both decode alike.
template <typename T, T (*kDecode)(const json&, std::string_view)>
bool workloadKind(const json& j, T& out) {
  if (!informerDecode(j, out)) return false;
  useMeta(out.metadata);
  if (j.is_object() && j.contains("apiVersion")) {
    json item = j;
    item.erase("apiVersion");
    try {
      const T listed = kDecode(item, out.apiVersion);
      fuzz::check(listed.apiVersion == out.apiVersion, "a LIST item takes the listed version");
    } catch (const api::DecodeError&) {
      fuzz::check(false, "an object that decodes decodes as a LIST item too");
    }
  }
  return true;
}

void schedulingPodGroup(const json& j) {
  api::PodGroup pg;
  if (!workloadKind<api::PodGroup, api::decodePodGroup>(j, pg)) return;
  (void)pg.status.condition(pg.initiallyScheduledType());
  (void)pg.spec.schedulingPolicy.minCount();
  (void)api::groupKey(pg.metadata.namespace_, pg.metadata.name);
  groupStatus(pg.status);
}

void compositePodGroup(const json& j) {
  api::CompositePodGroup cpg;
  if (!workloadKind<api::CompositePodGroup, api::decodeCompositePodGroup>(j, cpg)) return;
  (void)cpg.status.condition(api::kCompositePodGroupInitiallyScheduled);
  groupStatus(cpg.status);
}

void workload(const json& j) {
  api::Workload w;
  (void)workloadKind<api::Workload, api::decodeWorkload>(j, w);
}

using Decoder = void (*)(const json&);

struct Kind {
  char letter;
  Decoder decode;
};

constexpr Kind kKinds[] = {
    {'P', pod},
    {'N', node},
    {'B', informerKind<api::PodDisruptionBudget>},
    {'V', informerKind<api::PersistentVolume>},
    {'C', informerKind<api::PersistentVolumeClaim>},
    {'S', informerKind<api::StorageClass>},
    {'I', informerKind<api::CSINode>},
    {'J', informerKind<api::CSIDriver>},
    {'1', informerKind<api::CSIStorageCapacity>},
    {'M', informerKind<api::Namespace>},
    {'E', informerKind<api::Service>},
    {'R', informerKind<api::ReplicaSet>},
    {'T', informerKind<api::StatefulSet>},
    {'O', informerKind<api::ReplicationController>},
    {'Y', informerKind<api::PriorityClass>},
    {'L', lease},
    {'G', podGroup},
    {'U', unstructured},
    {'W', event},
    {'X', resourceSlice},
    {'D', informerKind<api::DeviceClass>},
    {'K', resourceClaim},
    {'Q', informerKind<api::ResourceClaimTemplate>},
    {'Z', informerKind<api::DeviceTaintRule>},
    {'A', schedulingPodGroup},
    {'H', compositePodGroup},
    {'F', workload},
};

Decoder pick(uint8_t selector) {
  for (const Kind& k : kKinds) {
    if (k.letter == static_cast<char>(selector)) return k.decode;
  }
  return kKinds[selector % std::size(kKinds)].decode;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const fuzz::Split in = fuzz::split(data, size);
  const json j = client::parseObjectJson(in.rest);
  if (j.is_discarded()) return 0;
  pick(in.selector)(j);
  return 0;
}
