// SPDX-License-Identifier: Apache-2.0
// A container's own certificate authority: the egress proxy terminates the
// agent's TLS with a certificate for the name it asked for, signed by this CA,
// which is installed in the container's trust store. Its private key stays on
// the host (a PEM file of mode 0600 beside the container's state).
#pragma once

#include "egress/tls_handles.hpp"

#include <map>
#include <memory>
#include <mutex>
#include <string>

namespace cerberus::egress {

// A certificate and its private key.
struct CertifiedKey {
    X509Ptr certificate;
    EvpPkeyPtr key;
};

class CertificateAuthority {
public:
    // A new CA (an EC P-256 key, a self-signed certificate valid ten years)
    // named common_name ("Cerberus egress <container id>").
    static CertificateAuthority generate(const std::string& common_name);
    // One saved before; errors name the file.
    static CertificateAuthority load(const std::string& cert_path, const std::string& key_path);
    // Writes the certificate (mode 0644) and the key (mode 0600), each atomically.
    void save(const std::string& cert_path, const std::string& key_path) const;

    std::string cert_pem() const;
    X509* certificate() const { return ca_.certificate.get(); }

    // The leaf certificate for host_name (a DNS name, lower case), signed by
    // this CA; minted at its first use and kept. Safe from several threads.
    std::shared_ptr<const CertifiedKey> leaf_for(const std::string& host_name) const;

private:
    explicit CertificateAuthority(CertifiedKey ca) : ca_(std::move(ca)) {}
    CertifiedKey mint_leaf(const std::string& host_name) const;

    CertifiedKey ca_;
    // Behind a pointer so the CA stays movable.
    struct LeafCache {
        std::mutex mutex;
        std::map<std::string, std::shared_ptr<const CertifiedKey>> leaves;
    };
    std::unique_ptr<LeafCache> cache_ = std::make_unique<LeafCache>();
};

} // namespace cerberus::egress
