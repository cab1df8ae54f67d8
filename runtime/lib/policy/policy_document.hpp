// SPDX-License-Identifier: Apache-2.0
// A policy written back as the document parse_policy reads: for the trail's
// start record (which policy a container ran under), for learn mode, and for
// the state dir's policy.json that exec rebuilds its enforcement from.
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace cerberus::policy {

// "1.1.1.1:443", "10.0.0.0/8", "[2001:db8::1]:443", "example.org:443"; the
// text as written when the rule came from a document, else built from it.
std::string host_rule_text(const HostRule& rule);

// The fields in the order docs/policy.md lists them; absent allow-lists stay
// absent, empty deny-lists are left out; an allowed_hosts entry written twice
// is written once. parse_policy(to_document(p).dump()) gives back p.
nlohmann::ordered_json to_document(const Policy& policy);

// to_document without the lists enforced only outside the container
// (allowed_hosts: the kernel maps and the DNS gate), compact: what exec needs
// to rebuild the in-container part of the enforcement.
std::string policy_document(const Policy& policy);

} // namespace cerberus::policy
