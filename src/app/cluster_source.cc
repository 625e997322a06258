#include "app/cluster_source.h"

#include <cstdio>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "client/config.h"
#include "client/rest_client.h"
#include "sim/load.h"

namespace ksched::app {

std::string readAll(const std::string& path) {
  if (path == "-") {
    std::string out;
    char buf[1 << 16];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, stdin)) > 0) out.append(buf, n);
    return out;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool parseInt(const std::string& s, int64_t min, int64_t max, int64_t& out) {
  try {
    size_t used = 0;
    const long long v = std::stoll(s, &used);
    if (used != s.size() || v < min || v > max) return false;
    out = v;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

void readFlags(
    const std::vector<std::string>& args, const std::set<std::string>& withValue,
    const std::function<bool(const std::string& arg, bool& stop)>& onSwitch,
    const std::function<void(const std::string& name, const std::string& value)>& onValue,
    std::vector<std::string>& errors) {
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    bool stop = false;
    if (onSwitch(a, stop)) {
      if (stop) return;
      continue;
    }
    std::string name = a, value;
    bool hasValue = false;
    if (auto eq = a.find('='); a.starts_with("--") && eq != std::string::npos) {
      name = a.substr(0, eq);
      value = a.substr(eq + 1);
      hasValue = true;
    }
    if (!withValue.contains(name)) {
      errors.push_back((a.starts_with("-") ? "unknown flag: " : "unexpected argument: ") + a);
      continue;
    }
    if (!hasValue) {
      if (i + 1 >= args.size()) {
        errors.push_back(name + ": needs a value");
        continue;
      }
      value = args[++i];
    }
    onValue(name, value);
  }
}

sim::Cluster readCluster(const std::string& kubeconfig, const std::vector<std::string>& files,
                         const std::string& userAgent) {
  sim::Cluster cluster;
  if (!kubeconfig.empty()) {
    client::Config cfg = client::resolveConfig(kubeconfig, "");
    cfg.qps = 50;
    cfg.burst = 100;
    cfg.userAgent = userAgent;
    client::RestClient::Options o;
    o.maxRetries = 2;
    client::RestClient rest(cfg, o);
    sim::loadFromApiserver(
        rest,
        {"/apis/scheduling.x-k8s.io/v1alpha1/podgroups", "/apis/resource.k8s.io/v1/resourceslices",
         "/apis/resource.k8s.io/v1/deviceclasses", "/apis/resource.k8s.io/v1/resourceclaims",
         "/apis/resource.k8s.io/v1/resourceclaimtemplates"},
        cluster);
  }
  for (const auto& file : files) sim::loadFile(file, sim::LoadAs::kCluster, cluster);
  return cluster;
}

void printSkipped(const std::vector<sim::Skipped>& skipped, size_t from) {
  for (size_t i = from; i < skipped.size(); ++i) {
    const auto& s = skipped[i];
    // "<source>: <object> <field>: <message>", each part left out when empty.
    std::string where = s.source;
    if (!s.object.empty()) where += (where.empty() ? "" : ": ") + s.object;
    if (!s.field.empty()) where += (where.empty() ? "" : " ") + s.field;
    std::fprintf(stderr, "skipped: %s: %s\n", where.c_str(), s.message.c_str());
  }
}

}  // namespace ksched::app
