// SPDX-License-Identifier: Apache-2.0
// The host's side of the egress proxy, /etc/cerberus/egress.json: root's and
// writable by no one else, never the annotation (the agent's side writes
// that). It names the CA the upstream servers are verified against and the
// credentials the proxy sets on requests to named hosts, so that the agent
// holds a placeholder, never the secret. docs/policy.md, "Credentials at the proxy".
#pragma once

#include <map>
#include <string>
#include <vector>

namespace cerberus::egress {

inline constexpr const char* host_config_path = "/etc/cerberus/egress.json";

struct Credential {
    std::string name;        // its key under "credentials"
    std::string host;        // a name as allowed_hosts writes them ("*." for the names below)
    std::string header;      // the request header the proxy sets
    std::string value;       // that header's value, the secret in it
    std::string secret;      // what the responses are scrubbed of
    std::string placeholder; // what the agent holds instead
    std::string env;         // the container's variable holding the placeholder; "" for none
    // The containers it is for: those whose OCI annotations include all of these; empty: every one.
    std::map<std::string, std::string> annotations;
};

struct HostConfig {
    std::string upstream_ca; // "": the host's own trust store
    std::vector<Credential> credentials;
};

// The file read and checked (absent: no CA, no credentials); throws Error
// naming the file and the field.
HostConfig read_host_config();
// Its text checked (secret files read).
HostConfig parse_host_config(const std::string& text);

// The credentials for a container with these OCI annotations.
std::vector<Credential> credentials_for(const std::vector<Credential>& credentials,
                                        const std::map<std::string, std::string>& annotations);

// The credential for requests to host (lower case, no trailing dot): an exact
// name before a wildcard, a longer wildcard before a shorter; nullptr for none.
const Credential* credential_for_host(const std::vector<Credential>& credentials, const std::string& host);

} // namespace cerberus::egress
