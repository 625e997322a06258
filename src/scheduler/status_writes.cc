#include "scheduler/status_writes.h"

#include <utility>

namespace ksched::scheduler {

StatusWrites::StatusWrites(std::function<bool(std::function<void()>)> run,
                           std::function<void(const Write&)> send)
    : run_(std::move(run)), send_(std::move(send)) {}

bool StatusWrites::submit(const std::string& uid, Write w, bool inInformer) {
  {
    std::lock_guard lock(mu_);
    if (auto it = slots_.find(uid); it != slots_.end()) {
      Slot& slot = it->second;
      Write* waiting = slot.next ? &*slot.next : nullptr;
      // A waiting write that changes the nomination or the annotation keeps that change when
      // this one leaves them as they are.
      if (waiting != nullptr) {
        if (!w.nominatedNode) w.nominatedNode = waiting->nominatedNode;
        if (w.diagnosis.empty()) w.diagnosis = waiting->diagnosis;
      }
      if (w.addsNothingTo(waiting != nullptr ? *waiting : *slot.sending)) return false;
      slot.next = std::move(w);
      return true;  // the pod's task sends it after the one in flight
    }
    if (inInformer) return false;
    slots_[uid].next = std::move(w);
  }
  if (!run_([this, uid] { drainPod(uid); })) {
    std::lock_guard lock(mu_);
    slots_.erase(uid);  // shutting down: not sent
    return false;
  }
  return true;
}

void StatusWrites::drainPod(const std::string& uid) {
  while (true) {
    const Write* w = nullptr;
    {
      std::lock_guard lock(mu_);
      Slot& slot = slots_.at(uid);
      if (!slot.next) {
        slots_.erase(uid);
        return;
      }
      slot.sending = std::move(slot.next);
      slot.next.reset();
      w = &*slot.sending;  // stable: only this task replaces `sending`
    }
    send_(*w);
  }
}

size_t StatusWrites::pods() const {
  std::lock_guard lock(mu_);
  return slots_.size();
}

}  // namespace ksched::scheduler
