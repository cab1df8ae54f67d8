// SPDX-License-Identifier: Apache-2.0
// Learn mode and policy check over a recorded trail (`cerberus policy learn`,
// `cerberus policy check`): the trail's records, read by the caller (audit/
// read_records), judged by the policy's rules. Changes nothing.
#pragma once

#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cerberus::policy {

// The learned policy document (with its "_learned" section) for the records
// of a trail (named in messages and in the section, as is learned_at).
// Without a base, the policy the trail's start records name is widened (all
// its runs must have had the same one). A base must allow at least what that
// policy allowed: what it allowed left no record to learn from.
nlohmann::ordered_json learn_from_records(const std::vector<nlohmann::json>& records, const std::string& trail,
                                          const std::optional<std::string>& base_file, const std::string& learned_at);

// One kind of recorded action the policy would deny.
struct Finding {
    std::string op, target, rule; // rule: the policy's rule that denies it
    int times = 0;
    std::string first; // time of the first such record
};

// The recorded actions (denials and audit verdicts) the policy would deny,
// in the order they first happened. Host names of the policy are resolved.
std::vector<Finding> check_records(const Policy& policy, const std::vector<nlohmann::json>& records);

} // namespace cerberus::policy
