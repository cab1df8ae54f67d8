// SPDX-License-Identifier: Apache-2.0
#include "kernel/audit_netlink.hpp"

#include "base/error.hpp"

#include <linux/audit.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sys/socket.h>

#include <cstring>

#ifndef AUDIT_NLGRP_READLOG
#define AUDIT_NLGRP_READLOG 1
#endif

namespace cerberus::kernel {
namespace {

UniqueFd audit_socket(int flags)
{
    UniqueFd fd(socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | flags, NETLINK_AUDIT));
    if (!fd)
        throw_errno("opening a NETLINK_AUDIT socket");
    return fd;
}

} // namespace

AuditStatus audit_status()
{
    AuditStatus status;
    try {
        UniqueFd fd = audit_socket(0);
        nlmsghdr request{};
        request.nlmsg_len = NLMSG_LENGTH(0);
        request.nlmsg_type = AUDIT_GET;
        request.nlmsg_flags = NLM_F_REQUEST;
        request.nlmsg_seq = 1;
        sockaddr_nl kernel{};
        kernel.nl_family = AF_NETLINK;
        check(sendto(fd.get(), &request, request.nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel),
                     sizeof(kernel)),
              "asking the kernel for the audit status");
        alignas(nlmsghdr) char buf[8192];
        for (int answers = 0; answers < 4; ++answers) {
            pollfd pfd{fd.get(), POLLIN, 0};
            if (poll(&pfd, 1, 1000) != 1)
                throw Error("the kernel did not answer AUDIT_GET", ETIMEDOUT);
            ssize_t n = check(recv(fd.get(), buf, sizeof(buf), 0), "reading the audit status");
            auto* header = reinterpret_cast<nlmsghdr*>(buf);
            if (!NLMSG_OK(header, static_cast<int>(n)))
                continue;
            if (header->nlmsg_type == NLMSG_ERROR) {
                auto* err = static_cast<nlmsgerr*>(NLMSG_DATA(header));
                if (err->error != 0)
                    throw_errno("asking the kernel for the audit status", -err->error);
                continue;
            }
            if (header->nlmsg_type != AUDIT_GET || header->nlmsg_len < NLMSG_LENGTH(2 * sizeof(uint32_t)))
                continue;
            uint32_t fields[2]; // struct audit_status begins: mask, enabled
            std::memcpy(fields, NLMSG_DATA(header), sizeof(fields));
            status.known = true;
            status.enabled = fields[1];
            return status;
        }
        throw Error("no audit status in the kernel's answer", EPROTO);
    } catch (const Error& e) {
        status.why_unknown = e.what();
    }
    return status;
}

UniqueFd subscribe_audit_log()
{
    UniqueFd fd = audit_socket(SOCK_NONBLOCK);
    sockaddr_nl addr{};
    addr.nl_family = AF_NETLINK;
    addr.nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1);
    check(bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)),
          "joining the kernel audit log (NETLINK_AUDIT readlog group)");
    int size = 4 << 20; // a burst of denials between two reads
    setsockopt(fd.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size));
    return fd;
}

void send_audit_marker(int fd, const std::string& text)
{
    alignas(nlmsghdr) char buf[NLMSG_SPACE(512)] = {};
    if (text.size() >= 512)
        throw Error("an audit marker of " + std::to_string(text.size()) + " bytes", EINVAL);
    auto* request = reinterpret_cast<nlmsghdr*>(buf);
    request->nlmsg_len = NLMSG_LENGTH(text.size() + 1); // the kernel wants the NUL
    request->nlmsg_type = audit_marker_record;
    request->nlmsg_flags = NLM_F_REQUEST;
    std::memcpy(NLMSG_DATA(request), text.c_str(), text.size() + 1);
    sockaddr_nl kernel{};
    kernel.nl_family = AF_NETLINK;
    check(sendto(fd, buf, request->nlmsg_len, 0, reinterpret_cast<sockaddr*>(&kernel), sizeof(kernel)),
          "sending a marker through the kernel audit log");
}

std::vector<AuditMessage> read_audit_messages(int fd, uint64_t& lost)
{
    std::vector<AuditMessage> messages;
    alignas(nlmsghdr) static char buf[1 << 16];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), 0);
        if (n < 0) {
            if (errno == ENOBUFS) {
                ++lost; // how many records is not said: at least one
                continue;
            }
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                return messages;
            throw_errno("reading the kernel audit log");
        }
        int left = static_cast<int>(n); // signed: the kernel does not pad an audit record's length
        for (auto* header = reinterpret_cast<nlmsghdr*>(buf); NLMSG_OK(header, left);
             header = NLMSG_NEXT(header, left)) {
            const char* text = static_cast<const char*>(NLMSG_DATA(header));
            size_t size = header->nlmsg_len - NLMSG_HDRLEN;
            while (size > 0 && text[size - 1] == '\0')
                --size;
            messages.push_back({header->nlmsg_type, std::string(text, size)});
        }
    }
}

} // namespace cerberus::kernel
