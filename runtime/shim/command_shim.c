/* SPDX-License-Identifier: Apache-2.0 */
/* The command shim: bound read-only over a brokered tool's name in a policed
 * container (broker/broker.hpp). It runs nothing itself: it sends the call
 * (the name it was run by, its arguments, its working directory, and its
 * stdin, stdout and stderr as fds) to the command broker over the socket the
 * runtime mounted in, and exits as the tool did on the host. Without an
 * answer it fails: the call was denied, or never ran, or its end is unknown.
 * C, linked statically against musl, with no JSON (the wire is
 * broker/broker_wire.h): every call of a brokered tool starts it, and an exec
 * costs about what its pages cost to fault in: 10 faults, where the C++ shim
 * took 45 (docs/benchmarks.md, bench/shim_exec.sh). */
#include "shim_wire.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* The request, then the answer read into the same pages. */
static char message[CERBERUS_WIRE_MAX_REQUEST_BYTES];

static const char* tool = "";

static _Noreturn void fail(int status, const char* format, ...)
{
    va_list args;
    va_start(args, format);
    fprintf(stderr, "%s: ", tool);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
    exit(status);
}

/* As base/error's errno_text: strerror's text, starting lowercase. */
static _Noreturn void fail_errno(const char* what)
{
    const char* text = strerror(errno);
    char first = text[0] >= 'A' && text[0] <= 'Z' ? (char)(text[0] - 'A' + 'a') : text[0];
    fail(CERBERUS_WIRE_FAILED_STATUS, "cerberus: %s: %c%s", what, first, text[0] ? text + 1 : "");
}

/* The tool's stdin, stdout and stderr are the shim's; a closed one becomes
 * /dev/null here, before any other open could take its number. */
static void open_stdio(void)
{
    for (int fd = 0; fd < 3; ++fd)
        if (fcntl(fd, F_GETFD) < 0 && open("/dev/null", O_RDWR) != fd)
            fail_errno("opening /dev/null for a closed stdio descriptor");
}

static int connect_broker(void)
{
    static const char path[] = CERBERUS_WIRE_SOCKET_DIR "/" CERBERUS_WIRE_SOCKET_NAME;
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, path, sizeof path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr*)&addr, sizeof addr) < 0)
        fail_errno("connecting to the command broker at " CERBERUS_WIRE_SOCKET_DIR "/" CERBERUS_WIRE_SOCKET_NAME);
    return fd;
}

static void send_request(int broker, size_t length)
{
    static const int stdio[3] = {0, 1, 2};
    union {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof stdio)];
    } control;
    memset(&control, 0, sizeof control);
    struct iovec iov = {message, length};
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = &control, .msg_controllen = sizeof control};
    struct cmsghdr* cmsg = CMSG_FIRSTHDR(&msg);
    cmsg->cmsg_level = SOL_SOCKET;
    cmsg->cmsg_type = SCM_RIGHTS;
    cmsg->cmsg_len = CMSG_LEN(sizeof stdio);
    memcpy(CMSG_DATA(cmsg), stdio, sizeof stdio);
    ssize_t sent;
    do
        sent = sendmsg(broker, &msg, MSG_NOSIGNAL);
    while (sent < 0 && errno == EINTR);
    if (sent < 0)
        fail_errno("sendmsg");
}

static struct shim_wire_answer receive_answer(int broker)
{
    ssize_t n;
    do
        n = recv(broker, message, sizeof message, 0);
    while (n < 0 && errno == EINTR);
    if (n <= 0)
        fail(CERBERUS_WIRE_FAILED_STATUS,
             "cerberus: the command broker ended without answering: the call was not run, or its end is unknown");
    struct shim_wire_answer answer;
    if (shim_wire_read_answer(message, (size_t)n, &answer) < 0)
        fail(CERBERUS_WIRE_FAILED_STATUS, "cerberus: the command broker's answer is not one");
    return answer;
}

int main(int argc, char** argv)
{
    if (argc > 0 && argv[0]) {
        const char* slash = strrchr(argv[0], '/');
        tool = slash ? slash + 1 : argv[0];
    }
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof cwd))
        fail_errno("the working directory");
    size_t arg_count = argc > 0 ? (size_t)argc - 1 : 0;
    size_t length = shim_wire_write_request(message, sizeof message, tool, cwd, arg_count,
                                            (const char* const*)argv + (argc > 0 ? 1 : 0));
    if (length > sizeof message)
        fail(CERBERUS_WIRE_FAILED_STATUS, "cerberus: the call is %zu bytes long, more than the broker takes (%d)",
             length, CERBERUS_WIRE_MAX_REQUEST_BYTES);
    open_stdio();
    int broker = connect_broker();
    send_request(broker, length);
    struct shim_wire_answer answer = receive_answer(broker);
    switch (answer.kind) {
    case CERBERUS_WIRE_EXITED: return answer.number;
    case CERBERUS_WIRE_SIGNALED: return 128 + answer.number;
    case CERBERUS_WIRE_DENIED:
        fail(CERBERUS_WIRE_DENIED_STATUS, "denied by the policy (%.*s)", (int)answer.text_length, answer.text);
    case CERBERUS_WIRE_FAILED: break;
    }
    fail(CERBERUS_WIRE_FAILED_STATUS, "the command broker: %.*s", (int)answer.text_length, answer.text);
}
