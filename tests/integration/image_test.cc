// The container image as a user deploys it: deploy/build-image.sh packages the ksched this
// suite built (the runtime stage of deploy/Dockerfile, with the packages derived from the
// binary), and the image's entrypoint runs with the Deployment's args, the ConfigMap's
// configuration (both rendered by `kubectl kustomize deploy/manifests`), the in-cluster
// service-account setup and the token of the ServiceAccount the manifests' RBAC binds.
// Registered as the ctest `image` (plain builds only: a sanitizer build cannot be packaged).
#include <gtest/gtest.h>
#include <httplib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "cluster.h"
#include "daemon.h"
#include "scheduling.h"

namespace ksched::testing {
namespace {

namespace fs = std::filesystem;

const std::string kSource = KSCHED_SOURCE_DIR;
const std::string kTag = "localhost/ksched:test";

// buildah as deploy/build-image.sh runs it (no daemon, chroot isolation).
std::string storageDriver() {
  const char* driver = std::getenv("KSCHED_STORAGE_DRIVER");
  return driver != nullptr ? driver : "vfs";
}
std::string buildah() { return "buildah --storage-driver " + storageDriver(); }

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

struct Rendered {
  std::string config;                // the ConfigMap's config.yaml
  std::string image;                 // the Deployment's container image
  std::vector<std::string> args;     // the Deployment's container args
  std::vector<std::string> volumes;  // mountPath of each volumeMount
};

Rendered renderManifests() {
  Rendered r;
  const std::string out = runCommand("kubectl kustomize " + kSource + "/deploy/manifests");
  for (const YAML::Node& doc : YAML::LoadAll(out)) {
    const std::string kind = doc["kind"].as<std::string>("");
    if (kind == "ConfigMap" && doc["metadata"]["name"].as<std::string>("") == "ksched-config") {
      r.config = doc["data"]["config.yaml"].as<std::string>();
    }
    if (kind == "Deployment") {
      const YAML::Node c = doc["spec"]["template"]["spec"]["containers"][0];
      r.image = c["image"].as<std::string>();
      for (const auto& a : c["args"]) r.args.push_back(a.as<std::string>());
      for (const auto& v : c["volumeMounts"]) r.volumes.push_back(v["mountPath"].as<std::string>());
    }
  }
  return r;
}

// The image's OCI config (User, Entrypoint, Labels, ...).
nlohmann::json imageConfig() {
  const auto j = nlohmann::json::parse(runCommand(buildah() + " inspect --type image " + kTag));
  return j.at("OCIv1").at("config");
}

// The process named `comm` among the descendants of `root` (0 if none): ksched inside
// `buildah run`, which does not forward SIGTERM but kills its child.
pid_t findDescendant(pid_t root, const std::string& comm) {
  std::map<pid_t, pid_t> parent;
  std::map<pid_t, std::string> name;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string base = e.path().filename();
    if (base.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    if (!std::getline(stat, line)) continue;
    // pid (comm) state ppid ...
    const size_t open = line.find('('), close = line.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    const pid_t pid = std::stoi(base);
    name[pid] = line.substr(open + 1, close - open - 1);
    std::istringstream rest(line.substr(close + 2));
    char state = 0;
    pid_t ppid = 0;
    rest >> state >> ppid;
    parent[pid] = ppid;
  }
  for (const auto& [pid, n] : name) {
    if (n != comm) continue;
    for (pid_t p = parent[pid]; p > 1; p = parent[p]) {
      if (p == root) return pid;
    }
  }
  return 0;
}

// A working container of the image; removed (with anything still running in it) at the end.
class Container {
 public:
  explicit Container(const std::string& image)
      : name_(trimmed(runCommand(buildah() + " from --pull-never " + image))) {}
  ~Container() {
    try {
      runCommand(buildah() + " rm " + name_);
    } catch (const std::exception&) {
    }
  }
  [[nodiscard]] const std::string& name() const { return name_; }

 private:
  std::string name_;
};

class ImageIntegration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto start = std::chrono::steady_clock::now();
    buildLog_ =
        runCommand(kSource + "/deploy/build-image.sh --binary " + KSCHED_BINARY + " " + kTag);
    const auto secs =
        std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - start)
            .count();
    std::cerr << "[image] built " << kTag << " in " << secs << " s\n";
  }
  static std::string buildLog_;
};
std::string ImageIntegration::buildLog_;

TEST_F(ImageIntegration, IsNonRootWithOciLabelsAndRunsVersion) {
  EXPECT_NE(buildLog_.find("built " + kTag), std::string::npos) << buildLog_;
  const auto config = imageConfig();
  EXPECT_EQ(config.value("User", ""), "65532:65532");
  const auto labels = config.value("Labels", nlohmann::json::object());
  EXPECT_EQ(labels.value("org.opencontainers.image.title", ""), "ksched") << labels.dump();
  EXPECT_EQ(labels.value("org.opencontainers.image.licenses", ""), "Apache-2.0");
  EXPECT_EQ(labels.value("org.opencontainers.image.version", ""), KSCHED_VERSION);
  EXPECT_EQ(labels.value("org.opencontainers.image.revision", "").size(), 40u) << labels.dump();

  Container c(kTag);
  const std::string version = runCommand(buildah() + " run --isolation chroot --user 65532:65532 " +
                                         c.name() + " -- /usr/local/bin/ksched --version");
  EXPECT_NE(version.find(KSCHED_VERSION), std::string::npos) << version;
  // No compiler, no package of the build stage.
  EXPECT_THROW(runCommand(buildah() + " run --isolation chroot " + c.name() + " -- sh -c " +
                          "'command -v g++ || command -v cmake || ls /usr/include/nlohmann'"),
               std::runtime_error);
}

TEST_F(ImageIntegration, RunsAsTheManifestsDeployItAndBindsPods) {
  auto& admin = TestCluster::get().admin();
  const Rendered r = renderManifests();
  ASSERT_FALSE(r.config.empty());
  ASSERT_EQ(r.image, "ksched:dev");
  ASSERT_EQ(r.volumes, (std::vector<std::string>{"/etc/ksched", "/var/run/ksched"}));

  // What the Deployment gets: its namespace, ServiceAccount, RBAC, ConfigMap; and a token for
  // the ServiceAccount as the kubelet would mount it.
  runCommand("kubectl --kubeconfig " + TestCluster::get().kubeconfig("admin") + " apply -k " +
             kSource + "/deploy/manifests");
  auto tr = admin.post("/api/v1/namespaces/ksched/serviceaccounts/ksched/token",
                       {{"apiVersion", "authentication.k8s.io/v1"},
                        {"kind", "TokenRequest"},
                        {"spec", {{"expirationSeconds", 3600}}}});
  const std::string token = tr["status"]["token"].get<std::string>();
  ASSERT_FALSE(token.empty());

  const fs::path dir = fs::path(TestCluster::get().dir()) / "image-run";
  fs::remove_all(dir);
  fs::create_directories(dir / "sa");
  fs::create_directories(dir / "config");
  fs::create_directories(dir / "certs");
  std::ofstream(dir / "sa" / "token") << token;
  std::ofstream(dir / "sa" / "namespace") << "ksched";
  fs::copy_file(fs::path(TestCluster::get().dir()) / "pki" / "ca.crt", dir / "sa" / "ca.crt");
  std::ofstream(dir / "config" / "config.yaml") << r.config;
  // The certs emptyDir is writable by the pod's user (runAsUser 65532); everything else is not.
  ASSERT_EQ(chown((dir / "certs").c_str(), 65532, 65532), 0);
  for (const auto& p : fs::recursive_directory_iterator(dir)) {
    if (p.is_regular_file())
      fs::permissions(p.path(),
                      fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
  }

  deleteAllNodes(admin);
  const std::string ns = "image-run";
  ensureNamespace(admin, ns);
  admin.post("/api/v1/nodes", sizedNode("image-0", "4", "8Gi"));

  Container c(kTag);
  const auto entrypoints = imageConfig().value("Entrypoint", nlohmann::json::array());
  ASSERT_EQ(entrypoints, nlohmann::json::array({"/usr/local/bin/ksched"}));
  const std::string entrypoint = entrypoints[0];
  // buildah run, as the kubelet would run the pod: host network, the pod's user, the
  // service-account files and KUBERNETES_SERVICE_* of in-cluster config, the two mounts.
  std::vector<std::string> args = {"--storage-driver", storageDriver(), "run",  "--isolation",
                                   "chroot",           "--network",     "host", "--user",
                                   "65532:65532"};
  args.push_back("--env=KUBERNETES_SERVICE_HOST=127.0.0.1");
  args.push_back("--env=KUBERNETES_SERVICE_PORT=" +
                 std::to_string(TestCluster::get().apiserverPort()));
  // /var/run is a symlink to /run in the image; container runtimes resolve it, but buildah's
  // chroot mounts a fresh /run over volumes bound through it, so bind at the resolved path.
  auto resolved = [](const std::string& path) {
    return path.starts_with("/var/run/") ? path.substr(4) : path;
  };
  args.push_back("--volume=" + (dir / "sa").string() + ":" +
                 resolved("/var/run/secrets/kubernetes.io/serviceaccount") + ":ro");
  args.push_back("--volume=" + (dir / "config").string() + ":" + resolved(r.volumes[0]) + ":ro");
  args.push_back("--volume=" + (dir / "certs").string() + ":" + resolved(r.volumes[1]));
  args.push_back(c.name());
  args.push_back("--");
  args.push_back(entrypoint);
  for (const auto& a : r.args) args.push_back(a);
  Daemon d(logPath("image-run"), args, "buildah");
  struct KillInside {  // on an early return: buildah, killed, would leave ksched running
    Daemon& d;
    ~KillInside() {
      if (pid_t p = d.pid() > 0 ? findDescendant(d.pid(), "ksched") : 0; p > 0) kill(p, SIGKILL);
    }
  } killInside{d};

  ASSERT_TRUE(d.waitForLog("synced:", 90s)) << d.log();
  for (int i = 0; i < 3; ++i) {
    auto p = sizedPod(ns, "p-" + std::to_string(i), "100m");
    p["spec"]["schedulerName"] = "ksched";
    admin.post("/api/v1/namespaces/" + ns + "/pods", p);
  }
  EXPECT_EQ(waitAllBound(admin, ns, 3, 60s), 3u) << d.log();
  for (const auto& p : listPods(admin, ns)) EXPECT_EQ(p.spec.nodeName, "image-0");
  EXPECT_TRUE(eventually([&] { return eventsByPod(admin, ns, "Scheduled").size() == 3; }));

  // It leads through the Lease the manifests' Role allows, and serves the probes' paths.
  auto lease = admin.get("/apis/coordination.k8s.io/v1/namespaces/ksched/leases/ksched");
  EXPECT_FALSE(lease["spec"].value("holderIdentity", "").empty()) << lease.dump();
  httplib::SSLClient https("127.0.0.1", 10259);
  https.enable_server_certificate_verification(false);
  https.set_connection_timeout(5);
  for (const char* path : {"/healthz", "/livez", "/readyz"}) {
    auto res = https.Get(path);
    ASSERT_TRUE(res) << path << ": " << httplib::to_string(res.error());
    EXPECT_EQ(res->status, 200) << path << ": " << res->body;
  }
  // The certificate it made for itself is in the writable emptyDir.
  EXPECT_FALSE(fs::is_empty(dir / "certs"));

  const pid_t ksched = findDescendant(d.pid(), "ksched");
  ASSERT_GT(ksched, 0);
  kill(ksched, SIGTERM);
  EXPECT_EQ(d.wait(30s), 0) << d.log();
  const std::string log = d.log();
  EXPECT_EQ(log.find("orbidden"), std::string::npos) << log;
  deleteAllPods(admin, ns);
}

}  // namespace
}  // namespace ksched::testing
