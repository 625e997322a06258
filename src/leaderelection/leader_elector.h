// Leader election on a coordination.k8s.io/v1 Lease, with client-go's leaderelection semantics
// (the Lease lock, as kube-scheduler uses it).
//
// One step, tryAcquireOrRenew():
//   - GET the Lease; if it does not exist, CREATE it with us as holder.
//   - Whenever the record read differs from the one last observed, remember it together with the
//     LOCAL time of the observation. Lease times written by other hosts are never compared with
//     our clock: a lease held by someone else is valid while
//     observedTime + record.leaseDurationSeconds > now.
//   - Held by another identity and still valid: wait. Otherwise UPDATE it (carrying the
//     resourceVersion read, so a concurrent writer makes the update fail with 409).
//     leaseTransitions grows by one when the holder changes; acquireTime is kept on renewals.
//   - While we lead and our lease is still valid, the renewal is first tried as an update of the
//     object written last, without a GET.
// run(): acquire every retryPeriod with jitter (factor 1.2) until we lead, call
// onStartedLeading, then renew every retryPeriod; a renewal round that keeps failing for
// renewDeadline loses leadership. On stop, a leader releases the lease (holderIdentity "",
// leaseDurationSeconds 1; client-go's ReleaseOnCancel) so that a follower takes over at once.
//
// Thread-safety: run() on one thread; isLeader(), leader(), check() from any thread.
#pragma once

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>

#include <ksched/api/lease.h>
#include <ksched/api/rfc3339.h>

namespace ksched::client {
class RestClient;
}

namespace ksched::leaderelection {

using Clock = std::function<api::TimePoint()>;
using Duration = std::chrono::nanoseconds;

inline constexpr double kJitterFactor = 1.2;

// The three calls the elector makes on the Lease. Errors are thrown (client::ApiError).
class LeaseClient {
 public:
  virtual ~LeaseClient() = default;
  // nullopt when the Lease does not exist.
  virtual std::optional<api::Lease> get() = 0;
  virtual api::Lease create(const api::Lease& lease) = 0;
  // PUT; the lease carries the resourceVersion it was read at (409 when it changed).
  virtual api::Lease update(const api::Lease& lease) = 0;
  // "<namespace>/<name>", for logs.
  [[nodiscard]] virtual std::string describe() const = 0;
};

// The Lease at /apis/coordination.k8s.io/v1/namespaces/<ns>/leases/<name>.
class ApiLeaseClient final : public LeaseClient {
 public:
  ApiLeaseClient(client::RestClient& client, std::string ns, std::string name);
  std::optional<api::Lease> get() override;
  api::Lease create(const api::Lease& lease) override;
  api::Lease update(const api::Lease& lease) override;
  [[nodiscard]] std::string describe() const override { return ns_ + "/" + name_; }

 private:
  client::RestClient& client_;
  std::string ns_;
  std::string name_;
};

struct Config {
  std::string identity;  // "<hostname>_<uuid>"
  std::string ns = "kube-system";
  std::string name = "kube-scheduler";
  Duration leaseDuration = std::chrono::seconds(15);
  Duration renewDeadline = std::chrono::seconds(10);
  Duration retryPeriod = std::chrono::seconds(2);
  bool releaseOnCancel = true;
  // Called on the run() thread once we lead; must not block.
  std::function<void()> onStartedLeading;
  // Called on the run() thread when run() ends after leading (lost, or stopped).
  std::function<void()> onStoppedLeading;
  // Called when the observed holder changes (also for ourselves).
  std::function<void(const std::string&)> onNewLeader;
};

// Empty when the configuration can be used, else what is wrong (client-go's NewLeaderElector).
[[nodiscard]] std::string validate(const Config& config);

class LeaderElector {
 public:
  // `clock` gives the time written to the Lease and used for every expiry decision.
  LeaderElector(Config config, LeaseClient& lock, Clock clock = nullptr);

  // Blocks: acquires, leads until the lease is lost or `stop` is requested, then releases (when
  // stopped while leading and releaseOnCancel). Returns true when leadership ended because
  // `stop` was requested or we never led, false when the lease was lost.
  bool run(std::stop_token stop);

  // One attempt; true when we hold the lease afterwards.
  bool tryAcquireOrRenew();
  // Gives the lease up if we hold it; true on success or when there was nothing to release.
  bool release();

  [[nodiscard]] bool isLeader() const;
  // The holder last observed ("" when none).
  [[nodiscard]] std::string leader() const;
  // The /livez watchdog (client-go HealthzAdaptor): an error message when we lead but the lease
  // has not been renewed for longer than leaseDuration + maxTolerableExpiredLease; else "".
  [[nodiscard]] std::string check(
      Duration maxTolerableExpiredLease = std::chrono::seconds(20)) const;

  [[nodiscard]] const Config& config() const { return config_; }

 private:
  [[nodiscard]] api::LeaseSpec newRecord(api::TimePoint now) const;
  // Requires mu_.
  [[nodiscard]] bool leaseValidLocked(api::TimePoint now) const;
  [[nodiscard]] bool isLeaderLocked() const;
  void setObservedLocked(const api::Lease& lease, api::TimePoint now);
  bool acquire(std::stop_token stop);
  // Returns false when leadership was lost, true when `stop` was requested.
  bool renew(std::stop_token stop);
  void reportTransition();

  const Config config_;
  LeaseClient& lock_;
  const Clock clock_;

  mutable std::mutex mu_;
  std::optional<api::Lease> lease_;  // the object last read or written (its resourceVersion)
  api::LeaseSpec observed_;          // the record last observed
  api::TimePoint observedTime_{};    // local time of the last change of observed_
  std::string reportedLeader_;       // run() thread only
};

}  // namespace ksched::leaderelection
