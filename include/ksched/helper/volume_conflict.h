// Whether a pod's volume conflicts with the volumes of a pod already on the node (upstream
// isVolumeConflict): the same GCE PD unless both mount it read-only; the same AWS EBS volume ID;
// an RBD image with an overlapping monitor, the same pool and image unless both read-only; the
// same ISCSI IQN unless both read-only. VolumeRestrictions' Filter, and explain's detail of it.
#pragma once

#include <ksched/api/pod.h>

namespace ksched::plugins::helper {

// True when `volume` conflicts with one of `existing`'s volumes. Thread-safe, allocation-free.
[[nodiscard]] bool volumeConflicts(const api::Volume& volume, const api::Pod& existing) noexcept;

}  // namespace ksched::plugins::helper
