// SPDX-License-Identifier: Apache-2.0
#include "egress/certificate_authority.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <openssl/bn.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <functional>
#include <utility>
#include <vector>

namespace cerberus::egress {
namespace {

constexpr long ca_days = 3650;
// A leaf outlives any container; the CA is the container's, so is its trust.
constexpr long leaf_days = 825;
// Clocks inside and outside the container may differ a little.
constexpr long backdate_seconds = 3600;

EvpPkeyPtr new_key()
{
    return EvpPkeyPtr(check_tls(EVP_EC_gen("P-256"), "generating an EC key"));
}

void set_random_serial(X509* cert)
{
    std::unique_ptr<BIGNUM, OpenSslFree<BN_free>> serial(check_tls(BN_new(), "allocating a serial"));
    check_tls(BN_rand(serial.get(), 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY), "drawing a serial");
    check_tls(BN_to_ASN1_INTEGER(serial.get(), X509_get_serialNumber(cert)) ? 1 : 0, "setting a serial");
}

X509_NAME* name_of(const std::string& common_name)
{
    X509_NAME* name = check_tls(X509_NAME_new(), "allocating a name");
    check_tls(X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                                         reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0),
              "naming a certificate " + common_name);
    return name;
}

// The signer: the CA's certificate and key, or none for a self-signed one.
struct Signer {
    X509* certificate = nullptr;
    EVP_PKEY* key = nullptr;
};

// A certificate for key named common_name, with the extensions given as
// (NID, OpenSSL's config text) pairs, signed by signer (itself when empty).
X509Ptr make_certificate(const std::string& common_name, EVP_PKEY* key, Signer signer, long days,
                         const std::vector<std::pair<int, std::string>>& extensions)
{
    X509Ptr cert(check_tls(X509_new(), "allocating a certificate"));
    check_tls(X509_set_version(cert.get(), X509_VERSION_3), "setting the version");
    set_random_serial(cert.get());
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -backdate_seconds);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * 24 * 3600);
    X509_NAME* subject = name_of(common_name);
    int set = X509_set_subject_name(cert.get(), subject);
    X509_NAME_free(subject);
    check_tls(set, "setting the subject");
    X509* issuer = signer.certificate ? signer.certificate : cert.get();
    check_tls(X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer)), "setting the issuer");
    check_tls(X509_set_pubkey(cert.get(), key), "setting the public key");
    X509V3_CTX ctx;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert.get(), nullptr, nullptr, 0);
    for (const auto& [nid, value] : extensions) {
        X509_EXTENSION* ext = check_tls(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str()), "making " + value);
        int added = X509_add_ext(cert.get(), ext, -1);
        X509_EXTENSION_free(ext);
        check_tls(added, "adding " + value);
    }
    if (X509_sign(cert.get(), signer.key ? signer.key : key, EVP_sha256()) <= 0)
        throw_tls("signing the certificate for " + common_name);
    return cert;
}

std::string pem_of(const std::function<int(BIO*)>& write, const std::string& what)
{
    BioPtr bio(check_tls(BIO_new(BIO_s_mem()), "allocating a buffer"));
    check_tls(write(bio.get()), "writing " + what);
    char* data = nullptr;
    long size = BIO_get_mem_data(bio.get(), &data);
    return std::string(data, size);
}

BioPtr reader_of(const std::string& text)
{
    return BioPtr(check_tls(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())), "allocating a buffer"));
}

} // namespace

CertificateAuthority CertificateAuthority::generate(const std::string& common_name)
{
    CertifiedKey ca;
    ca.key = new_key();
    ca.certificate = make_certificate(common_name, ca.key.get(), {}, ca_days,
                                      {{NID_basic_constraints, "critical,CA:TRUE,pathlen:0"},
                                       {NID_key_usage, "critical,keyCertSign,cRLSign"},
                                       {NID_subject_key_identifier, "hash"}});
    return CertificateAuthority(std::move(ca));
}

CertificateAuthority CertificateAuthority::load(const std::string& cert_path, const std::string& key_path)
{
    CertifiedKey ca;
    std::string cert_text = files::read_file(cert_path);
    ca.certificate.reset(PEM_read_bio_X509(reader_of(cert_text).get(), nullptr, nullptr, nullptr));
    check_tls(ca.certificate.get(), "reading the CA certificate " + cert_path);
    std::string key_text = files::read_file(key_path);
    ca.key.reset(PEM_read_bio_PrivateKey(reader_of(key_text).get(), nullptr, nullptr, nullptr));
    check_tls(ca.key.get(), "reading the CA key " + key_path);
    check_tls(X509_check_private_key(ca.certificate.get(), ca.key.get()),
              "the CA key " + key_path + " does not match " + cert_path);
    return CertificateAuthority(std::move(ca));
}

void CertificateAuthority::save(const std::string& cert_path, const std::string& key_path) const
{
    std::string key_pem = pem_of(
        [&](BIO* bio) {
            return PEM_write_bio_PrivateKey(bio, ca_.key.get(), nullptr, nullptr, 0, nullptr, nullptr);
        },
        "the CA key");
    files::write_file_atomic(key_path, key_pem, 0600);
    files::write_file_atomic(cert_path, cert_pem(), 0644);
}

std::string CertificateAuthority::cert_pem() const
{
    return pem_of([&](BIO* bio) { return PEM_write_bio_X509(bio, ca_.certificate.get()); }, "the CA certificate");
}

CertifiedKey CertificateAuthority::mint_leaf(const std::string& host_name) const
{
    // The name goes into OpenSSL's config text ("DNS:<name>"): letters, digits, '-' and '.' only.
    if (host_name.empty() || host_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-.") != std::string::npos)
        throw Error("no certificate for the host name \"" + host_name + "\": not a lower-case DNS name", EINVAL);
    CertifiedKey leaf;
    leaf.key = new_key();
    leaf.certificate = make_certificate(host_name, leaf.key.get(), {ca_.certificate.get(), ca_.key.get()}, leaf_days,
                                        {{NID_basic_constraints, "critical,CA:FALSE"},
                                         {NID_key_usage, "critical,digitalSignature"},
                                         {NID_ext_key_usage, "serverAuth"},
                                         {NID_subject_alt_name, "DNS:" + host_name},
                                         {NID_authority_key_identifier, "keyid"}});
    return leaf;
}

std::shared_ptr<const CertifiedKey> CertificateAuthority::leaf_for(const std::string& host_name) const
{
    std::lock_guard lock(cache_->mutex);
    auto& leaf = cache_->leaves[host_name];
    if (!leaf)
        leaf = std::make_shared<const CertifiedKey>(mint_leaf(host_name));
    return leaf;
}

} // namespace cerberus::egress
