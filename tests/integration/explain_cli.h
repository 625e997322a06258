// `ksched explain` run as a user runs it, against the suite's apiserver.
#pragma once

#include <string>

#include "cluster.h"

namespace ksched::testing {

struct CliRun {
  int rc = -1;
  std::string out;
};

// `ksched explain <args>` as the cluster admin; stdout and stderr together.
inline CliRun explainCli(const std::string& args) {
  const std::string cmd = std::string(KSCHED_BINARY) + " explain --kubeconfig " +
                          TestCluster::get().kubeconfig("admin") + " " + args +
                          " 2>&1; echo \"rc=$?\"";
  std::string out = runCommand(cmd);
  const auto at = out.rfind("rc=");
  CliRun r;
  r.rc = std::stoi(out.substr(at + 3));
  r.out = out.substr(0, at);
  return r;
}

}  // namespace ksched::testing
