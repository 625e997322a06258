// GET against a ksched HTTPS port (/healthz, /metrics, ...) on loopback.
#pragma once

#include <httplib.h>

#include <chrono>
#include <string>

#include "cluster.h"

namespace ksched::testing {

struct HttpsAnswer {
  int status = -1;  // -1: no answer (see error)
  std::string body;
  std::string contentType;
  std::string error;
  std::chrono::duration<double> took{0};
};

// GET https://127.0.0.1:port/path without verifying the server's certificate: as the cluster's
// admin (system:masters, whom the port's authorization lets read everything), or anonymous with
// asAdmin false. `timeout` bounds the connect and each read.
inline HttpsAnswer httpsGet(int port, const std::string& path, bool asAdmin = true,
                            std::chrono::seconds timeout = std::chrono::seconds(5)) {
  const auto start = std::chrono::steady_clock::now();
  httplib::SSLClient c("127.0.0.1", port);
  c.enable_server_certificate_verification(false);
  c.set_connection_timeout(timeout);
  c.set_read_timeout(timeout);
  c.set_write_timeout(timeout);
  if (asAdmin) c.set_bearer_token_auth(TestCluster::get().config("admin").token.c_str());
  auto res = c.Get(path.c_str());
  HttpsAnswer a;
  a.took = std::chrono::steady_clock::now() - start;
  if (!res) {
    a.error = httplib::to_string(res.error());
    return a;
  }
  a.status = res->status;
  a.body = res->body;
  a.contentType = res->get_header_value("Content-Type");
  return a;
}

}  // namespace ksched::testing
