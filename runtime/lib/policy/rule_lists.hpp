// SPDX-License-Identifier: Apache-2.0
// The rule lists a policy document holds (allowed_hosts, allowed_paths,
// read_only_paths, denied_paths, allowed_bins, forbidden_caps, commands, allowed_http), each declared
// once in one table: its JSON name, how its entries are read, validated and
// written back, how --lock-policy combines a default's list with an
// annotation's, which rows of the coverage table it brings, what the kernel
// maps are told of it, how a denial by it is worded, and how learn mode
// extracts its entries from a trail. The code that walks a policy list by
// list (parse, document, narrowing, coverage, compile, path resolution,
// learning) loops over this table; what each list means to the kernel
// (BPF map entries, Landlock grants, the programs) stays in its enforcement
// code, which the entry points to. docs/architecture.md, "Adding a rule kind".
#pragma once

#include "policy/coverage_rows.hpp"
#include "policy/policy.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cerberus::policy {

struct CompiledPolicy; // policy_compile.hpp
struct LearnExtraction; // learn_lists.hpp

// What leaving a list out means.
enum class ListRole {
    allow_list, // absent: it restricts nothing; present, even empty: only what it lists
    deny_list,  // absent or empty alike: nothing denied, and documents leave it out
    grant,      // absent or empty alike: nothing granted (commands: no tool brokered); documents leave it out
};

// How a denial by the list is named in the trail and by `cerberus policy check`.
enum class DenialWording {
    not_listed, // "not in allowed_hosts": no entry allows the target
    by_entry,   // "denied_paths /etc/shadow": the entry that denied it
};

struct RuleList {
    const char* name; // the document's field
    const char* label; // the dashboard's short name for it, in a start record's summary ("rw")
    ListRole role;
    DenialWording denial;

    // The document. parse reads the field's value into policy and validates
    // each entry on its own (errors name field[i]); check_within, when set,
    // judges the list against the rest of the policy once every field is read.
    bool (*present)(const Policy& policy); // a deny-list only with an entry
    void (*parse)(const nlohmann::json& value, const std::string& field, Policy& policy);
    void (*check_within)(const Policy& policy);
    nlohmann::ordered_json (*write)(const Policy& policy); // its entries as documents hold them (when present)
    // In the state dir's policy.json, from which exec rebuilds what is enforced
    // inside the container; false for what only the kernel maps and the DNS gate hold.
    bool enforced_inside;

    // --lock-policy. check_narrowed throws (EPERM, naming the entry) for an
    // entry the default's list does not allow, when membership decides (paths
    // are judged on their effective access instead, by narrow_policy); combine
    // sets the narrowed policy's list, narrowed starting as the annotation.
    void (*check_narrowed)(const Policy& locked_default, const Policy& annotation);
    void (*combine)(const Policy& locked_default, const Policy& annotation, Policy& narrowed);

    // Its entries when they are paths (resolved in the rootfs before they are
    // compiled), else nullptr, as is a list the policy does not have.
    std::vector<std::string>* (*paths)(Policy& policy);

    // The kernel side: the coverage rows the list brings when present (a
    // backend lacking one refuses the policy; none for a list a runtime-side
    // enforcer carries out whatever the backend, as the broker does commands), the CERB_HAS_* flag it sets,
    // the CERB_PATH_* kind its paths get in the path map (exact_files: keyed
    // as the files they are, not as prefixes of what lies below), and compile
    // for its other entries (networks, the capability mask).
    std::span<const RuleKind> coverage;
    uint32_t policy_flag;
    uint32_t path_kind;
    bool exact_files;
    void (*compile)(const Policy& policy, CompiledPolicy& out);

    // The CERB_RULE_* the kernel side reports a denial by the list with; the
    // trail words it as denial_rule does; 0 for a list the kernel never judges.
    uint16_t trail_rule;

    // Learn mode: which trail records feed the list and how an action its
    // entries would allow becomes one (learn_lists.hpp); nullptr for a list
    // learning leaves as the base has it (a deny-list only shrinks; what an
    // operator answered "always" to ask_hosts is learned by allowed_hosts).
    const LearnExtraction* learn;

    // paths, for reading.
    const std::vector<std::string>* paths_in(const Policy& policy) const;
    // The rule a denial by the list names: "not in allowed_hosts", "denied_paths /etc".
    std::string denial_rule(const std::string& entry = {}) const;
};

// Every list, in the order documents write them (docs/policy.md's).
std::span<const RuleList> rule_lists();

// The list of that name, nullptr for a name that is none (a document's other fields).
const RuleList* find_rule_list(std::string_view name);

// The list of that name; throws for a name that is none (a mistake in the caller).
const RuleList& rule_list(std::string_view name);

} // namespace cerberus::policy
