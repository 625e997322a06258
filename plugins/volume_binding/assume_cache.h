// AssumeCache: the PVs and PVCs VolumeBinding has decided on but the informers have not yet
// seen (upstream scheduler_assume_cache.go). Reserve assumes the PV with its new claimRef, or
// the PVC with its selected-node annotation, so that the next scheduling cycles do not hand
// the same PV to another claim; Unreserve (or a failed PreBind) restores the informer's
// version.
//
// An assumed object shadows the informer's object only while the informer still holds the
// version it was derived from (same resourceVersion): once the informer sees a newer version
// (our own update, or anyone else's), or the object is deleted, the informer wins.
//
// Thread-safe: Reserve runs on the scheduling thread, Unreserve and PreBind on binder threads.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include <ksched/listers.h>

#include "plugins/volume_binding/pv_matching.h"

namespace ksched::plugins::volume_binding {

class AssumeCache {
 public:
  // The PV as the scheduler currently sees it (assumed or informer); nullptr when unknown.
  [[nodiscard]] PVPtr getPV(const ClusterListers& listers, std::string_view name) const;
  // The PVs of one storage class (persistentVolumeClass), assumed versions substituted.
  [[nodiscard]] std::vector<PVPtr> listPVs(const ClusterListers& listers,
                                           std::string_view className) const;
  // The PVC as the scheduler currently sees it; nullptr when unknown.
  [[nodiscard]] PVCPtr getPVC(const ClusterListers& listers, std::string_view ns,
                              std::string_view name) const;

  void assumePV(PVPtr pv);
  void restorePV(std::string_view name);
  void assumePVC(PVCPtr pvc);
  void restorePVC(std::string_view ns, std::string_view name);

  // Number of assumed objects still held (tests).
  [[nodiscard]] size_t sizeForTest() const;

 private:
  mutable std::mutex mu_;
  // Guarded by mu_: name -> assumed PV; "namespace/name" -> assumed PVC.
  std::map<std::string, PVPtr, std::less<>> pvs_;
  std::map<std::string, PVCPtr, std::less<>> pvcs_;
};

}  // namespace ksched::plugins::volume_binding
