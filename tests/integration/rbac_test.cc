// ksched started with the RBAC a cluster already has for kube-scheduler: the bootstrap roles
// `system:kube-scheduler` and `system:volume-scheduler` exactly as the v1.20 apiserver creates
// them, bound to an identity of the test's own (the bootstrap bindings bind them to the user
// system:kube-scheduler, which this suite's cluster also grants extras). v1.20's role has no
// namespaces (v1.21 added them): ksched says what that turns off, with the rule to grant,
// schedules anyway, and picks the kind up once it is granted. A kind it cannot do without
// makes it exit at once, saying what to grant, instead of after the 60 s sync timeout.
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kUser = "ksched-test-stock";
constexpr const char* kNs = "rbac-stock";

json roleRef(const std::string& kind, const std::string& name) {
  return {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", kind}, {"name", name}};
}

json userSubject() {
  return json::array(
      {{{"kind", "User"}, {"apiGroup", "rbac.authorization.k8s.io"}, {"name", kUser}}});
}

// The bootstrap bindings of system:kube-scheduler, for kUser: the two ClusterRoles, and the
// Role in kube-system that reads the authentication ConfigMap (secure serving).
void bindStockRoles() {
  for (const char* role : {"system:kube-scheduler", "system:volume-scheduler"}) {
    createOrIgnore(TestCluster::get().admin(),
                   "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                   {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                    {"kind", "ClusterRoleBinding"},
                    {"metadata", {{"name", std::string(kUser) + ":" + role}}},
                    {"roleRef", roleRef("ClusterRole", role)},
                    {"subjects", userSubject()}});
  }
  createOrIgnore(TestCluster::get().admin(),
                 "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings",
                 {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "RoleBinding"},
                  {"metadata", {{"name", std::string(kUser) + ":authentication-reader"}}},
                  {"roleRef", roleRef("Role", "extension-apiserver-authentication-reader")},
                  {"subjects", userSubject()}});
}

const std::string kNamespaceReaderBinding = std::string(kUser) + ":namespace-reader";

void deleteIfPresent(const std::string& path) {
  try {
    TestCluster::get().admin().del(path);
  } catch (const client::ApiError& e) {
    if (!e.isNotFound()) throw;
  }
}

TEST(RbacIntegration, StartsOnTheStockV120RoleAndPicksUpNamespacesOnceGranted) {
  auto& cluster = TestCluster::get();
  auto& admin = cluster.admin();
  cluster.ctl(std::string("identity ") + kUser + " /CN=" + kUser);
  bindStockRoles();
  deleteIfPresent("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" +
                  kNamespaceReaderBinding);
  // The stock role updates only the Lease named kube-scheduler: leader election as upstream's.
  deleteIfPresent("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler");
  deleteAllNodes(admin);
  ensureNamespace(admin, kNs);
  admin.post("/api/v1/nodes", sizedNode("rbac-small", "1", "2Gi"));
  admin.post("/api/v1/nodes", sizedNode("rbac-large", "8", "16Gi"));

  const auto started = std::chrono::steady_clock::now();
  Daemon d(logPath("rbac-stock"),
           {"--kubeconfig", cluster.kubeconfig(kUser), "--leader-elect=true", "--secure-port=0"});
  ASSERT_TRUE(d.waitForLog("synced:", 30s)) << d.log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s) << "waited for a forbidden kind";
  const std::string log = d.log();
  EXPECT_NE(log.find("not watching Namespace (/api/v1/namespaces)"), std::string::npos) << log;
  EXPECT_NE(log.find("a namespaceSelector in pod affinity and anti-affinity terms matches no "
                     "namespace"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("grant the scheduler's identity get, list, watch on \"namespaces\" "
                     "(apiGroups: [\"\"])"),
            std::string::npos)
      << log;
  // Said once, not at every retry.
  EXPECT_EQ(log.find("not watching Namespace", log.find("not watching Namespace") + 1),
            std::string::npos)
      << log;

  // It schedules: a pod that fits only the large node lands there.
  admin.post("/api/v1/namespaces/" + std::string(kNs) + "/pods", sizedPod(kNs, "big", "4"));
  ASSERT_EQ(waitAllBound(admin, kNs, 1, 60s), 1u) << d.log();
  EXPECT_EQ(listPods(admin, kNs).at(0).spec.nodeName, "rbac-large");

  // Granted later, namespaces are watched without a restart.
  createOrIgnore(TestCluster::get().admin(), "/apis/rbac.authorization.k8s.io/v1/clusterroles",
                 {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRole"},
                  {"metadata", {{"name", kNamespaceReaderBinding}}},
                  {"rules", json::array({{{"apiGroups", {""}},
                                          {"resources", {"namespaces"}},
                                          {"verbs", {"get", "list", "watch"}}}})}});
  createOrIgnore(TestCluster::get().admin(),
                 "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
                 {{"apiVersion", "rbac.authorization.k8s.io/v1"},
                  {"kind", "ClusterRoleBinding"},
                  {"metadata", {{"name", kNamespaceReaderBinding}}},
                  {"roleRef", roleRef("ClusterRole", kNamespaceReaderBinding)},
                  {"subjects", userSubject()}});
  EXPECT_TRUE(d.waitForLog("Namespace (/api/v1/namespaces): allowed now; watching it", 60s))
      << d.log();
  EXPECT_EQ(d.signalAndWait(SIGTERM), 0) << d.log();
  deleteIfPresent("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/" +
                  kNamespaceReaderBinding);
}

// An identity that may not list nodes: ksched exits at once, naming the rule to grant.
TEST(RbacIntegration, AKindTheSchedulerNeedsForbiddenEndsTheStartAtOnce) {
  auto& cluster = TestCluster::get();
  const auto started = std::chrono::steady_clock::now();
  Daemon d(logPath("rbac-nobody"), {"--kubeconfig", cluster.kubeconfig("nobody"),
                                    "--leader-elect=false", "--secure-port=0"});
  EXPECT_EQ(d.wait(30s), 1) << d.log();
  EXPECT_LT(std::chrono::steady_clock::now() - started, 20s);
  EXPECT_NE(d.log().find("which the scheduler needs: nodes is forbidden: User \"ksched:nobody\" "
                         "cannot list resource \"nodes\""),
            std::string::npos)
      << d.log();
  EXPECT_NE(d.log().find("grant the scheduler's identity get, list, watch on \"nodes\" "
                         "(apiGroups: [\"\"])"),
            std::string::npos)
      << d.log();
}

}  // namespace
}  // namespace ksched::testing
