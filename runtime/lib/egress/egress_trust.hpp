// SPDX-License-Identifier: Apache-2.0
// The container's side of the egress proxy's TLS: a CA of its own, made at
// create, whose certificate is added to the trust store bundles its image has
// (each bound read-only over the image's file, the image left unchanged) and
// whose key stays in the container's state directory on the host, where the
// proxy reads it. Clients covered: those reading the system bundle (OpenSSL,
// GnuTLS and NSS builds of curl, wget, git, python3's ssl and urllib) and,
// through the variables set when the process sets none, Node.js
// (NODE_EXTRA_CA_CERTS) and python requests (REQUESTS_CA_BUNDLE). A client
// that carries or pins its own CA fails closed. docs/policy.md, "Request rules".
#pragma once

#include "egress/egress_proxy.hpp"
#include "oci/spec.hpp"
#include "policy/policy.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cerberus::egress {

// Where the container's CA is kept: <state dir>/egress (ca.crt, ca.key, and
// the bundles the container sees).
std::string trust_dir(const std::string& state_dir);

// The image's trust store bundles, of those clients read, that rootfs holds as regular files.
std::vector<std::string> image_bundles(const std::string& rootfs);

// create, deciding: for a policy with allowed_http, the read-only mounts of
// the bundles write_trust makes and the variables above; nothing otherwise.
void add_trust(const policy::Policy& policy, spec::Spec& spec, const std::string& rootfs,
               const std::string& state_dir);

// create, once the state directory exists and before the init mounts them:
// the CA, and each bundle of the image with the CA's certificate added.
void write_trust(const policy::Policy& policy, const std::string& rootfs, const std::string& state_dir);

// The proxy for a container the DNS gate serves: its CA read from egress_dir,
// the upstream servers verified against /etc/cerberus/egress.json's
// "upstream_ca" when the host names one, else the host's own trust store.
std::shared_ptr<const Proxy> proxy_for(const std::string& id, uint64_t cgroup_id,
                                       const std::vector<policy::HttpRule>& rules, const std::string& egress_dir);

} // namespace cerberus::egress
