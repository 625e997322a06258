// The one comparison of two pods (samePod): the object model's defaulted operator==, less the
// exceptions below. Each exception is listed once, here, with the reason it is one.
#include <algorithm>

#include <ksched/api/pod.h>

namespace ksched::api {
namespace {

// A volume that some plugin reads: one of the sources the decoder keeps.
bool hasSource(const Volume& v) {
  return v.persistentVolumeClaim || v.gcePersistentDisk || v.awsElasticBlockStore || v.azureDisk ||
         v.cinder || v.rbd || v.iscsi || v.ephemeral || v.csi;
}

// The metadata as both purposes compare it.
ObjectMeta comparableMeta(const ObjectMeta& m) {
  ObjectMeta out = m;
  // Every write of the pod changes its resourceVersion, and generation counts spec writes;
  // neither says anything the spec does not.
  out.resourceVersion.clear();
  out.generation = 0;
  return out;
}

// A generic ephemeral volume: its claim is named after the pod ("<pod>-<volume>"), so no other
// pod asks for the same claim.
bool hasEphemeralVolume(const Pod& pod) {
  return std::ranges::any_of(pod.spec.volumes, [](const Volume& v) { return v.ephemeral; });
}

// `pod` as kSchedulingInputs compares it, assigned over `p` (a Pod that only this function
// writes, so that its strings, vectors and maps are reused from one call to the next instead
// of allocated again); false for a pod that is like no other. A function of the pod's
// namespace, labels, spec and status only.
bool comparableInto(const Pod& pod, Pod& p) {
  if (hasEphemeralVolume(pod)) return false;
  // The metadata but the namespace and labels: who the pod is (name, uid, owners,
  // annotations, timestamps), not what it asks for; no Filter or Score plugin reads them.
  // (Never assigned here, p's other metadata fields stay empty.)
  p.metadata.namespace_ = pod.metadata.namespace_;
  p.metadata.labels = pod.metadata.labels;
  p.spec = pod.spec;
  // terminationGracePeriodSeconds: read only of a preemption victim, never of the pod placed.
  p.spec.terminationGracePeriodSeconds.reset();
  // Volumes without a source the decoder keeps (projected, secret, configMap, emptyDir...): no
  // plugin reads them. The names of the others and of every mount: admission makes them unique
  // per pod (kube-api-access-<random>), and plugins read a volume by its source, a mount by
  // its path and options.
  std::erase_if(p.spec.volumes, [](const Volume& v) { return !hasSource(v); });
  for (Volume& v : p.spec.volumes) v.name.clear();
  for (auto* containers :
       {&p.spec.containers, &p.spec.initContainers, &p.spec.ephemeralContainers}) {
    for (Container& c : *containers) {
      for (VolumeMount& m : c.volumeMounts) m.name.clear();
    }
  }
  p.status = pod.status;
  // The claims generated from templates: named after the pod by the resourceclaim controller,
  // each pod's its own. Pods of the same template ask for the same devices (DynamicResources
  // signs such a pod only while its claims are unallocated).
  for (PodResourceClaimStatus& s : p.status.resourceClaimStatuses) {
    const bool fromTemplate = std::ranges::any_of(pod.spec.resourceClaims, [&](const auto& c) {
      return c.name == s.name && c.resourceClaimTemplateName.has_value();
    });
    if (fromTemplate) s.resourceClaimName.reset();
  }
  // The phase, startTime and the pre-1.33 resize status: read by no scheduling decision.
  p.status.phase.clear();
  p.status.startTime.reset();
  p.status.resize.clear();
  // A condition's reason, message and time: the words of whoever wrote it (the scheduler's own
  // PodScheduled message changes with each failed attempt); decisions read its type and status.
  for (PodCondition& c : p.status.conditions) {
    c.reason.clear();
    c.message.clear();
    c.lastTransitionTime.clear();
  }
  return true;
}

// Whether a and b differ in a field that comparableInto() copies unchanged: the namespace, the
// labels, the containers' images and resources.
bool differInKeptFields(const Pod& a, const Pod& b) {
  if (a.metadata.namespace_ != b.metadata.namespace_ || a.metadata.labels != b.metadata.labels) {
    return true;
  }
  for (auto list : {&PodSpec::containers, &PodSpec::initContainers}) {
    const std::vector<Container>& x = a.spec.*list;
    const std::vector<Container>& y = b.spec.*list;
    if (x.size() != y.size()) return true;
    for (size_t i = 0; i < x.size(); ++i) {
      if (x[i].image != y[i].image || x[i].resources != y[i].resources) return true;
    }
  }
  return false;
}

}  // namespace

bool samePod(const Pod& a, const Pod& b, PodComparison purpose) {
  if (purpose == PodComparison::kUpdate) {
    // The status, whole: the scheduler writes it itself (PodScheduled, nominatedNodeName), and
    // counting its own writes would retry every rejected pod as soon as its failure is
    // reported. The in-place resize status of a node's pods is judged apart
    // (queue::podResizeStatusChanged). Asked on every update of a pending pod: the spec is
    // compared in place, only the metadata is copied.
    return a.spec == b.spec && comparableMeta(a.metadata) == comparableMeta(b.metadata);
  }
  // Before copying both (batching asks it of every pod, the result memo of every pod it
  // serves): fields comparableInto() keeps as they are. Pods that differ mostly differ here.
  if (differInKeptFields(a, b)) return false;
  // Equal as they are: so are their comparableInto() copies, which are made of these fields
  // alone.
  if (a.spec == b.spec && a.status == b.status) return !hasEphemeralVolume(a);
  // The copies, into this thread's two scratch pods: after the first call, copying a pod of
  // the same shape as the last one allocates little (assignment keeps buffers).
  thread_local Pod x;
  thread_local Pod y;
  return comparableInto(a, x) && comparableInto(b, y) && x.metadata == y.metadata &&
         x.spec == y.spec && x.status == y.status;
}

}  // namespace ksched::api
