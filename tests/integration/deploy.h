// deploy/manifests as the integration tests use it: kubectl with the admin identity, a config of
// the manifests run as the ksched ServiceAccount, and bound ServiceAccount tokens.
#pragma once
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cluster.h"

namespace ksched::testing {

inline const std::string kManifests = std::string(KSCHED_SOURCE_DIR) + "/deploy/manifests";

// `kubectl <args>` as the cluster admin; stdout and stderr.
inline std::string kubectl(const std::string& args) {
  return runCommand("kubectl --kubeconfig " + TestCluster::get().kubeconfig("admin") + " " + args +
                    " 2>&1");
}

// A kubeconfig with the ksched ServiceAccount's identity (a client certificate for
// system:serviceaccount:ksched:ksched, as its token would authenticate); its path.
inline std::string serviceAccountKubeconfig() {
  const std::string kc = TestCluster::get().ctl(
      "identity ksched-sa /O=system:serviceaccounts/CN=system:serviceaccount:ksched:ksched");
  std::string kubeconfig = kc.substr(0, kc.find_last_not_of("\n") + 1);
  return kubeconfig.substr(kubeconfig.find_last_of('\n') + 1);
}

// `manifest` (a config file of deploy/manifests) with serviceAccountKubeconfig() as its
// kubeconfig, written to the test dir as `name`; returns its path ("" if the file has no empty
// kubeconfig to fill).
inline std::string configAsServiceAccount(const std::string& manifest, const std::string& name) {
  const std::string kubeconfig = serviceAccountKubeconfig();
  std::string config = readFile(kManifests + "/" + manifest);
  const std::string from = "kubeconfig: \"\"";
  if (config.find(from) == std::string::npos) return "";
  config.replace(config.find(from), from.size(), "kubeconfig: \"" + kubeconfig + "\"");
  const std::string path = TestCluster::get().dir() + "/" + name;
  std::ofstream(path) << config;
  return path;
}

// A bound token (TokenRequest, an hour) for ServiceAccount `ns`/`sa`, created if needed.
inline std::string serviceAccountToken(const std::string& ns, const std::string& sa) {
  auto& admin = TestCluster::get().admin();
  try {
    admin.post("/api/v1/namespaces/" + ns + "/serviceaccounts",
               {{"apiVersion", "v1"}, {"kind", "ServiceAccount"}, {"metadata", {{"name", sa}}}});
  } catch (const client::ApiError& e) {
    if (!e.isConflict()) throw;
  }
  auto tr = admin.post("/api/v1/namespaces/" + ns + "/serviceaccounts/" + sa + "/token",
                       {{"apiVersion", "authentication.k8s.io/v1"},
                        {"kind", "TokenRequest"},
                        {"spec", {{"expirationSeconds", 3600}}}});
  return tr["status"]["token"].get<std::string>();
}

}  // namespace ksched::testing
