// SPDX-License-Identifier: Apache-2.0
// The container's certificate authority (egress/certificate_authority.hpp):
// saved with its key private to the host and loaded back, and the leaves it
// mints chain to it and name their host, and no other.
#include "base/files.hpp"
#include "egress/certificate_authority.hpp"
#include "error_of.hpp"
#include "temp_dir.hpp"

#include <doctest/doctest.h>

#include <openssl/x509v3.h>
#include <sys/stat.h>

#include <string>

using namespace cerberus;
using namespace cerberus::egress;

namespace {

// Whether leaf verifies against ca alone, for TLS servers.
bool chains_to(X509* leaf, X509* ca)
{
    std::unique_ptr<X509_STORE, OpenSslFree<X509_STORE_free>> store(X509_STORE_new());
    X509_STORE_add_cert(store.get(), ca);
    std::unique_ptr<X509_STORE_CTX, OpenSslFree<X509_STORE_CTX_free>> ctx(X509_STORE_CTX_new());
    X509_STORE_CTX_init(ctx.get(), store.get(), leaf, nullptr);
    X509_STORE_CTX_set_purpose(ctx.get(), X509_PURPOSE_SSL_SERVER);
    return X509_verify_cert(ctx.get()) == 1;
}

unsigned mode_of(const std::string& path)
{
    struct stat st{};
    REQUIRE(::stat(path.c_str(), &st) == 0);
    return st.st_mode & 07777;
}

} // namespace

TEST_CASE("egress CA: a leaf chains to its CA and names its host, no other; minted once")
{
    auto ca = CertificateAuthority::generate("Cerberus egress test");
    auto leaf = ca.leaf_for("api.example.org");
    CHECK(chains_to(leaf->certificate.get(), ca.certificate()));
    CHECK(X509_check_host(leaf->certificate.get(), "api.example.org", 0, 0, nullptr) == 1);
    CHECK(X509_check_host(leaf->certificate.get(), "other.example.org", 0, 0, nullptr) == 0);
    CHECK(X509_check_private_key(leaf->certificate.get(), leaf->key.get()) == 1);
    CHECK(ca.leaf_for("api.example.org") == leaf);
    CHECK(ca.leaf_for("other.example.org") != leaf);

    SUBCASE("control: another CA's leaf does not chain to this one")
    {
        auto other = CertificateAuthority::generate("another");
        CHECK_FALSE(chains_to(other.leaf_for("api.example.org")->certificate.get(), ca.certificate()));
    }
    SUBCASE("a name that is not a DNS name gets no certificate")
    {
        CHECK(test::error_of([&] { ca.leaf_for("a,DNS:evil.example"); }).find("not a lower-case DNS name") !=
              std::string::npos);
    }
}

TEST_CASE("egress CA: saved (the key mode 0600) and loaded, its leaves still chaining to the saved certificate")
{
    TempDir dir;
    std::string cert = dir.path + "/ca.pem", key = dir.path + "/ca.key";
    auto ca = CertificateAuthority::generate("Cerberus egress test");
    ca.save(cert, key);
    CHECK(mode_of(key) == 0600);
    CHECK(mode_of(cert) == 0644);
    CHECK(files::read_file(cert) == ca.cert_pem());
    CHECK(files::read_file(cert).rfind("-----BEGIN CERTIFICATE-----", 0) == 0);

    auto loaded = CertificateAuthority::load(cert, key);
    CHECK(loaded.cert_pem() == ca.cert_pem());
    CHECK(chains_to(loaded.leaf_for("api.example.org")->certificate.get(), ca.certificate()));

    SUBCASE("a key that is not the certificate's is refused, naming both files")
    {
        std::string other_key = dir.path + "/other.key";
        CertificateAuthority::generate("another").save(dir.path + "/other.pem", other_key);
        std::string error = test::error_of([&] { CertificateAuthority::load(cert, other_key); });
        CHECK(error.find("the CA key " + other_key + " does not match " + cert) != std::string::npos);
    }
    SUBCASE("a missing file is named")
    {
        CHECK(test::error_of([&] { CertificateAuthority::load(dir.path + "/none.pem", key); })
                  .find(dir.path + "/none.pem") != std::string::npos);
    }
}
