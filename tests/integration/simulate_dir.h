// The fixture of the tests that run `ksched simulate` over files (no apiserver involved): a
// scratch directory per test, files written into it, and the command run there.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli.h"

namespace ksched::testing {

class SimulateDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::temp_directory_path() /
            ("ksched-simulate-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->test_suite_name() + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // Writes `contents` to `name` in the test's directory; returns its path.
  std::string file(const std::string& name, const std::string& contents) const {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << contents;
    return path;
  }
  // `ksched simulate <args>` in the test's directory.
  CliOutcome simulate(std::vector<std::string> args) const {
    args.insert(args.begin(), "simulate");
    return runKsched(args, dir_, std::chrono::seconds(30));
  }
  // `ksched simulate -f <cluster> -o json -q <extra>`: its document; a test failure (and a
  // discarded value) when it does not exit 0.
  nlohmann::json simulateJson(const std::string& cluster,
                              const std::vector<std::string>& extra = {}) const {
    std::vector<std::string> args = {"-f", cluster, "-o", "json", "-q"};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliOutcome r = simulate(args);
    EXPECT_EQ(r.exitCode, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  std::string dir_;
};

}  // namespace ksched::testing
