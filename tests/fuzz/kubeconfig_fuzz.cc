// A kubeconfig (--kubeconfig, clientConnection.kubeconfig, $KUBECONFIG) from YAML text, as the
// daemon loads it (client::resolveConfig -> loadKubeconfig) and then makes its apiserver client
// of it (server URL, TLS material; nothing is contacted). Both report a bad file as
// client::ConfigError, which the daemon prints before it exits. Relative file references
// resolve against an empty directory.
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "client/config.h"
#include "client/rest_client.h"
#include "tests/fuzz/fuzz_util.h"

using namespace ksched;

namespace {

std::string& dir() {
  static std::string d;
  return d;
}

// An empty directory of its own, removed at exit.
const std::string& emptyDir() {
  if (dir().empty()) {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") +
                          "/ksched-fuzz-kubeconfig-XXXXXX";
    if (mkdtemp(pattern.data()) == nullptr) std::abort();
    dir() = pattern;
    std::atexit([] { rmdir(dir().c_str()); });
  }
  return dir();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = emptyDir() + "/kubeconfig";
  try {
    client::Config cfg = client::parseKubeconfig(fuzz::asText(data, size), path);
    client::RestClient rest(cfg);
  } catch (const client::ConfigError&) {
  }
  return 0;
}
