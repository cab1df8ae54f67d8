// SPDX-License-Identifier: Apache-2.0
// Asks, one mechanism for every point that holds an action for an operator:
// the command broker holds a call a policy's commands ask about, the DNS gate
// a lookup of a name its ask_hosts lists, until an operator answers with
// `cerberus ask` or the dashboard (allow once, for a while, always; or deny)
// or the ask's timeout passes (denied). Each pending ask is a file,
// run_dir/asks/<ask id>.json, which `cerberus ask list` and the dashboard
// read and a restarted holder finds (what it held died with the one before:
// each is recorded as denied); a host ask is the gate's, a call the broker's,
// and an answer goes to the one that holds it. Allowing for a while or always
// grants the container that exact action (the tool and its argv word for
// word, or the host name): run_dir/grants.json, shared by the two holders,
// each change made under its lock on the file as it is then and written
// atomically; a grant goes when it expires, is revoked, or its container is
// deleted.
#pragma once

#include "kernel/pinned_maps.hpp"

#include <sys/types.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cerberus::audit {

inline constexpr const char* asks_run_dir = "/run/cerberus-asks/" CERB_LAYOUT_ID;

// What is asked about: a command (tool and args) or a host name (host).
struct AskSubject {
    std::string tool;
    std::vector<std::string> args;
    std::string host; // lower case, no trailing dot; empty for a command

    bool is_host() const { return !host.empty(); }
    bool operator==(const AskSubject&) const = default;
};

// "git push origin fix/a", "host api.example.com".
std::string subject_text(const AskSubject& subject);

struct PendingAsk {
    std::string id;        // 8 hex digits, random
    std::string container; // the container's id
    uint64_t cgroup_id = 0;
    AskSubject subject;
    std::string cwd;       // a command's caller's working directory
    pid_t pid = 0;         // a command's caller, as the host sees it (0 for a host name)
    std::string rule;      // the ask entry that matched
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
// The pending ask of that id, nullopt when none is pending.
std::optional<PendingAsk> read_pending_ask(const std::string& id);

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
    AskSubject subject; // as it was asked, matched exactly
    uid_t granted_by = 0;
    int64_t granted_ns = 0;
    std::optional<int64_t> expires_ns; // none: always (until revoked, or the container deleted)

    bool operator==(const Grant&) const = default;
};

nlohmann::json to_json(const Grant& grant);
Grant grant_from_json(const nlohmann::json& j);

// The grant an answer makes (none for once or deny), for the ask answered by uid now.
std::optional<Grant> grant_for(const PendingAsk& ask, const AskAnswer& answer, uid_t uid, int64_t now_ns);

// The grants, kept in a file the holders share: each change reads the file
// under its lock (path.lock), changes it and writes it atomically, so one
// holder's change never drops the other's.
class GrantBook {
public:
    explicit GrantBook(std::string path) : path_(std::move(path)) {}
    // The file's grants; none without it (a malformed one is logged and left for the next change).
    void load();
    const std::vector<Grant>& grants() const { return grants_; }
    // The grant that allows the subject in that container now, if any (as last loaded or changed).
    const Grant* match(uint64_t cgroup_id, const AskSubject& subject, int64_t now_ns) const;
    Grant add(Grant grant);
    bool revoke(const std::string& id);
    // Those expired by now_ns, or the container's, removed; whether any was.
    bool drop_expired(int64_t now_ns);
    bool drop_container(uint64_t cgroup_id);
    // Those the predicate picks (a restarted holder's of containers it no longer serves).
    bool drop_if(const std::function<bool(const Grant&)>& gone);

private:
    // Under the lock: the file read again, changed by change, written when it says it changed something.
    bool change(const std::function<bool(std::vector<Grant>&)>& change);
    std::string path_;
    std::vector<Grant> grants_;
};

// The asks a holder answered lately (the newest 1024), so that a second
// answer to one is told how the first went.
class AnsweredAsks {
public:
    void remember(const std::string& id, const std::string& words);
    bool knows(const std::string& id) const { return words_.count(id) != 0; }
    // "error: ask <id> was answered already: allowed once by uid 0", or "error: no pending ask <id> ...".
    std::string told(const std::string& id) const;

private:
    std::map<std::string, std::string> words_; // ask id -> how it was answered
    std::deque<std::string> order_;            // oldest first, that words_ stays small
};

// An operator's request to a holder over its socket, root's alone (the
// socket is root's too, in a directory no container sees): "ask <id>
// once|for <duration>|always|deny" goes to answer (the holder's), "revoke
// <grant id>" to the grants. What the holder says back: "ok: ..." or "error: ...".
using AnswerAsk = std::function<std::string(const std::string& id, const AskAnswer& answer, uid_t uid)>;
std::string answer_operator(const std::string& request, uid_t peer_uid, const AnswerAsk& answer, GrantBook& grants);

// The grants in the file (`cerberus ask grants`: grants_path()), none without it; throws on a malformed one.
std::vector<Grant> read_grants(const std::string& path);

// The grants as `cerberus state` and the dashboard show them, by the cgroup id of their container: each with
// "expires" (RFC 3339, or "never"). None when the file cannot be read: `cerberus ask grants` names the fault.
std::map<uint64_t, nlohmann::json> grants_shown();

} // namespace cerberus::audit
