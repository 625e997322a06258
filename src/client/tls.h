// PEM helpers for cpp-httplib's OpenSSL clients, shared by the apiserver client and the
// extender client.
#pragma once

#include <openssl/x509_vfy.h>

#include <memory>
#include <string>

namespace httplib {
class SSLClient;
}

namespace ksched::client {

// A new store holding every certificate of the PEM bundle, or nullptr if none parsed. The
// caller owns it (httplib's set_ca_cert_store() takes ownership).
[[nodiscard]] X509_STORE* storeFromPem(const std::string& pem);

// Makes `ssl` trust exactly the certificates of `store` (taking ownership of it). httplib would
// otherwise also load the system's default CA bundle into every client's context: ~150
// certificates parsed per connection (about 0.6 MB each time), and CAs the kubeconfig did not
// name trusted for the apiserver.
void trustOnly(httplib::SSLClient& ssl, X509_STORE* store);

// An SSL client for host:port that presents the PEM client certificate and key, or none when
// `certPem` is empty. nullptr when the certificate or the key is not valid PEM; is_valid() is
// false when they do not match.
[[nodiscard]] std::unique_ptr<httplib::SSLClient> newSSLClient(const std::string& host, int port,
                                                               const std::string& certPem,
                                                               const std::string& keyPem);

}  // namespace ksched::client
