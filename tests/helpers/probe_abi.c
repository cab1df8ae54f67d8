// SPDX-License-Identifier: Apache-2.0
/* cerberus-probe's system calls through another ABI than the program's own
 * (tests/vm/cases/policy_abi.sh): the same call made the x86-64 way
 * (syscall), the i386 way (int $0x80, which a 64-bit process may use, with
 * the i386 numbers and 32-bit arguments), and the x86-64 way with garbage in
 * the upper half of its int arguments (the kernel reads only the lower half).
 * A seccomp rule written for one ABI, or comparing whole 64-bit words, does
 * not see the others. "abi 64|32|hi CALL ARGS": prints "ok" or
 * "errno=N (NAME)". A CALL given as a number is made with no arguments (a
 * number beyond every table: tests/integration/security.bats). Pointers
 * given to int $0x80 must fit in 32 bits: every argument lives in this
 * static (non-PIE) program's data. */
#define _GNU_SOURCE
#include "probe_net.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

enum abi { ABI_64, ABI_32, ABI_HIGH_BITS };

/* One call: its x86-64 and i386 numbers; for int arguments, which may carry
 * garbage in their upper half. */
struct call {
    const char* name;
    long nr64;
    long nr32;
};

static const struct call calls[] = {
    {"setxattr", 188, 226},        {"lsetxattr", 189, 227},       {"fsetxattr", 190, 228},
    {"removexattr", 197, 235},     {"lremovexattr", 198, 236},    {"fremovexattr", 199, 237},
    {"io_uring_setup", 425, 425},  {"socket", 41, 359},           {"setsockopt", 54, 366},
    {"bpf", 321, 357},             {"perf_event_open", 298, 336}, {"unshare", 272, 310},
    {"memfd_create", 319, 356},    {"keyctl", 250, 288},          {"add_key", 248, 286},
    {"request_key", 249, 287},     {"userfaultfd", 323, 374},     {"setns", 308, 346},
    {"socketcall", -1, 102},
};

#define SYS_SOCKETCALL_SOCKET 1
#define SYS_SOCKETCALL_SETSOCKOPT 14
#define HIGH_BITS 0x100000000L

static char pool[4096]; /* strings and structures the call points to */
static size_t pool_used;

static void* in_pool(const void* data, size_t size)
{
    if (pool_used + size > sizeof pool) {
        fprintf(stderr, "probe_abi: pool full\n");
        exit(2);
    }
    void* at = pool + pool_used;
    memcpy(at, data, size);
    pool_used += (size + 7) & ~7UL;
    return at;
}

static long text(const char* s) { return (long)(uintptr_t)in_pool(s, strlen(s) + 1); }

static long int80(long nr, long a, long b, long c, long d, long e)
{
    long ret;
    __asm__ volatile("int $0x80"
                     : "=a"(ret)
                     : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d), "D"(e)
                     : "memory", "r8", "r9", "r10", "r11");
    return (int)ret; /* the i386 result is a 32-bit int */
}

/* Makes the call the chosen way; an int argument gets the high bits under
 * ABI_HIGH_BITS (ints: a mask of the argument positions). */
static long invoke(enum abi abi, const struct call* call, unsigned ints, long a, long b, long c, long d, long e)
{
    long args[5] = {a, b, c, d, e};
    if (abi == ABI_32) {
        long ret = int80(call->nr32, args[0], args[1], args[2], args[3], args[4]);
        if (ret < 0 && ret > -4096) {
            errno = (int)-ret;
            return -1;
        }
        return ret;
    }
    if (abi == ABI_HIGH_BITS)
        for (int i = 0; i < 5; ++i)
            if (ints & (1u << i))
                args[i] |= HIGH_BITS;
    return syscall(call->nr64, args[0], args[1], args[2], args[3], args[4]);
}

static const struct call* find_call(const char* name)
{
    for (size_t i = 0; i < sizeof calls / sizeof calls[0]; ++i)
        if (!strcmp(calls[i].name, name))
            return &calls[i];
    return NULL;
}

/* socket(2) through socketcall, i386's multiplexer, whose arguments are in
 * memory that seccomp cannot read. */
static long socketcall(int which, const long* args32, int n)
{
    uint32_t packed[6] = {0};
    for (int i = 0; i < n; ++i)
        packed[i] = (uint32_t)args32[i];
    return invoke(ABI_32, find_call("socketcall"), 0, which, (long)(uintptr_t)in_pool(packed, sizeof packed), 0, 0, 0);
}

static int abi_call(enum abi abi, int argc, char** argv)
{
    const char* name = argv[0];
    char* end = NULL;
    long nr = strtol(name, &end, 0);
    if (end != name && *end == '\0') {
        const struct call numbered = {name, nr, nr};
        return report(invoke(abi, &numbered, 0, 0, 0, 0, 0, 0));
    }
    const struct call* call = find_call(name);
    if (!call || (call->nr64 < 0 && abi != ABI_32)) {
        fprintf(stderr, "abi: unknown call %s\n", name);
        return 2;
    }
    long xattr_value = text("v");
    const char* path = argc > 1 ? argv[1] : "/";
    if (!strcmp(name, "setxattr") || !strcmp(name, "lsetxattr"))
        return report(invoke(abi, call, 1u << 4, text(path), text("user.cerberus"), xattr_value, 1, 0));
    if (!strcmp(name, "removexattr") || !strcmp(name, "lremovexattr"))
        return report(invoke(abi, call, 0, text(path), text("user.cerberus"), 0, 0, 0));
    if (!strcmp(name, "fsetxattr") || !strcmp(name, "fremovexattr")) {
        int fd = open(path, O_RDONLY);
        if (fd < 0)
            return report(-1);
        if (!strcmp(name, "fsetxattr"))
            return report(invoke(abi, call, 1u << 0 | 1u << 4, fd, text("user.cerberus"), xattr_value, 1, 0));
        return report(invoke(abi, call, 1u << 0, fd, text("user.cerberus"), 0, 0, 0));
    }
    if (!strcmp(name, "io_uring_setup")) {
        char params[120] = {0};
        return report(invoke(abi, call, 1u << 0, 1, (long)(uintptr_t)in_pool(params, sizeof params), 0, 0, 0));
    }
    if (!strcmp(name, "socket") && argc > 3) {
        long args[3] = {family_of(argv[1]), atoi(argv[2]), atoi(argv[3])};
        return report(invoke(abi, call, 7, args[0], args[1], args[2], 0, 0));
    }
    if (!strcmp(name, "socketcall") && argc > 1 && !strcmp(argv[1], "socket") && argc > 4) {
        long args[3] = {family_of(argv[2]), atoi(argv[3]), atoi(argv[4])};
        return report(socketcall(SYS_SOCKETCALL_SOCKET, args, 3));
    }
    /* setsockopt LEVEL NAME BYTES, on a UDP socket of the family the level says. */
    int setsockopt_direct = !strcmp(name, "setsockopt") && argc > 3;
    int setsockopt_muxed = !strcmp(name, "socketcall") && argc > 4 && !strcmp(argv[1], "setsockopt");
    if (setsockopt_direct || setsockopt_muxed) {
        char** rest = argv + (setsockopt_direct ? 1 : 2);
        int level = atoi(rest[0]);
        int fd = socket(level == IPPROTO_IPV6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
        if (fd < 0)
            return report(-1);
        unsigned char value[40] = {0};
        int length = atoi(rest[2]);
        if (length > (int)sizeof value)
            length = sizeof value;
        value[0] = 0x83; /* IPv4 option LSRR; IPv6: next header */
        value[1] = length > 3 ? (unsigned char)(length - 1) : 0;
        value[2] = 4;
        long args[5] = {fd, level, atoi(rest[1]), (long)(uintptr_t)in_pool(value, sizeof value), length};
        if (setsockopt_muxed)
            return report(socketcall(SYS_SOCKETCALL_SETSOCKOPT, args, 5));
        return report(invoke(abi, call, 1u << 1 | 1u << 2, args[0], args[1], args[2], args[3], args[4]));
    }
    if (!strcmp(name, "bpf")) {
        uint32_t attr[12] = {2 /* BPF_MAP_TYPE_ARRAY */, 4, 4, 1};
        return report(invoke(abi, call, 1u << 0, 0 /* BPF_MAP_CREATE */, (long)(uintptr_t)in_pool(attr, sizeof attr),
                             sizeof attr, 0, 0));
    }
    if (!strcmp(name, "perf_event_open")) {
        uint32_t attr[32] = {1 /* PERF_TYPE_SOFTWARE */, sizeof attr, 0 /* CPU clock */};
        return report(invoke(abi, call, 0, (long)(uintptr_t)in_pool(attr, sizeof attr), 0, -1, -1, 0));
    }
    if (!strcmp(name, "unshare"))
        return report(invoke(abi, call, 0, CLONE_NEWUSER, 0, 0, 0, 0));
    if (!strcmp(name, "setns")) {
        int fd = open("/proc/self/ns/user", O_RDONLY);
        if (fd < 0)
            return report(-1);
        return report(invoke(abi, call, 1u << 0 | 1u << 1, fd, argc > 1 ? atol(argv[1]) : CLONE_NEWUSER, 0, 0, 0));
    }
    if (!strcmp(name, "memfd_create"))
        return report(invoke(abi, call, 1u << 1, text("probe"), 0, 0, 0, 0));
    if (!strcmp(name, "keyctl")) /* the id of the user keyring: reading the keyring of the caller's uid */
        return report(invoke(abi, call, 1u << 0 | 1u << 2, KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0, 0, 0));
    if (!strcmp(name, "add_key"))
        return report(invoke(abi, call, 1u << 4, text("user"), text("cerberus-probe"), xattr_value, 1,
                             KEY_SPEC_PROCESS_KEYRING));
    if (!strcmp(name, "request_key"))
        return report(invoke(abi, call, 1u << 3, text("user"), text("cerberus-probe"), 0, KEY_SPEC_USER_KEYRING, 0));
    if (!strcmp(name, "userfaultfd"))
        return report(invoke(abi, call, 1u << 0, O_CLOEXEC, 0, 0, 0, 0));
    fprintf(stderr, "abi: bad arguments for %s\n", name);
    return 2;
}

int probe_abi(int argc, char** argv)
{
    if (argc < 4 || strcmp(argv[1], "abi") != 0)
        return -1;
    enum abi abi = !strcmp(argv[2], "32") ? ABI_32 : !strcmp(argv[2], "hi") ? ABI_HIGH_BITS : ABI_64;
    return abi_call(abi, argc - 3, argv + 3);
}

#else

int probe_abi(int argc, char** argv)
{
    if (argc < 2 || strcmp(argv[1], "abi") != 0)
        return -1;
    printf("errno=%d (%s)\n", ENOSYS, "ENOSYS"); /* no second ABI to call through */
    return 1;
}

#endif
