#include <algorithm>
#include <string>
#include <vector>

#include <ksched/helper/volume_conflict.h>

namespace ksched::plugins::helper {
namespace {

bool haveOverlap(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  return std::any_of(a.begin(), a.end(), [&](const std::string& x) {
    return std::find(b.begin(), b.end(), x) != b.end();
  });
}

}  // namespace

bool volumeConflicts(const api::Volume& volume, const api::Pod& existing) noexcept {
  for (const auto& ev : existing.spec.volumes) {
    if (volume.gcePersistentDisk && ev.gcePersistentDisk) {
      const auto& d = *volume.gcePersistentDisk;
      const auto& e = *ev.gcePersistentDisk;
      if (d.pdName == e.pdName && !(d.readOnly && e.readOnly)) return true;
    }
    if (volume.awsElasticBlockStore && ev.awsElasticBlockStore &&
        volume.awsElasticBlockStore->volumeID == ev.awsElasticBlockStore->volumeID) {
      return true;
    }
    if (volume.iscsi && ev.iscsi) {
      if (volume.iscsi->iqn == ev.iscsi->iqn && !(volume.iscsi->readOnly && ev.iscsi->readOnly)) {
        return true;
      }
    }
    if (volume.rbd && ev.rbd) {
      const auto& r = *volume.rbd;
      const auto& e = *ev.rbd;
      if (haveOverlap(r.monitors, e.monitors) && r.pool == e.pool && r.image == e.image &&
          !(r.readOnly && e.readOnly)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace ksched::plugins::helper
