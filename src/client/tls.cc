#include "client/tls.h"

#include <httplib.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

namespace ksched::client {
namespace {

struct BioDeleter {
  void operator()(BIO* b) const { BIO_free(b); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;

BioPtr memBio(const std::string& pem) {
  return BioPtr(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

X509_STORE* storeFromPem(const std::string& pem) {
  auto bio = memBio(pem);
  X509_STORE* store = X509_STORE_new();
  int added = 0;
  while (X509* cert = PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr)) {
    if (X509_STORE_add_cert(store, cert) == 1) ++added;
    X509_free(cert);
  }
  ERR_clear_error();
  if (added == 0) {
    X509_STORE_free(store);
    return nullptr;
  }
  return store;
}

void trustOnly(httplib::SSLClient& ssl, X509_STORE* store) {
  ssl.set_ca_cert_store(store);
  // httplib loads the default verify paths unless a CA file or directory is named; a directory
  // lookup is only consulted for certificates the store lacks, so one that does not exist adds
  // nothing.
  ssl.set_ca_cert_path("", "/nonexistent/ksched-trusts-only-its-ca");
}

std::unique_ptr<httplib::SSLClient> newSSLClient(const std::string& host, int port,
                                                 const std::string& certPem,
                                                 const std::string& keyPem) {
  if (certPem.empty()) return std::make_unique<httplib::SSLClient>(host, port);
  auto certBio = memBio(certPem);
  auto keyBio = memBio(keyPem);
  X509* cert = PEM_read_bio_X509(certBio.get(), nullptr, nullptr, nullptr);
  EVP_PKEY* key = PEM_read_bio_PrivateKey(keyBio.get(), nullptr, nullptr, nullptr);
  std::unique_ptr<httplib::SSLClient> ssl;
  if (cert != nullptr && key != nullptr) {
    ssl = std::make_unique<httplib::SSLClient>(host, port, cert, key);
  }
  X509_free(cert);  // the SSL context holds its own references
  EVP_PKEY_free(key);
  ERR_clear_error();
  return ssl;
}

}  // namespace ksched::client
