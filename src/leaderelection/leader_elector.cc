#include "leaderelection/leader_elector.h"

#include <spdlog/spdlog.h>

#include <nlohmann/json.hpp>
#include <random>

#include "client/rest_client.h"

namespace ksched::leaderelection {

namespace {

bool sleepFor(const std::stop_token& stop, Duration d) { return client::sleepFor(d, stop); }

// wait.Jitter: d + random[0, factor*d).
Duration jitter(Duration d, double factor) {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_real_distribution<double> u(0.0, factor);
  return d + std::chrono::duration_cast<Duration>(d * u(rng));
}

int32_t wholeSeconds(Duration d) {
  return static_cast<int32_t>(std::chrono::duration_cast<std::chrono::seconds>(d).count());
}

std::string leasePath(const std::string& ns) {
  return "/apis/coordination.k8s.io/v1/namespaces/" + ns + "/leases";
}

}  // namespace

// ---- ApiLeaseClient ----

ApiLeaseClient::ApiLeaseClient(client::RestClient& client, std::string ns, std::string name)
    : client_(client), ns_(std::move(ns)), name_(std::move(name)) {}

std::optional<api::Lease> ApiLeaseClient::get() {
  try {
    return client_.get(leasePath(ns_) + "/" + name_).get<api::Lease>();
  } catch (const client::ApiError& e) {
    if (e.isNotFound()) return std::nullopt;
    throw;
  }
}

api::Lease ApiLeaseClient::create(const api::Lease& lease) {
  return client_.post(leasePath(ns_), nlohmann::json(lease)).get<api::Lease>();
}

api::Lease ApiLeaseClient::update(const api::Lease& lease) {
  return client_.put(leasePath(ns_) + "/" + name_, nlohmann::json(lease)).get<api::Lease>();
}

// ---- LeaderElector ----

std::string validate(const Config& c) {
  if (c.leaseDuration <= c.renewDeadline) return "leaseDuration must be greater than renewDeadline";
  if (c.renewDeadline <=
      Duration(static_cast<int64_t>(kJitterFactor * static_cast<double>(c.retryPeriod.count())))) {
    return "renewDeadline must be greater than retryPeriod*JitterFactor";
  }
  if (c.leaseDuration < std::chrono::seconds(1)) return "leaseDuration must be greater than zero";
  if (c.renewDeadline < std::chrono::seconds(1)) return "renewDeadline must be greater than zero";
  if (c.retryPeriod < std::chrono::seconds(1)) return "retryPeriod must be greater than zero";
  if (c.identity.empty()) return "lock identity is empty";
  return "";
}

LeaderElector::LeaderElector(Config config, LeaseClient& lock, Clock clock)
    : config_(std::move(config)),
      lock_(lock),
      clock_(clock ? std::move(clock) : Clock([] { return std::chrono::system_clock::now(); })) {}

api::LeaseSpec LeaderElector::newRecord(api::TimePoint now) const {
  api::LeaseSpec r;
  r.holderIdentity = config_.identity;
  r.leaseDurationSeconds = wholeSeconds(config_.leaseDuration);
  r.acquireTime = api::formatRFC3339Micro(now);
  r.renewTime = r.acquireTime;
  r.leaseTransitions = 0;
  return r;
}

bool LeaderElector::isLeaderLocked() const {
  return observed_.holderIdentity.value_or("") == config_.identity;
}

bool LeaderElector::leaseValidLocked(api::TimePoint now) const {
  return observedTime_ + std::chrono::seconds(observed_.leaseDurationSeconds.value_or(0)) > now;
}

void LeaderElector::setObservedLocked(const api::Lease& lease, api::TimePoint now) {
  lease_ = lease;
  observed_ = lease.spec;
  observedTime_ = now;
}

bool LeaderElector::tryAcquireOrRenew() {
  const api::TimePoint now = clock_();
  api::LeaseSpec record = newRecord(now);
  std::unique_lock lock(mu_);

  // Fast path: renew what we wrote last without reading it first.
  if (isLeaderLocked() && leaseValidLocked(now) && lease_) {
    record.acquireTime = observed_.acquireTime;
    record.leaseTransitions = observed_.leaseTransitions;
    api::Lease next = *lease_;
    next.spec = record;
    lock.unlock();
    try {
      api::Lease written = lock_.update(next);
      lock.lock();
      setObservedLocked(written, clock_());
      return true;
    } catch (const std::exception& e) {
      spdlog::debug("leaderelection: failed to update lease {} optimistically: {}",
                    lock_.describe(), e.what());
    }
    lock.lock();
  }

  // 1. Obtain or create the Lease.
  lock.unlock();
  std::optional<api::Lease> current;
  try {
    current = lock_.get();
  } catch (const std::exception& e) {
    spdlog::error("leaderelection: error retrieving resource lock {}: {}", lock_.describe(),
                  e.what());
    return false;
  }
  if (!current) {
    api::Lease fresh;
    fresh.metadata.name = config_.name;
    fresh.metadata.namespace_ = config_.ns;
    fresh.spec = record;
    try {
      api::Lease written = lock_.create(fresh);
      lock.lock();
      setObservedLocked(written, clock_());
      return true;
    } catch (const std::exception& e) {
      spdlog::error("leaderelection: error initially creating lease lock {}: {}", lock_.describe(),
                    e.what());
      return false;
    }
  }

  // 2. Record obtained: note a change, then check holder and expiry.
  lock.lock();
  if (!lease_ || current->spec != observed_) {
    setObservedLocked(*current, now);
  } else {
    lease_ = *current;  // same record, keep the newest resourceVersion
  }
  const api::LeaseSpec old = current->spec;
  if (!old.holderIdentity.value_or("").empty() && leaseValidLocked(now) && !isLeaderLocked()) {
    spdlog::debug("leaderelection: lock {} is held by {} and has not yet expired", lock_.describe(),
                  *old.holderIdentity);
    return false;
  }

  // 3. Take or renew it.
  if (isLeaderLocked()) {
    record.acquireTime = old.acquireTime;
    record.leaseTransitions = old.leaseTransitions.value_or(0);
  } else {
    record.leaseTransitions = old.leaseTransitions.value_or(0) + 1;
  }
  api::Lease next = *current;
  next.spec = record;
  lock.unlock();
  try {
    api::Lease written = lock_.update(next);
    lock.lock();
    setObservedLocked(written, clock_());
    return true;
  } catch (const std::exception& e) {
    spdlog::error("leaderelection: failed to update lock {}: {}", lock_.describe(), e.what());
    return false;
  }
}

bool LeaderElector::release() {
  std::unique_lock lock(mu_);
  if (!isLeaderLocked() || !lease_) return true;
  const api::TimePoint now = clock_();
  api::Lease next = *lease_;
  next.spec.holderIdentity = "";
  next.spec.leaseDurationSeconds = 1;
  next.spec.acquireTime = api::formatRFC3339Micro(now);
  next.spec.renewTime = next.spec.acquireTime;
  next.spec.leaseTransitions = observed_.leaseTransitions.value_or(0);
  lock.unlock();
  try {
    api::Lease written = lock_.update(next);
    lock.lock();
    setObservedLocked(written, clock_());
    return true;
  } catch (const std::exception& e) {
    spdlog::error("leaderelection: failed to release lock {}: {}", lock_.describe(), e.what());
    return false;
  }
}

bool LeaderElector::isLeader() const {
  std::lock_guard lock(mu_);
  return isLeaderLocked();
}

std::string LeaderElector::leader() const {
  std::lock_guard lock(mu_);
  return observed_.holderIdentity.value_or("");
}

std::string LeaderElector::check(Duration maxTolerableExpiredLease) const {
  std::lock_guard lock(mu_);
  if (!isLeaderLocked()) return "";
  if (clock_() - observedTime_ > config_.leaseDuration + maxTolerableExpiredLease) {
    return "failed election to renew leadership on lease " + config_.name;
  }
  return "";
}

void LeaderElector::reportTransition() {
  const std::string now = leader();
  if (now == reportedLeader_ || now.empty()) return;
  reportedLeader_ = now;
  if (config_.onNewLeader) config_.onNewLeader(now);
}

bool LeaderElector::acquire(std::stop_token stop) {
  spdlog::info("leaderelection: attempting to acquire leader lease {}...", lock_.describe());
  while (!stop.stop_requested()) {
    const bool ok = tryAcquireOrRenew();
    reportTransition();
    if (ok) {
      spdlog::info("leaderelection: successfully acquired lease {}", lock_.describe());
      return true;
    }
    if (!sleepFor(stop, jitter(config_.retryPeriod, kJitterFactor))) break;
  }
  return false;
}

bool LeaderElector::renew(std::stop_token stop) {
  while (!stop.stop_requested()) {
    const auto deadline = std::chrono::steady_clock::now() + config_.renewDeadline;
    bool renewed = false;
    while (!stop.stop_requested()) {
      if (tryAcquireOrRenew()) {
        renewed = true;
        break;
      }
      const auto left = deadline - std::chrono::steady_clock::now();
      if (left <= Duration::zero()) break;
      if (!sleepFor(stop, std::min<Duration>(config_.retryPeriod, left))) return true;
    }
    reportTransition();
    if (stop.stop_requested()) return true;
    if (!renewed) {
      spdlog::error("leaderelection: failed to renew lease {}: timed out waiting for the condition",
                    lock_.describe());
      return false;
    }
    if (!sleepFor(stop, config_.retryPeriod)) return true;
  }
  return true;
}

bool LeaderElector::run(std::stop_token stop) {
  if (!acquire(stop)) return true;
  if (config_.onStartedLeading) config_.onStartedLeading();
  const bool stopped = renew(stop);
  if (stopped && config_.releaseOnCancel) release();
  if (config_.onStoppedLeading) config_.onStoppedLeading();
  return stopped;
}

}  // namespace ksched::leaderelection
