// The real control plane the integration suite runs against: deploy/local/cluster.sh, started
// once for the whole test binary on its own ports and state dir (so it never touches a
// developer's cluster), stopped at the end.
//
// Settings: KSCHED_TEST_APISERVER_PORT (default 16443), KSCHED_TEST_ETCD_PORT (default 12379).
#pragma once

#include <memory>
#include <string>

#include "client/config.h"
#include "client/rest_client.h"

namespace ksched::testing {

class TestCluster {
 public:
  static TestCluster& get();

  void up();
  void down();

  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] int apiserverPort() const { return port_; }
  [[nodiscard]] int etcdPort() const { return etcdPort_; }
  [[nodiscard]] std::string kubeconfig(const std::string& who = "admin") const {
    return dir_ + "/" + who + ".kubeconfig";
  }
  // Client config for an identity: admin (token, system:masters), scheduler (client cert,
  // system:kube-scheduler), nobody (client cert, no permissions). High QPS for test setup.
  [[nodiscard]] client::Config config(const std::string& who = "admin") const;
  // A shared high-QPS admin client for arranging test state.
  client::RestClient& admin();

  // Starts kube-controller-manager with the volume controllers (PV binder, ...) once; it stays
  // up until down(). Idempotent.
  void startControllerManager();
  // A second kube-controller-manager with the ReplicaSet and PodDisruptionBudget controllers
  // (cluster.sh start-workload-controllers), for the tests that need pods recreated after an
  // eviction. Every ReplicaSet of the cluster is then reconciled: stop it at the test's end.
  void startWorkloadControllers();
  void stopWorkloadControllers();

  // Runs `cluster.sh <verb>` with this cluster's settings; returns its stdout, throws on failure.
  std::string ctl(const std::string& verb) const;
  // Runs etcdctl against this cluster's etcd.
  std::string etcdctl(const std::string& args) const;

 private:
  TestCluster();
  std::string env() const;

  int port_;
  int etcdPort_;
  std::string dir_;
  bool started_ = false;
  std::unique_ptr<client::RestClient> admin_;
};

// Creates namespace `name` if needed (idempotent).
void ensureNamespace(client::RestClient& c, const std::string& name);
// POSTs `body` to `path`; an object that exists already (409) is fine.
void createOrIgnore(client::RestClient& c, const std::string& path, const nlohmann::json& body);

// Runs a shell command; returns stdout; throws std::runtime_error with output on non-zero exit.
std::string runCommand(const std::string& cmd);

// The whole file ("" when it cannot be read).
std::string readFile(const std::string& path);

}  // namespace ksched::testing
