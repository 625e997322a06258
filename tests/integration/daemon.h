// Daemon: the ksched binary run as a child process with its output in a log file (integration
// tests that exercise the daemon as an operator runs it).
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "cluster.h"
#include "scheduling.h"

namespace ksched::testing {

class Daemon {
 public:
  // Runs `ksched <args>`; with no args, as the scheduler identity without leader election and
  // without the HTTPS endpoints (several daemons may run at once). `program` runs something
  // else that runs ksched (a container runtime, say) with `args`.
  explicit Daemon(std::string logPath, std::vector<std::string> args = {},
                  std::string program = KSCHED_BINARY)
      : log_(std::move(logPath)) {
    if (args.empty()) {
      args = {"--kubeconfig", TestCluster::get().kubeconfig("scheduler"), "--leader-elect=false",
              "--secure-port=0"};
    }
    std::vector<char*> argv;
    argv.push_back(program.data());
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log_.c_str(), "w", stderr);
      if (f == nullptr) _exit(127);
      dup2(fileno(stderr), fileno(stdout));
      execvp(program.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Daemon() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  [[nodiscard]] std::string log() const {
    std::ifstream f(log_);
    std::stringstream ss;
    ss << f.rdbuf();
    return ss.str();
  }
  [[nodiscard]] bool logHas(const std::string& needle) const {
    return log().find(needle) != std::string::npos;
  }
  bool waitForLog(const std::string& needle, std::chrono::seconds within = 30s) const {
    return eventually([&] { return logHas(needle); }, within);
  }
  // Nothing once the process has been waited for (kill(-1, ...) would signal every process).
  void signal(int sig) const {
    if (pid_ > 0) kill(pid_, sig);
  }
  // Whether the process still runs (one that has exited is reaped: wait() then returns -1).
  [[nodiscard]] bool alive() {
    if (pid_ <= 0) return false;
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) != pid_) return true;
    pid_ = -1;
    return false;
  }
  [[nodiscard]] pid_t pid() const { return pid_; }
  // Waits for the exit; the exit status, or -1 on timeout / death by a signal.
  int wait(std::chrono::seconds within = 30s) {
    if (pid_ <= 0) return -1;
    auto deadline = std::chrono::steady_clock::now() + within;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }
  // Sends `sig` and waits; returns the exit status (or -1 on timeout / signal death).
  int signalAndWait(int sig, std::chrono::seconds within = 20s) {
    signal(sig);
    return wait(within);
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
};

// A TCP port free on 127.0.0.1 right now.
inline int freeLoopbackPort() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  ::close(fd);
  return ntohs(addr.sin_port);
}

// A log file in the test cluster's state dir.
inline std::string logPath(const std::string& name) {
  return TestCluster::get().dir() + "/" + name + ".log";
}

}  // namespace ksched::testing
