// SPDX-License-Identifier: Apache-2.0
// The command shim: bound read-only over a brokered tool's name in a policed
// container (broker/broker.hpp). It runs nothing itself: it sends the call
// (the name it was run by, its arguments, its working directory, and its
// stdin, stdout and stderr as fds) to the command broker over the socket the
// runtime mounted in, and exits as the tool did on the host. Without an
// answer it fails: the call was denied, or never ran, or its end is unknown.
#include "base/error.hpp"
#include "base/unix_socket.hpp"
#include "broker/broker_protocol.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>
#include <string>

using namespace cerberus;
using namespace cerberus::broker;

namespace {

[[noreturn]] void fail(const std::string& tool, const std::string& what, int status = failed_status)
{
    std::fprintf(stderr, "%s: %s\n", tool.c_str(), what.c_str());
    std::exit(status);
}

UniqueFd connect_broker()
{
    std::string path = std::string(container_socket_dir) + "/" + socket_name;
    UniqueFd fd(socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0));
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strncpy(addr.sun_path, path.c_str(), sizeof(addr.sun_path) - 1);
    if (!fd || connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0)
        throw_errno("connecting to the command broker at " + path);
    return fd;
}

// stdin, stdout and stderr; a closed one is /dev/null.
std::vector<UniqueFd> stdio()
{
    std::vector<UniqueFd> fds;
    for (int fd = 0; fd < 3; ++fd)
        fds.emplace_back(fcntl(fd, F_GETFD) < 0 ? open("/dev/null", O_RDWR | O_CLOEXEC) : dup(fd));
    return fds;
}

Answer call(const Request& request)
{
    UniqueFd broker = connect_broker();
    std::string message = request_json(request);
    if (message.size() > max_request_bytes)
        throw Error("the call is " + std::to_string(message.size()) + " bytes long, more than the broker takes (" +
                        std::to_string(max_request_bytes) + ")",
                    E2BIG);
    auto fds = stdio();
    int numbers[3] = {fds[0].get(), fds[1].get(), fds[2].get()};
    unix_socket::send_with_fds(broker.get(), message, numbers);
    fds.clear();
    std::string buf(64 * 1024, '\0');
    ssize_t n;
    do
        n = recv(broker.get(), buf.data(), buf.size(), 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        throw Error("the command broker ended without answering: the call was not run, or its end is unknown", EPIPE);
    auto answer = parse_answer(std::string_view(buf.data(), static_cast<size_t>(n)));
    if (!answer)
        throw Error("the command broker's answer is not one", EPROTO);
    return *answer;
}

} // namespace

int main(int argc, char** argv)
{
    std::string tool = argc > 0 && argv[0] ? argv[0] : "";
    tool = tool.substr(tool.rfind('/') + 1);
    Request request;
    request.tool = tool;
    request.args.assign(argv + (argc > 0 ? 1 : 0), argv + argc);
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        fail(tool, std::string("the working directory: ") + errno_text(errno));
    request.cwd = cwd;
    try {
        Answer answer = call(request);
        switch (answer.kind) {
        case Answer::Kind::exited: return answer.number;
        case Answer::Kind::signaled: return 128 + answer.number;
        case Answer::Kind::denied: fail(tool, "denied by the policy (" + answer.text + ")", denied_status);
        case Answer::Kind::failed: fail(tool, "the command broker: " + answer.text);
        }
    } catch (const Error& e) {
        fail(tool, std::string("cerberus: ") + e.what());
    }
    return failed_status;
}
