// SPDX-License-Identifier: Apache-2.0
// The path lists in learn mode: a file written is learned into allowed_paths,
// one read or mapped executable into read_only_paths (a directory in place of
// fold_at or more files directly in it), a binary executed into allowed_bins
// unless the agent may write it. Under create_by_directory a name the agent
// made is learned as its directory.
#include "policy/learn_lists.hpp"
#include "rootfs/paths.hpp"

#include <algorithm>

namespace cerberus::policy {
namespace {

const std::string writable_bin_rule = "not in allowed_bins, and the agent may write it";

bool is_path(const std::string& target)
{
    return !target.empty() && target[0] == '/';
}

// An executable mapping is a read of the file; the other writing operations write it.
bool writes(const Action& action)
{
    return action.op != "mmap_exec" && writes_path(action);
}

std::string parent_of(const std::string& path)
{
    size_t slash = path.rfind('/');
    return slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
}

bool covered(const std::string& path, const std::vector<std::string>& entries)
{
    return std::any_of(entries.begin(), entries.end(), [&](const auto& entry) { return paths::within(path, entry); });
}

// The files, with a directory in place of fold_at or more files directly in it.
std::vector<std::string> fold(const std::set<std::string>& files, const std::vector<std::string>& keep_apart,
                              nlohmann::ordered_json& folded)
{
    std::map<std::string, std::vector<std::string>> by_parent;
    for (const auto& file : files)
        by_parent[parent_of(file)].push_back(file);
    std::vector<std::string> entries;
    for (const auto& [parent, children] : by_parent) {
        bool fold_here = parent != "/" && children.size() >= fold_at &&
                         std::find(keep_apart.begin(), keep_apart.end(), parent) == keep_apart.end();
        if (fold_here) {
            entries.push_back(parent);
            folded[parent] = children;
        } else {
            entries.insert(entries.end(), children.begin(), children.end());
        }
    }
    // A file under a folded directory needs no entry of its own.
    std::vector<std::string> kept;
    for (const auto& entry : entries) {
        bool under_other = std::any_of(entries.begin(), entries.end(), [&](const auto& other) {
            return other != entry && paths::within(entry, other);
        });
        if (!under_other)
            kept.push_back(entry);
    }
    return kept;
}

// A path written (an exec is allowed_bins'); under create_by_directory a name made, as its directory.
bool take_write(const Action& action, const std::string&, Learning& learning)
{
    if (action.op == "exec" || !is_path(action.target) || !writes(action))
        return false;
    if (action.op == "create" && learning.create_by_directory) {
        std::string directory = parent_of(action.target);
        // A directory the base keeps read-only is not made writable for a name made in it.
        if (auto kept = denying_rule(learning.base, {.op = "open", .target = directory, .write = true});
            kept && kept->starts_with("read_only_paths ")) {
            learning.keep_denied(action.op, action.target, *kept);
            return true;
        }
        learning.writes.insert(directory);
        learning.created[directory].insert(action.target);
    } else {
        learning.writes.insert(action.target);
    }
    learning.must_allow(action, learn_allowed_paths);
    return true;
}

bool take_read(const Action& action, const std::string&, Learning& learning)
{
    if (action.op == "exec" || !is_path(action.target) || writes(action))
        return false;
    learning.reads.insert(action.target);
    learning.must_allow(action, learn_read_only_paths);
    return true;
}

bool take_exec(const Action& action, const std::string&, Learning& learning)
{
    if (action.op != "exec")
        return false;
    learning.bins.insert(action.target);
    learning.must_allow(action, learn_allowed_bins);
    return true;
}

void add_writes(Learning& learning)
{
    Learned& learned = learning.learned;
    // A directory the base keeps read-only is not made writable by folding.
    learning.written =
        fold(learning.writes, learning.base.read_only_paths.value_or(std::vector<std::string>{}), learned.folded);
    learning.add_entries(learned.policy.allowed_paths, learning.written, "allowed_paths");
    for (const auto& [directory, names] : learning.created)
        if (std::find(learning.written.begin(), learning.written.end(), directory) != learning.written.end())
            learned.folded[directory] = names;
}

void add_reads(Learning& learning)
{
    std::set<std::string> reads;
    for (const auto& path : learning.reads)
        if (!covered(path, learning.written))
            reads.insert(path);
    learning.add_entries(learning.learned.policy.read_only_paths, fold(reads, {}, learning.learned.folded),
                         "read_only_paths");
}

// A binary the agent may write could be replaced with anything: it stays denied.
void add_bins(Learning& learning)
{
    const Policy& policy = learning.learned.policy;
    std::vector<std::string> bins;
    for (const auto& bin : learning.bins) {
        bool writable = policy.restricts_paths() && !denying_rule(policy, {.op = "open", .target = bin, .write = true});
        if (!writable) {
            bins.push_back(bin);
            continue;
        }
        learning.keep_denied("exec", bin, writable_bin_rule);
        std::erase_if(learning.fixable, [&](const auto& taken) {
            return taken.first.op == "exec" && taken.first.target == bin;
        });
    }
    learning.add_entries(learning.learned.policy.allowed_bins, bins, "allowed_bins");
}

// A longer entry of the base can still decide against a folded directory
// (a read-only file inside it): such a path gets an entry of its own.
void settle_path(const Action& action, Learning& learning)
{
    Policy& policy = learning.learned.policy;
    bool write = writes(action);
    learning.add_entries(write ? policy.allowed_paths : policy.read_only_paths, {action.target},
                         write ? "allowed_paths" : "read_only_paths");
}

} // namespace

void Learning::add_entries(std::optional<std::vector<std::string>>& list, const std::vector<std::string>& entries,
                           const char* field)
{
    if (entries.empty())
        return;
    if (!list)
        list.emplace();
    for (const auto& entry : entries) {
        if (std::find(list->begin(), list->end(), entry) != list->end())
            continue;
        list->push_back(entry);
        learned.added[field].push_back(entry);
    }
}

const LearnExtraction learn_allowed_paths = {
    .record = nullptr, .take = take_write, .add = add_writes, .settle = settle_path};
const LearnExtraction learn_read_only_paths = {
    .record = nullptr, .take = take_read, .add = add_reads, .settle = settle_path};
// An entry is the binary itself: nothing to settle.
const LearnExtraction learn_allowed_bins = {.record = nullptr, .take = take_exec, .add = add_bins, .settle = nullptr};

} // namespace cerberus::policy
