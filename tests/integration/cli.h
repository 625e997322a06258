// The ksched binary run as a command (ksched simulate, ksched explain): it exits by itself, and
// the test reads its exit code, stdout and stderr apart.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"

namespace ksched::testing {

struct CliOutcome {
  int exitCode = -1;  // -1: killed by a signal, or killed after the deadline
  std::string out;
  std::string err;
};

// Runs `ksched <args>` with stdout and stderr in `<dir>/cli.out` and `<dir>/cli.err` (`dir`
// must exist); kills it after `within`.
inline CliOutcome runKsched(const std::vector<std::string>& args, const std::string& dir,
                            std::chrono::seconds within = std::chrono::seconds(60)) {
  const std::string outPath = dir + "/cli.out";
  const std::string errPath = dir + "/cli.err";
  const pid_t pid = fork();
  if (pid == 0) {
    if (std::freopen(outPath.c_str(), "w", stdout) == nullptr) _exit(127);
    if (std::freopen(errPath.c_str(), "w", stderr) == nullptr) _exit(127);
    std::vector<char*> argv{const_cast<char*>(KSCHED_BINARY)};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(KSCHED_BINARY, argv.data());
    _exit(127);
  }
  CliOutcome r;
  const auto deadline = std::chrono::steady_clock::now() + within;
  int status = 0;
  for (;;) {
    if (waitpid(pid, &status, WNOHANG) == pid) {
      r.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      break;
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  r.out = readFile(outPath);
  r.err = readFile(errPath);
  return r;
}

}  // namespace ksched::testing
