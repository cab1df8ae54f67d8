// SPDX-License-Identifier: Apache-2.0
// Calls a policy's commands ask about (policy_commands.hpp): held by the
// broker until an operator answers with `cerberus ask` (allow once, for a
// while, always; or deny) or ask_timeout passes (denied). Each pending ask
// is a file, run_dir/asks/<ask id>.json, which `cerberus ask list` reads and
// a restarted broker finds (its held calls died with the one before: each is
// recorded as denied). Allowing for a while or always grants the container
// that exact call (the tool and its argv, word for word, as it was asked):
// run_dir/grants.json, written atomically, read again by a restarted broker;
// a grant goes when it expires, is revoked, or its container is deleted.
#pragma once

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::broker {

struct PendingAsk {
    std::string id;        // 8 hex digits, random
    std::string container; // the container's id
    uint64_t cgroup_id = 0;
    std::string tool;
    std::vector<std::string> args;
    std::string cwd;
    pid_t pid = 0;         // the caller, as the host sees it
    std::string rule;      // the ask pattern that matched
    int64_t asked_ns = 0;  // wall clock
    int64_t deadline_ns = 0;
};

nlohmann::json to_json(const PendingAsk& ask);
PendingAsk pending_ask_from_json(const nlohmann::json& j); // throws on a malformed one

std::string asks_dir();   // run_dir/asks
std::string grants_path(); // run_dir/grants.json
std::string new_ask_id();  // 8 hex digits from getrandom
void write_pending_ask(const PendingAsk& ask);
void remove_pending_ask(const std::string& id) noexcept;
// Every pending ask's file, oldest first (one that does not parse is skipped).
std::vector<PendingAsk> read_pending_asks();

// An operator's answer, as `cerberus ask` sends it: "once", "for 10m", "always", "deny".
struct AskAnswer {
    enum class Kind { once, lasting, always, deny } kind = Kind::deny;
    std::chrono::milliseconds lasting{0}; // Kind::lasting
};
// Throws EINVAL naming what is wrong (an unknown answer, a malformed duration).
AskAnswer parse_ask_answer(const std::string& text);
std::string ask_answer_text(const AskAnswer& answer); // "once", "for 10m", "always", "deny"
// As the trail and a late answer say it: "allowed once by uid 0", "denied by uid 1000".
std::string answered_words(const AskAnswer& answer, uid_t uid);

struct Grant {
    std::string id; // "g-" and 8 hex digits
    std::string container;
    uint64_t cgroup_id = 0;
    std::string tool;
    std::vector<std::string> args; // the call as it was asked, matched exactly
    uid_t granted_by = 0;
    int64_t granted_ns = 0;
    std::optional<int64_t> expires_ns; // none: always (until revoked, or the container deleted)

    bool operator==(const Grant&) const = default;
};

nlohmann::json to_json(const Grant& grant);
Grant grant_from_json(const nlohmann::json& j);

// The grants, kept in a file (written atomically at each change).
class GrantBook {
public:
    explicit GrantBook(std::string path) : path_(std::move(path)) {}
    // The file's grants; none without it (a malformed one is logged and left for the next save).
    void load();
    const std::vector<Grant>& grants() const { return grants_; }
    // The grant that allows the call now, if any.
    const Grant* match(uint64_t cgroup_id, const std::string& tool, const std::vector<std::string>& args,
                       int64_t now_ns) const;
    const Grant& add(Grant grant);
    bool revoke(const std::string& id);
    // Those expired by now_ns, or the container's, removed; whether any was.
    bool drop_expired(int64_t now_ns);
    bool drop_container(uint64_t cgroup_id);

private:
    void save() const;
    std::string path_;
    std::vector<Grant> grants_;
};

// The grants in the file (`cerberus ask grants`: grants_path()), none without it; throws on a malformed one.
std::vector<Grant> read_grants(const std::string& path);

} // namespace cerberus::broker
