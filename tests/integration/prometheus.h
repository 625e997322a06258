// A real Prometheus (Debian's `prometheus`) run by a test on loopback: its configuration written
// to the test cluster's state dir, instant queries through its HTTP API.
#pragma once
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "daemon.h"

namespace ksched::testing {

class PrometheusServer {
 public:
  // Starts `prometheus` with `config` (prometheus.yml text) under <cluster dir>/<name>/; check
  // ready() before use. A machine without prometheus fails the test (deploy/local/install-deps.sh
  // installs it).
  PrometheusServer(const std::string& name, const std::string& config)
      : dir_(TestCluster::get().dir() + "/" + name), port_(freeLoopbackPort()) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ + "/data");
    std::ofstream(dir_ + "/prometheus.yml") << config;
    daemon_ = std::make_unique<Daemon>(
        dir_ + "/prometheus.log",
        std::vector<std::string>{
            "--config.file=" + dir_ + "/prometheus.yml", "--storage.tsdb.path=" + dir_ + "/data",
            "--web.listen-address=127.0.0.1:" + std::to_string(port_), "--log.level=warn"},
        "prometheus");
  }
  ~PrometheusServer() {
    daemon_->signal(SIGCONT);
    daemon_->signalAndWait(SIGTERM);
  }
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  [[nodiscard]] const std::string& dir() const { return dir_; }
  [[nodiscard]] int port() const { return port_; }
  [[nodiscard]] std::string log() const { return daemon_->log(); }
  // SIGSTOP: it stops answering (connections hang); SIGCONT: it answers again.
  void signal(int sig) const { daemon_->signal(sig); }

  // Whether /-/ready answers 200 within `within`.
  bool ready(std::chrono::seconds within = 30s) {
    return eventually(
               [&] {
                 if (!daemon_->alive()) return true;  // reported below
                 auto r = client().Get("/-/ready");
                 return r && r->status == 200;
               },
               within) &&
           daemon_->alive();
  }

  // GET <path> with `params`; the parsed answer (null when there is none).
  nlohmann::json get(const std::string& path, const httplib::Params& params = {}) {
    auto r = client().Get(path, params, httplib::Headers{});
    if (!r || r->status != 200) return nullptr;
    return nlohmann::json::parse(r->body, nullptr, false);
  }
  // The result vector of an instant query (empty on any error).
  nlohmann::json query(const std::string& expr) {
    auto j = get("/api/v1/query", {{"query", expr}});
    if (!j.is_object() || j.value("status", "") != "success") return nlohmann::json::array();
    return j["data"]["result"];
  }
  // The active targets of `job` (/api/v1/targets).
  nlohmann::json targets(const std::string& job) {
    nlohmann::json out = nlohmann::json::array();
    auto j = get("/api/v1/targets", {{"state", "active"}});
    if (!j.is_object()) return out;
    for (const auto& t : j["data"]["activeTargets"]) {
      if (t["labels"].value("job", "") == job) out.push_back(t);
    }
    return out;
  }

 private:
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_connection_timeout(2);
    c.set_read_timeout(10);
    return c;
  }

  std::string dir_;
  int port_;
  std::unique_ptr<Daemon> daemon_;
};

}  // namespace ksched::testing
