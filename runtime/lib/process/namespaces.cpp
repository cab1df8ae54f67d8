// SPDX-License-Identifier: Apache-2.0
#include "process/namespaces.hpp"

#include "base/error.hpp"
#include "base/fd.hpp"
#include "base/files.hpp"
#include "oci/spec_names.hpp"

#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>

namespace cerberus::namespaces {
namespace {

std::string format_map(const std::vector<spec::IdMapping>& mappings)
{
    std::string text;
    for (const auto& m : mappings)
        text += std::to_string(m.container_id) + " " + std::to_string(m.host_id) + " " + std::to_string(m.size) + "\n";
    return text;
}

} // namespace

int new_namespace_flags(const spec::Linux& linux)
{
    int flags = 0;
    for (const auto& ns : linux.namespaces)
        if (ns.path.empty())
            flags |= *spec::namespace_clone_flag(ns.type);
    return flags;
}

std::vector<spec::Namespace> joined_in_order(const spec::Linux& linux)
{
    std::vector<spec::Namespace> joined;
    for (const auto& k : spec::namespace_kinds()) // in joining order
        for (const auto& ns : linux.namespaces)
            if (ns.type == k.type && !ns.path.empty())
                joined.push_back(ns);
    return joined;
}

Joinable open(const spec::Namespace& ns)
{
    UniqueFd fd(::open(ns.path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        throw_errno("open namespace " + ns.path);
    return {ns.type, ns.path, std::move(fd)};
}

void join(const Joinable& ns)
{
    if (::setns(ns.fd.get(), *spec::namespace_clone_flag(ns.type)) != 0)
        throw_errno("setns " + ns.type + " " + ns.path);
}

bool for_children_only(const std::string& type)
{
    return type == "pid" || type == "time";
}

ForChildren::ForChildren(const std::vector<Joinable>& namespaces)
{
    for (const auto& ns : namespaces) {
        std::string own = "/proc/self/ns/" + spec::namespace_proc_name(ns.type) + "_for_children";
        UniqueFd original(::open(own.c_str(), O_RDONLY | O_CLOEXEC));
        if (!original)
            throw_errno("open " + own);
        join(ns);
        restore_.push_back({std::move(original), *spec::namespace_clone_flag(ns.type)});
    }
}

ForChildren::~ForChildren()
{
    for (auto& [fd, flag] : restore_)
        ::setns(fd.get(), flag);
}

void bring_up_loopback()
{
    UniqueFd sock(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!sock)
        throw_errno("socket for the loopback interface");
    ifreq request{};
    std::strncpy(request.ifr_name, "lo", IFNAMSIZ - 1);
    if (::ioctl(sock.get(), SIOCGIFFLAGS, &request) != 0)
        throw_errno("SIOCGIFFLAGS lo");
    request.ifr_flags |= IFF_UP;
    if (::ioctl(sock.get(), SIOCSIFFLAGS, &request) != 0)
        throw_errno("SIOCSIFFLAGS lo: setting the loopback interface up");
}

void write_id_maps(pid_t pid, const spec::Linux& linux)
{
    std::string proc = "/proc/" + std::to_string(pid);
    files::write_file(proc + "/uid_map", format_map(linux.uid_mappings));
    files::write_file(proc + "/gid_map", format_map(linux.gid_mappings));
}

} // namespace cerberus::namespaces
