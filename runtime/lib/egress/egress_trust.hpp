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

#include "egress/egress_config.hpp"
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

// What create decided for a container whose policy has allowed_http: the
// image's bundles the CA is added to, and the host's credentials
// (egress_config.hpp) the proxy sets on its requests.
struct EgressPlan {
    std::vector<std::string> bundles;
    std::vector<Credential> credentials;
    // NAME=VALUE for every process of the container that does not set NAME:
    // the variables above and each credential's placeholder.
    std::vector<std::string> environment;
};

// create, deciding: for a policy with allowed_http, the plan and the
// read-only mounts of the bundles write_trust makes; an empty plan otherwise.
EgressPlan plan_egress(const policy::Policy& policy, spec::Spec& spec, const std::string& rootfs,
                       const std::string& state_dir);

// create, once the state directory exists and before the init mounts them:
// the CA, each bundle of the image with the CA's certificate added, and the
// names of the plan's credentials.
void write_trust(const EgressPlan& plan, const std::string& rootfs, const std::string& state_dir);

// The proxy for a container the DNS gate serves: its CA read from egress_dir,
// the upstream servers verified against the host configuration's upstream_ca
// when it names one, else the host's own trust store, and the credentials
// create chose, with their secrets as the host configuration has them now;
// audit: the policy's mode is audit (ContainerContext::audit).
std::shared_ptr<const Proxy> proxy_for(const std::string& id, uint64_t cgroup_id,
                                       const std::vector<policy::HttpRule>& rules, bool audit,
                                       const std::string& egress_dir);

} // namespace cerberus::egress
