// SPDX-License-Identifier: Apache-2.0
#include "dns/dns_pending.hpp"

#include "base/error.hpp"

#include <sys/random.h>

namespace cerberus::dns {

uint16_t PendingTable::random_id()
{
    if (random_left_ == 0) {
        constexpr auto size = sizeof(random_ids_);
        if (getrandom(random_ids_.data(), size, 0) != static_cast<ssize_t>(size))
            throw_errno("getrandom");
        random_left_ = random_ids_.size();
    }
    return random_ids_[--random_left_];
}

uint16_t PendingTable::fresh_gate_id(uint64_t cgroup_id)
{
    for (;;) {
        uint16_t id = random_id();
        if (!by_gate_id_.count({cgroup_id, id}))
            return id;
    }
}

std::optional<uint64_t> PendingTable::add(Pending pending)
{
    if (waiting(pending.cgroup_id) >= max_per_container_)
        return std::nullopt;
    pending.gate_id = fresh_gate_id(pending.cgroup_id);
    uint64_t key = next_key_++;
    if (!pending.client.tcp_conn)
        by_gate_id_[{pending.cgroup_id, pending.gate_id}] = key;
    ++waiting_[pending.cgroup_id];
    pending_.emplace(key, std::move(pending));
    return key;
}

Pending* PendingTable::find(uint64_t key)
{
    auto it = pending_.find(key);
    return it == pending_.end() ? nullptr : &it->second;
}

std::optional<uint64_t> PendingTable::by_gate_id(uint64_t cgroup_id, uint16_t gate_id) const
{
    auto it = by_gate_id_.find({cgroup_id, gate_id});
    if (it == by_gate_id_.end())
        return std::nullopt;
    return it->second;
}

std::vector<uint64_t> PendingTable::due(Clock::time_point now) const
{
    std::vector<uint64_t> keys;
    for (const auto& [key, pending] : pending_)
        if (pending.deadline <= now)
            keys.push_back(key);
    return keys;
}

std::optional<Pending> PendingTable::remove(uint64_t key)
{
    auto it = pending_.find(key);
    if (it == pending_.end())
        return std::nullopt;
    Pending pending = std::move(it->second);
    pending_.erase(it);
    // A TCP query's gate id may be a UDP one's too: only its own index entry goes.
    if (auto index = by_gate_id_.find({pending.cgroup_id, pending.gate_id});
        index != by_gate_id_.end() && index->second == key)
        by_gate_id_.erase(index);
    if (auto count = waiting_.find(pending.cgroup_id); count != waiting_.end() && --count->second == 0)
        waiting_.erase(count);
    return pending;
}

std::vector<Pending> PendingTable::remove_container(uint64_t cgroup_id)
{
    std::vector<uint64_t> keys;
    for (const auto& [key, pending] : pending_)
        if (pending.cgroup_id == cgroup_id)
            keys.push_back(key);
    std::vector<Pending> removed;
    for (uint64_t key : keys)
        removed.push_back(*remove(key));
    return removed;
}

size_t PendingTable::waiting(uint64_t cgroup_id) const
{
    auto it = waiting_.find(cgroup_id);
    return it == waiting_.end() ? 0 : it->second;
}

} // namespace cerberus::dns
