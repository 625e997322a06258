// The ksched binary's configuration handling as an operator meets it: bad --config files and
// flags fail fast with every error on stderr, --write-config-to writes a loadable file. None of
// this contacts an API server (the flags point at an unreachable one to prove it).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli.h"
#include "config/scheduler_config.h"
#include "config/wiring.h"
#include "plugins/registry.h"

namespace ksched::testing {
namespace {

using ::testing::HasSubstr;

using Outcome = CliOutcome;

class ConfigCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ksched-config-cli-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string file(const std::string& name, const std::string& contents) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << contents;
    return path;
  }

  // Runs ksched with `args`; gives up (exit code -1) after 20 s.
  Outcome run(const std::vector<std::string>& args) {
    return runKsched(args, dir_.string(), std::chrono::seconds(20));
  }

  std::filesystem::path dir_;
};

// Nothing listens here: a run that got past configuration would fail differently.
const std::vector<std::string> kUnreachable = {"--master", "http://127.0.0.1:1"};

std::vector<std::string> with(std::vector<std::string> args) {
  args.insert(args.end(), kUnreachable.begin(), kUnreachable.end());
  return args;
}

TEST_F(ConfigCliTest, BadConfigPrintsEveryErrorAndExitsOne) {
  const std::string path = file("bad.yaml",
                                "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "parallelism: 0\n"
                                "profiles:\n"
                                "- schedulerName: a\n"
                                "  plugins:\n"
                                "    score:\n"
                                "      enabled:\n"
                                "      - name: ImageLocality\n"
                                "      - name: NodeAffinity\n"
                                "        weight: 101\n"
                                "- schedulerName: a\n");
  Outcome r = run(with({"--config", path}));
  EXPECT_EQ(r.exitCode, 1) << r.err;
  EXPECT_EQ(r.err,
            "invalid configuration in " + path +
                ":\n"
                "  parallelism: Invalid value: 0: should be an integer value greater than zero\n"
                "  profiles[0].plugins.score.enabled[1].weight: must be in range [1, 100]\n"
                "  profiles[1].schedulerName: Duplicate value: \"a\"\n");
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("cannot reach")));
}

TEST_F(ConfigCliTest, SyntaxErrorNamesLineAndColumn) {
  const std::string path = file("syntax.yaml",
                                "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n"
                                "profiles: [\n  - a\n");
  Outcome r = run(with({"--config=" + path}));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "invalid configuration in " + path + ":\n  " + path +
                       ": invalid YAML at line 4, column 3: illegal block entry\n");
}

TEST_F(ConfigCliTest, MissingConfigFileExitsOne) {
  const std::string path = (dir_ / "nope.yaml").string();
  Outcome r = run(with({"--config", path}));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err, "invalid configuration in " + path + ":\n  " + path +
                       ": cannot read: No such file or directory\n");
}

TEST_F(ConfigCliTest, BadFlagsExitOne) {
  Outcome r = run({"--secure-port=x", "--nope"});
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_EQ(r.err,
            "--secure-port: \"x\" is not an integer\n"
            "unknown flag: --nope\n"
            "Run 'ksched --help' for the flags.\n");
}

TEST_F(ConfigCliTest, LeaderElectionFlagsAreValidatedWithTheFile) {
  const std::string path = file("ok.yaml",
                                "apiVersion: kubescheduler.config.k8s.io/v1\n"
                                "kind: KubeSchedulerConfiguration\n");
  Outcome r = run(with({"--config", path, "--leader-elect-lease-duration=5s"}));
  EXPECT_EQ(r.exitCode, 1);
  EXPECT_THAT(r.err, HasSubstr("  leaderElection.leaseDuration: Invalid value: 10s: must be "
                               "greater than `RenewDeadline`\n"));
}

TEST_F(ConfigCliTest, WriteConfigToWritesTheEffectiveConfigAndExits) {
  const std::string in = file("in.yaml",
                              "apiVersion: kubescheduler.config.k8s.io/v1\n"
                              "kind: KubeSchedulerConfiguration\n"
                              "parallelism: 4\n"
                              "profiles:\n"
                              "- schedulerName: a\n"
                              "- schedulerName: b\n"
                              "  plugins:\n"
                              "    score:\n"
                              "      disabled: [{name: ImageLocality}]\n");
  const std::string out = (dir_ / "out.yaml").string();
  Outcome r = run(with({"--config", in, "--write-config-to", out, "--leader-elect=false"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string written = readFile(out);
  config::LoadResult loaded =
      config::loadConfig(written, out, config::wiringCheck(plugins::inTreeRegistry()));
  ASSERT_TRUE(loaded.ok()) << written << ::testing::PrintToString(loaded.errors);
  EXPECT_EQ(loaded.config->parallelism, 4);
  EXPECT_FALSE(loaded.config->leaderElection.leaderElect);  // the flag is in the output
  ASSERT_EQ(loaded.config->profiles.size(), 2u);
  EXPECT_EQ(loaded.config->profiles[1].schedulerName, "b");
  // Same effective configuration as the input plus the flag.
  config::LoadResult original =
      config::loadConfig(readFile(in), in, config::wiringCheck(plugins::inTreeRegistry()));
  ASSERT_TRUE(original.ok());
  original.config->leaderElection.leaderElect = false;
  EXPECT_EQ(config::toJson(*loaded.config), config::toJson(*original.config));
}

TEST_F(ConfigCliTest, WriteConfigToWithoutConfigWritesTheDefaults) {
  const std::string out = (dir_ / "defaults.yaml").string();
  Outcome r = run(with({"--write-config-to=" + out, "--kubeconfig", "/etc/k.conf"}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  config::LoadResult loaded =
      config::loadConfig(readFile(out), out, config::wiringCheck(plugins::inTreeRegistry()));
  ASSERT_TRUE(loaded.ok()) << ::testing::PrintToString(loaded.errors);
  config::SchedulerConfiguration want = config::defaultConfiguration();
  want.clientConnection.kubeconfig = "/etc/k.conf";
  EXPECT_EQ(config::toJson(*loaded.config), config::toJson(want));
}

// The names of the default profile's multiPoint plugins in a written configuration.
std::vector<std::string> multiPointNames(const std::string& yaml, const std::string& path) {
  config::LoadResult loaded =
      config::loadConfig(yaml, path, config::wiringCheck(plugins::inTreeRegistry()));
  std::vector<std::string> out;
  if (!loaded.ok() || loaded.config->profiles.empty()) return out;
  for (const auto& p : loaded.config->profiles[0].plugins.multiPoint.enabled) {
    out.push_back(p.name);
  }
  return out;
}

// The default profile is 1.37's: DynamicResources before DefaultPreemption, NodeDeclaredFeatures
// added by its gate (GA, locked on); the cloud volume-limit plugins are gone.
TEST_F(ConfigCliTest, WrittenDefaultProfileIsThatOf137) {
  const std::string out = (dir_ / "defaults.yaml").string();
  Outcome r = run(with({"--write-config-to=" + out}));
  ASSERT_EQ(r.exitCode, 0) << r.err;
  const std::string written = readFile(out);
  EXPECT_THAT(written, HasSubstr("      - name: InterPodAffinity\n        weight: 2\n"
                                 "      - name: DynamicResources\n        weight: 2\n"
                                 "      - name: DefaultPreemption\n"));
  EXPECT_THAT(written, HasSubstr("      - name: NodeDeclaredFeatures\n"));
  EXPECT_EQ(multiPointNames(written, out),
            (std::vector<std::string>{"SchedulingGates",
                                      "PrioritySort",
                                      "NodeUnschedulable",
                                      "NodeName",
                                      "TaintToleration",
                                      "NodeAffinity",
                                      "NodePorts",
                                      "NodeResourcesFit",
                                      "VolumeRestrictions",
                                      "NodeVolumeLimits",
                                      "VolumeBinding",
                                      "VolumeZone",
                                      "PodTopologySpread",
                                      "InterPodAffinity",
                                      "DynamicResources",
                                      "DefaultPreemption",
                                      "NodeResourcesBalancedAllocation",
                                      "ImageLocality",
                                      "DefaultBinder",
                                      "NodeDeclaredFeatures"}))
      << written;
  for (const char* gone : {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"}) {
    EXPECT_THAT(written, ::testing::Not(HasSubstr(gone)));
  }
  // The gate at its (locked) default is accepted and changes nothing.
  const std::string same = (dir_ / "same.yaml").string();
  Outcome s = run(with({"--write-config-to=" + same, "--feature-gates",
                        "NodeDeclaredFeatures=true,DynamicResourceAllocation=true"}));
  ASSERT_EQ(s.exitCode, 0) << s.err;
  EXPECT_EQ(readFile(same), written);
}

TEST_F(ConfigCliTest, LockedOrUnknownGatesFailAndOtherComponentsGatesWarn) {
  const std::string out = (dir_ / "never.yaml").string();
  Outcome locked =
      run(with({"--write-config-to=" + out, "--feature-gates", "NodeDeclaredFeatures=false"}));
  EXPECT_EQ(locked.exitCode, 1);
  EXPECT_THAT(locked.err, HasSubstr("cannot set feature gate NodeDeclaredFeatures to false, "
                                    "feature is locked to true"));
  Outcome unknown = run(with({"--write-config-to=" + out, "--feature-gates=NoSuchGate=true"}));
  EXPECT_EQ(unknown.exitCode, 1);
  EXPECT_THAT(unknown.err, HasSubstr("unrecognized feature gate: NoSuchGate"));
  EXPECT_FALSE(std::filesystem::exists(out)) << "nothing was written";
  // An alpha gate may be switched on.
  Outcome alpha = run(with(
      {"--write-config-to=" + out, "--feature-gates", "TaintTolerationComparisonOperators=true"}));
  EXPECT_EQ(alpha.exitCode, 0) << alpha.err;
  // Another component's gate, as a --feature-gates value shared by a cluster's components
  // carries it: accepted, with a warning.
  Outcome other = run(with(
      {"--write-config-to=" + out, "--feature-gates", "NodeSwap=true,PodLevelResources=true"}));
  EXPECT_EQ(other.exitCode, 0) << other.err;
  EXPECT_THAT(other.out + other.err,
              HasSubstr("feature gate NodeSwap=true: a gate of other Kubernetes components, not "
                        "of the scheduler; ksched accepts it and it changes nothing"));
}

TEST_F(ConfigCliTest, HelpAndVersion) {
  Outcome help = run({"--help"});
  EXPECT_EQ(help.exitCode, 0);
  EXPECT_THAT(help.out, HasSubstr("--write-config-to"));
  EXPECT_THAT(help.out, HasSubstr("--leader-elect-resource-namespace"));
  Outcome version = run({"--version"});
  EXPECT_EQ(version.exitCode, 0);
  EXPECT_EQ(version.out, "ksched v" KSCHED_VERSION "\n");
}

}  // namespace
}  // namespace ksched::testing
