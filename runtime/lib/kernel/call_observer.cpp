// SPDX-License-Identifier: Apache-2.0
#include "kernel/call_observer.hpp"

#include "base/error.hpp"
#include "base/files.hpp"
#include "cerberus_calls.h"
#include "cerberus_observe.skel.h"
#include "kernel/boot_record.hpp"
#include "kernel/pin_dir.hpp"
#include "kernel/pinned_maps.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>

namespace cerberus::kernel {
namespace {

constexpr const char* support_record = "/run/cerberus-enforcement/observer";

static_assert(sizeof(cerb_call_event) == 1136);

bool has_cap_tracepoint()
{
    btf* vmlinux = btf__load_vmlinux_btf();
    if (!vmlinux)
        return false;
    bool found = btf__find_by_name_kind(vmlinux, "btf_trace_cap_capable", BTF_KIND_TYPEDEF) >= 0;
    btf__free(vmlinux);
    return found;
}

const char* capability_name(CapabilityChecks checks)
{
    switch (checks) {
    case CapabilityChecks::tracepoint: return "tracepoint";
    case CapabilityChecks::kprobe: return "kprobe";
    case CapabilityChecks::none: break;
    }
    return "none";
}

CapabilityChecks capability_checks(const std::string& name)
{
    return name == "tracepoint" ? CapabilityChecks::tracepoint
           : name == "kprobe"   ? CapabilityChecks::kprobe
                                : CapabilityChecks::none;
}

ObserverSupport try_observer()
{
    ObserverSupport support;
    try {
        CallObserver observer = CallObserver::attach();
        support.calls = true;
        support.capabilities = observer.capabilities();
    } catch (const Error& e) {
        support.why = e.what();
    }
    return support;
}

// Bytes of the task's memory up to a NUL (at most max), read through
// /proc/<pid>/mem a page at a time: a string may end just before an unmapped page.
std::string read_string(int mem_fd, uint64_t address, size_t max)
{
    std::string text;
    while (text.size() < max && address != 0) {
        size_t to_page_end = 4096 - (address % 4096);
        char buf[4096];
        size_t want = std::min(to_page_end, max - text.size());
        ssize_t n = pread(mem_fd, buf, want, static_cast<off_t>(address));
        if (n <= 0)
            break;
        size_t len = strnlen(buf, static_cast<size_t>(n));
        text.append(buf, len);
        if (len < static_cast<size_t>(n))
            return text;
        address += static_cast<uint64_t>(n);
    }
    return text;
}

std::string link_of(const std::string& path)
{
    char buf[CERB_CALL_NAME];
    ssize_t n = readlink(path.c_str(), buf, sizeof(buf));
    return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

void copy_name(char (&to)[CERB_CALL_NAME], const std::string& text, uint32_t& flags)
{
    if (text.size() >= sizeof(to))
        flags |= CERB_CALL_TRUNCATED;
    size_t n = std::min(text.size(), sizeof(to) - 1);
    std::memcpy(to, text.data(), n);
    to[n] = 0;
}

struct CallNames {
    int dir[2];
    int path[2];
};

bool names_of(int nr, CallNames& names)
{
    switch (nr) {
#define CERB_CALL_CASE(name, number, d0, p0, d1, p1)                                                        \
    case number:                                                                                            \
        names = {{d0, d1}, {p0, p1}};                                                                       \
        return true;
        CERB_CALLS(CERB_CALL_CASE)
#undef CERB_CALL_CASE
    }
    return false;
}

// The observer's programs, verified once per boot and build: the pin group
// "observe" (<pin dir>/observe_<program>).
constexpr const char* observer_group = "observe";

struct ObserverPrograms {
    UniqueFd call_exit, cap_kprobe, cap_tracepoint;
};

// A pinned program of the group; none when the kernel did not load it.
UniqueFd open_program_pin(const char* program)
{
    std::string path = std::string(CERB_PIN_DIR) + "/" + observer_group + "_" + program;
    UniqueFd fd(bpf_obj_get(path.c_str()));
    if (!fd && errno != ENOENT)
        throw_errno("opening " + path);
    return fd;
}

// The group's programs, each got by its name in cerberus_observe.bpf.c.
template <class Get>
ObserverPrograms programs_by_name(Get get)
{
    return {get("cerb_call_exit"), get("cerb_cap_kprobe"), get("cerb_cap_check")};
}

struct SkeletonDeleter {
    void operator()(cerberus_observe* skeleton) const { cerberus_observe__destroy(skeleton); }
};

// A loaded program's descriptor, kept past its object (none when not loaded).
UniqueFd keep_program(bpf_program* prog)
{
    if (bpf_program__fd(prog) < 0)
        return UniqueFd();
    UniqueFd fd(fcntl(bpf_program__fd(prog), F_DUPFD_CLOEXEC, 3));
    if (!fd)
        throw_errno("keeping the call observer's program");
    return fd;
}

// Under PinDirLock.
ObserverPrograms load_and_pin()
{
    bpf_object_open_opts opts{};
    opts.sz = sizeof(opts);
    opts.pin_root_path = CERB_PIN_DIR;
    std::unique_ptr<cerberus_observe, SkeletonDeleter> skeleton(cerberus_observe__open_opts(&opts));
    if (!skeleton)
        throw_errno("opening the call observer's programs");
    auto* progs = &skeleton->progs;
    bpf_program__set_autoload(progs->cerb_cap_check, has_cap_tracepoint());
    if (int err = cerberus_observe__load(skeleton.get()))
        throw Error(std::string("the kernel refused to load the call observer: ") + errno_text(-err), -err);
    pin_group(observer_group, [&](const std::string& prefix) {
        bpf_program* prog;
        bpf_object__for_each_program(prog, skeleton->obj)
        {
            std::string path = prefix + bpf_program__name(prog);
            if (bpf_program__fd(prog) >= 0)
                check(bpf_obj_pin(bpf_program__fd(prog), path.c_str()), "pinning " + path);
        }
        return bpf_program__fd(progs->cerb_call_exit);
    });
    return programs_by_name(
        [&](const char* name) { return keep_program(bpf_object__find_program_by_name(skeleton->obj, name)); });
}

// The pinned programs, loaded and pinned first by whichever collector comes first.
ObserverPrograms observer_programs()
{
    if (!group_pinned(observer_group)) {
        PinDirLock lock;
        if (!group_pinned(observer_group)) // another collector may have pinned them while we waited
            return load_and_pin();
    }
    return programs_by_name(open_program_pin);
}

// The kernel's kprobe event source, as perf_event_open names it.
int kprobe_event_type()
{
    auto text = files::read_file_if_exists("/sys/bus/event_source/devices/kprobe/type");
    return text ? std::atoi(text->c_str()) : -1;
}

// prog on a kprobe at function's entry, on every CPU; false when the kernel has no kprobes there.
bool attach_kprobe(int prog, const char* function, std::vector<UniqueFd>& attachments)
{
    int type = kprobe_event_type();
    if (type < 0)
        return false;
    perf_event_attr attr{};
    attr.size = sizeof(attr);
    attr.type = static_cast<uint32_t>(type);
    attr.config1 = reinterpret_cast<uint64_t>(function);
    UniqueFd event(static_cast<int>(syscall(SYS_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC)));
    if (!event)
        return false;
    UniqueFd link(bpf_link_create(prog, event.get(), BPF_PERF_EVENT, nullptr));
    if (!link)
        return false;
    attachments.push_back(std::move(event));
    attachments.push_back(std::move(link));
    return true;
}

} // namespace

CallObserver CallObserver::attach()
{
    check_pinned_layouts();
    ObserverPrograms programs = observer_programs();
    CallObserver observer;
    UniqueFd exit_link(bpf_raw_tracepoint_open(nullptr, programs.call_exit.get()));
    if (!exit_link)
        throw_errno("attaching the call observer to the sys_exit tracepoint");
    observer.attachments_.push_back(std::move(exit_link));
    // A kprobe sees the check's options (a kernel's probe is not a use): taken where the kernel has kprobes.
    if (programs.cap_kprobe && attach_kprobe(programs.cap_kprobe.get(), "cap_capable", observer.attachments_)) {
        observer.capabilities_ = CapabilityChecks::kprobe;
    } else if (programs.cap_tracepoint) {
        UniqueFd link(bpf_raw_tracepoint_open(nullptr, programs.cap_tracepoint.get()));
        if (link) {
            observer.attachments_.push_back(std::move(link));
            observer.capabilities_ = CapabilityChecks::tracepoint;
        }
    }
    return observer;
}

ObserverSupport observer_support()
{
    // Once per process: a create asks for each backend it weighs.
    static const ObserverSupport support = [] {
        if (auto record = read_boot_record(support_record)) {
            try {
                auto j = nlohmann::json::parse(*record);
                return ObserverSupport{j.value("calls", false), j.value("why", ""),
                                       capability_checks(j.value("capabilities", ""))};
            } catch (const std::exception&) {
            }
        }
        ObserverSupport probed = try_observer();
        write_boot_record(support_record, nlohmann::json{{"calls", probed.calls},
                                                         {"why", probed.why},
                                                         {"capabilities", capability_name(probed.capabilities)}}
                                              .dump());
        return probed;
    }();
    return support;
}

cerb_call_event call_of_notification(const seccomp_notif& notification)
{
    cerb_call_event call{};
    const auto& data = notification.data;
    std::string proc = "/proc/" + std::to_string(notification.pid);
    call.pid = notification.pid;
    call.tid = notification.pid;
    call.nr = static_cast<uint32_t>(data.nr);
    for (int i = 0; i < 6; ++i)
        call.args[i] = data.args[i];
    std::string comm = files::read_file_if_exists(proc + "/comm").value_or("");
    if (!comm.empty() && comm.back() == '\n')
        comm.pop_back();
    std::memcpy(call.comm, comm.data(), std::min(comm.size(), sizeof(call.comm) - 1));
    CallNames names{};
    if (!names_of(data.nr, names))
        return call;
    UniqueFd mem(open((proc + "/mem").c_str(), O_RDONLY | O_CLOEXEC));
    if (!mem)
        return call;
    if (data.nr == CERB_NR_OPENAT2) {
        uint64_t how_flags = 0;
        if (pread(mem.get(), &how_flags, sizeof(how_flags), static_cast<off_t>(data.args[2])) == sizeof(how_flags))
            call.args[2] = how_flags;
    }
    for (int i = 0; i < 2; ++i) {
        cerb_call_name& name = call.names[i];
        int path = names.path[i], dir = names.dir[i];
        std::string text;
        if (path >= 0) {
            text = read_string(mem.get(), data.args[path], CERB_CALL_NAME);
            copy_name(name.path, text, call.flags);
            if (!text.empty() && text[0] == '/')
                continue;
        }
        int fd = dir >= 0 ? static_cast<int>(data.args[dir]) : CERB_AT_FDCWD;
        if (dir == CERB_ARG_NONE)
            continue;
        std::string base = fd == CERB_AT_FDCWD ? link_of(proc + "/cwd") : link_of(proc + "/fd/" + std::to_string(fd));
        copy_name(name.dir, base, call.flags);
    }
    return call;
}

} // namespace cerberus::kernel
