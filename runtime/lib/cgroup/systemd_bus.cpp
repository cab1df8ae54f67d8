// SPDX-License-Identifier: Apache-2.0
#include "cgroup/systemd_bus.hpp"

#include "base/error.hpp"

#include <dlfcn.h>
#include <sys/stat.h>
#include <unistd.h>

#include <systemd/sd-bus.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstring>

namespace cerberus::cgroups::systemd {

namespace {

constexpr const char* manager_service = "org.freedesktop.systemd1";
constexpr const char* manager_path = "/org/freedesktop/systemd1";
constexpr const char* manager_interface = "org.freedesktop.systemd1.Manager";
constexpr const char* private_socket = "unix:path=/run/systemd/private";
constexpr auto job_timeout = std::chrono::seconds(30);

// The sd-bus functions used here, looked up in libsystemd.so.0 once.
#define CERBERUS_SD_BUS_FUNCTIONS(X)                                                                                   \
    X(sd_bus_new)                                                                                                      \
    X(sd_bus_set_address)                                                                                              \
    X(sd_bus_start)                                                                                                    \
    X(sd_bus_open_system)                                                                                              \
    X(sd_bus_flush_close_unref)                                                                                        \
    X(sd_bus_message_new_method_call)                                                                                  \
    X(sd_bus_message_append)                                                                                           \
    X(sd_bus_message_append_array)                                                                                     \
    X(sd_bus_message_open_container)                                                                                   \
    X(sd_bus_message_close_container)                                                                                  \
    X(sd_bus_message_read)                                                                                             \
    X(sd_bus_message_unref)                                                                                            \
    X(sd_bus_call)                                                                                                     \
    X(sd_bus_match_signal_async)                                                                                       \
    X(sd_bus_slot_unref)                                                                                               \
    X(sd_bus_process)                                                                                                  \
    X(sd_bus_wait)                                                                                                     \
    X(sd_bus_error_free)                                                                                               \
    X(sd_bus_error_has_name)

struct Libsystemd {
#define CERBERUS_SD_MEMBER(name) decltype(&::name) name = nullptr;
    CERBERUS_SD_BUS_FUNCTIONS(CERBERUS_SD_MEMBER)
#undef CERBERUS_SD_MEMBER
};

const Libsystemd& libsystemd()
{
    static const Libsystemd loaded = [] {
        // Never closed: sd-bus objects may outlive any one caller.
        void* handle = ::dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
        if (!handle)
            throw Error(std::string("--systemd-cgroup: cannot load libsystemd (install libsystemd0): ") + ::dlerror(),
                        ENOENT);
        Libsystemd lib;
#define CERBERUS_SD_LOOKUP(name)                                                                                       \
    lib.name = reinterpret_cast<decltype(&::name)>(::dlsym(handle, #name));                                           \
    if (!lib.name)                                                                                                     \
        throw Error("--systemd-cgroup: libsystemd.so.0 has no " #name, ENOSYS);
        CERBERUS_SD_BUS_FUNCTIONS(CERBERUS_SD_LOOKUP)
#undef CERBERUS_SD_LOOKUP
        return lib;
    }();
    return loaded;
}

// Owners of what sd-bus hands out.
struct Message {
    sd_bus_message* m = nullptr;
    ~Message()
    {
        if (m)
            libsystemd().sd_bus_message_unref(m);
    }
};

struct BusError {
    sd_bus_error e = SD_BUS_ERROR_NULL;
    ~BusError() { libsystemd().sd_bus_error_free(&e); }
    bool is(const char* name) const { return libsystemd().sd_bus_error_has_name(&e, name) > 0; }
    std::string text() const
    {
        std::string name = e.name ? e.name : "unknown error";
        return e.message ? std::string(e.message) + " (" + name + ")" : name;
    }
};

struct Slot {
    sd_bus_slot* s = nullptr;
    ~Slot()
    {
        if (s)
            libsystemd().sd_bus_slot_unref(s);
    }
};

// Throws for a negative sd-bus return value.
void check_sd(int rc, const std::string& what)
{
    if (rc < 0)
        throw_errno(what, -rc);
}

void append_property(sd_bus_message* m, const UnitProperty& property)
{
    const Libsystemd& sd = libsystemd();
    const std::string what = "sd-bus: appending property " + property.name;
    check_sd(sd.sd_bus_message_open_container(m, 'r', "sv"), what);
    check_sd(sd.sd_bus_message_append(m, "s", property.name.c_str()), what);
    std::visit(
        [&](const auto& value) {
            using T = std::decay_t<decltype(value)>;
            if constexpr (std::is_same_v<T, bool>) {
                check_sd(sd.sd_bus_message_append(m, "v", "b", static_cast<int>(value)), what);
            } else if constexpr (std::is_same_v<T, uint64_t>) {
                check_sd(sd.sd_bus_message_append(m, "v", "t", value), what);
            } else if constexpr (std::is_same_v<T, std::string>) {
                check_sd(sd.sd_bus_message_append(m, "v", "s", value.c_str()), what);
            } else if constexpr (std::is_same_v<T, std::vector<uint8_t>>) {
                check_sd(sd.sd_bus_message_open_container(m, 'v', "ay"), what);
                check_sd(sd.sd_bus_message_append_array(m, 'y', value.data(), value.size()), what);
                check_sd(sd.sd_bus_message_close_container(m), what);
            } else if constexpr (std::is_same_v<T, std::vector<uint32_t>>) {
                check_sd(sd.sd_bus_message_open_container(m, 'v', "au"), what);
                check_sd(sd.sd_bus_message_append_array(m, 'u', value.data(), value.size() * sizeof(uint32_t)), what);
                check_sd(sd.sd_bus_message_close_container(m), what);
            } else {
                check_sd(sd.sd_bus_message_open_container(m, 'v', "a(ss)"), what);
                check_sd(sd.sd_bus_message_open_container(m, 'a', "(ss)"), what);
                for (const auto& [device, access] : value)
                    check_sd(sd.sd_bus_message_append(m, "(ss)", device.c_str(), access.c_str()), what);
                check_sd(sd.sd_bus_message_close_container(m), what);
                check_sd(sd.sd_bus_message_close_container(m), what);
            }
        },
        property.value);
    check_sd(sd.sd_bus_message_close_container(m), what);
}

void append_properties(sd_bus_message* m, const std::vector<UnitProperty>& properties)
{
    const Libsystemd& sd = libsystemd();
    check_sd(sd.sd_bus_message_open_container(m, 'a', "(sv)"), "sd-bus: appending properties");
    for (const auto& property : properties)
        append_property(m, property);
    check_sd(sd.sd_bus_message_close_container(m), "sd-bus: appending properties");
}

// What JobRemoved said about the job being waited for.
struct JobWait {
    std::string job;
    bool removed = false;
    std::string result;
};

int on_job_removed(sd_bus_message* m, void* userdata, sd_bus_error*)
{
    auto* wait = static_cast<JobWait*>(userdata);
    uint32_t id = 0;
    const char *job = nullptr, *unit = nullptr, *result = nullptr;
    if (libsystemd().sd_bus_message_read(m, "uoss", &id, &job, &unit, &result) < 0)
        return 0;
    if (!wait->job.empty() && wait->job == job) {
        wait->removed = true;
        wait->result = result;
    }
    return 0;
}

// A method call on the manager object; the failure, if any, is left in error.
template <typename Fill>
bool call_manager(sd_bus* bus, const char* method, Fill&& fill, BusError& error, Message& reply)
{
    const Libsystemd& sd = libsystemd();
    Message call;
    check_sd(sd.sd_bus_message_new_method_call(bus, &call.m, manager_service, manager_path, manager_interface, method),
             std::string("sd-bus: calling ") + method);
    fill(call.m);
    return sd.sd_bus_call(bus, call.m, 0, &error.e, &reply.m) >= 0;
}

// Calls a manager method that queues a job for the unit (StartTransientUnit,
// StopUnit) and waits for JobRemoved. Returns false with error set when the call
// itself fails; throws when the job does not end "done" in time.
template <typename Fill>
bool run_job(sd_bus* bus, bool direct, const char* method, const std::string& unit, Fill&& fill, BusError& error,
             const char* doing)
{
    const Libsystemd& sd = libsystemd();
    const std::string what = std::string("systemd ") + method + " " + unit;
    // Installed before the call: JobRemoved may arrive before the reply is read.
    // Signals received meanwhile are queued and dispatched by sd_bus_process below.
    JobWait wait;
    Slot slot;
    check_sd(sd.sd_bus_match_signal_async(bus, &slot.s, direct ? nullptr : manager_service, manager_path,
                                          manager_interface, "JobRemoved", on_job_removed, nullptr, &wait),
             "sd-bus: matching JobRemoved");
    Message reply;
    if (!call_manager(bus, method, fill, error, reply))
        return false;
    const char* job = nullptr;
    check_sd(sd.sd_bus_message_read(reply.m, "o", &job), what + ": reading the job");
    wait.job = job;

    auto deadline = std::chrono::steady_clock::now() + job_timeout;
    while (!wait.removed) {
        int rc = sd.sd_bus_process(bus, nullptr);
        check_sd(rc, what + ": waiting for the job");
        if (rc > 0)
            continue;
        auto left = std::chrono::duration_cast<std::chrono::microseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            throw Error("timed out after " + std::to_string(job_timeout.count()) + " s waiting for systemd to finish " +
                            doing + " unit " + unit,
                        ETIMEDOUT);
        check_sd(sd.sd_bus_wait(bus, static_cast<uint64_t>(left.count())), what + ": waiting for the job");
    }
    if (wait.result != "done")
        throw Error(std::string("systemd failed ") + doing + " unit " + unit + ": its job ended \"" + wait.result +
                        "\" (see journalctl -u " + unit + ")",
                    EIO);
    return true;
}

} // namespace

Bus Bus::connect()
{
    struct stat st {};
    // sd_booted(): systemd made this directory if it is the init.
    if (::lstat("/run/systemd/system", &st) != 0 || !S_ISDIR(st.st_mode))
        throw Error("--systemd-cgroup: systemd is not running on this host (no /run/systemd/system); "
                    "run without --systemd-cgroup to use the cgroupfs driver",
                    ENOENT);
    if (uid_t euid = ::geteuid(); euid != 0)
        throw Error("--systemd-cgroup: rootless containers (uid " + std::to_string(euid) +
                        ") are not supported: cerberus asks systemd's system manager for scopes, as root",
                    EPERM);
    const Libsystemd& sd = libsystemd();
    // As systemctl does for root: PID 1 itself on its private socket, without the bus daemon in between.
    sd_bus* bus = nullptr;
    check_sd(sd.sd_bus_new(&bus), "sd-bus: sd_bus_new");
    int rc = sd.sd_bus_set_address(bus, private_socket);
    if (rc >= 0)
        rc = sd.sd_bus_start(bus);
    if (rc >= 0)
        return Bus(bus, true);
    sd.sd_bus_flush_close_unref(bus);
    bus = nullptr;
    int direct_error = -rc;
    rc = sd.sd_bus_open_system(&bus);
    if (rc < 0)
        throw_errno(std::string("--systemd-cgroup: cannot connect to systemd (/run/systemd/private: ") +
                        std::strerror(direct_error) + "; the system bus)",
                    -rc);
    return Bus(bus, false);
}

Bus::Bus(Bus&& other) noexcept : bus_(std::exchange(other.bus_, nullptr)), direct_(other.direct_) {}

Bus::~Bus()
{
    if (bus_)
        libsystemd().sd_bus_flush_close_unref(bus_);
}

void Bus::start_unit(const std::string& unit, const std::vector<UnitProperty>& properties)
{
    const Libsystemd& sd = libsystemd();
    auto fill = [&](sd_bus_message* m) {
        check_sd(sd.sd_bus_message_append(m, "ss", unit.c_str(), "fail"), "sd-bus: appending the unit name");
        append_properties(m, properties);
        check_sd(sd.sd_bus_message_append(m, "a(sa(sv))", 0), "sd-bus: appending the auxiliary units");
    };
    auto start = [&](BusError& error) {
        try {
            return run_job(bus_, direct_, "StartTransientUnit", unit, fill, error, "starting");
        } catch (const Error&) {
            // The unit was made but did not start in time or failed: leave none behind.
            try {
                stop_unit(unit);
            } catch (const Error& e) {
                spdlog::warn("{}", e.what());
            }
            throw;
        }
    };
    BusError error;
    if (start(error))
        return;
    if (!error.is("org.freedesktop.systemd1.UnitExists"))
        throw Error("systemd StartTransientUnit " + unit + ": " + error.text(), EIO);
    // Perhaps a failed unit of an earlier container of this name: reset it and try once more.
    BusError reset_error;
    Message reply;
    call_manager(bus_, "ResetFailedUnit", [&](sd_bus_message* m) {
        check_sd(sd.sd_bus_message_append(m, "s", unit.c_str()), "sd-bus: appending the unit name");
    }, reset_error, reply);
    BusError retry_error;
    if (!start(retry_error))
        throw Error("systemd StartTransientUnit " + unit + ": " + retry_error.text(), EEXIST);
}

void Bus::set_properties(const std::string& unit, const std::vector<UnitProperty>& properties)
{
    const Libsystemd& sd = libsystemd();
    BusError error;
    Message reply;
    bool ok = call_manager(bus_, "SetUnitProperties", [&](sd_bus_message* m) {
        check_sd(sd.sd_bus_message_append(m, "sb", unit.c_str(), 1), "sd-bus: appending the unit name");
        append_properties(m, properties);
    }, error, reply);
    if (!ok)
        throw Error("systemd SetUnitProperties " + unit + ": " + error.text(),
                    error.is("org.freedesktop.systemd1.NoSuchUnit") ? ENOENT : EIO);
}

void Bus::stop_unit(const std::string& unit)
{
    const Libsystemd& sd = libsystemd();
    auto name = [&](sd_bus_message* m) {
        check_sd(sd.sd_bus_message_append(m, "s", unit.c_str()), "sd-bus: appending the unit name");
    };
    BusError error;
    bool stopped = run_job(bus_, direct_, "StopUnit", unit, [&](sd_bus_message* m) {
        check_sd(sd.sd_bus_message_append(m, "ss", unit.c_str(), "replace"), "sd-bus: appending the unit name");
    }, error, "stopping");
    if (!stopped && !error.is("org.freedesktop.systemd1.NoSuchUnit"))
        throw Error("systemd StopUnit " + unit + ": " + error.text(), EIO);
    // A scope whose processes were OOM-killed ends "failed" and would stay listed.
    BusError reset_error;
    Message reply;
    if (!call_manager(bus_, "ResetFailedUnit", name, reset_error, reply) &&
        !reset_error.is("org.freedesktop.systemd1.NoSuchUnit"))
        throw Error("systemd ResetFailedUnit " + unit + ": " + reset_error.text(), EIO);
}

UnitGuard::~UnitGuard()
{
    if (!bus_)
        return;
    try {
        bus_->stop_unit(unit_);
    } catch (const Error& e) {
        spdlog::warn("stopping systemd unit {} after a failed create: {}", unit_, e.what());
    }
}

} // namespace cerberus::cgroups::systemd
