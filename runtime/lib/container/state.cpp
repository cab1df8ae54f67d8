// SPDX-License-Identifier: Apache-2.0
#include "container/state.hpp"

#include "base/files.hpp"
#include "cgroup/cgroup.hpp"
#include "oci/spec_parse.hpp"
#include "process/capabilities.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <ctime>
#include <filesystem>

using nlohmann::json;

namespace cerberus::state {
namespace {

UniqueFd lock_dir(const std::string& path)
{
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd)
        return fd;
    if (::flock(fd.get(), LOCK_EX) != 0)
        throw_errno("lock " + path);
    return fd;
}

json constraints_json(const launch::ProcessConstraints& forced)
{
    json caps = json::array();
    for (unsigned cap = 0; cap < 64; ++cap)
        if (forced.forbidden_capabilities & (uint64_t{1} << cap))
            caps.push_back(capabilities::describe(cap));
    return {{"noNewPrivileges", forced.no_new_privileges},
            {"forbiddenCapabilities", caps},
            {"defaultEnv", forced.default_env}};
}

launch::ProcessConstraints constraints_from_json(const json& j)
{
    launch::ProcessConstraints forced;
    forced.no_new_privileges = j.at("noNewPrivileges");
    for (const std::string name : j.at("forbiddenCapabilities")) {
        auto cap = capabilities::capability_number(name);
        if (!cap)
            throw Error("forced.forbiddenCapabilities: unknown capability \"" + name + "\"", EINVAL);
        forced.forbidden_capabilities |= uint64_t{1} << *cap;
    }
    forced.default_env = j.value("defaultEnv", std::vector<std::string>{}); // absent in states written before it
    return forced;
}

// The words after "cannot X a container that is": runc's spelling of a status.
std::string described(Status status)
{
    return status == Status::creating ? "being created" : to_string(status);
}

} // namespace

const char* to_string(Status s)
{
    switch (s) {
    case Status::creating: return "creating";
    case Status::created: return "created";
    case Status::running: return "running";
    case Status::paused: return "paused";
    case Status::stopped: return "stopped";
    }
    return "unknown";
}

bool allows(Status status, Operation op)
{
    switch (op) {
    case Operation::start: return status.can_start();
    case Operation::kill: return status.can_kill();
    case Operation::pause: return status.can_pause();
    case Operation::resume: return status.can_resume();
    case Operation::update: return status.can_update();
    case Operation::remove: return status.can_delete();
    case Operation::exec: return status.can_exec();
    case Operation::watch: return status.can_watch();
    }
    return false;
}

Error refusal(Operation op, Status status, const std::string& id)
{
    int err = status == Status::stopped ? ESRCH : EBUSY;
    auto cannot = [&](const std::string& verb) {
        return Error("cannot " + verb + " a container that is " + described(status), err);
    };
    switch (op) {
    case Operation::start:
        if (status == Status::stopped)
            return Error("cannot start a container that has stopped", err);
        if (status == Status::running)
            return Error("cannot start an already running container", err);
        return Error(std::string("cannot start a container in the ") + to_string(status) + " state", err);
    case Operation::kill:
    case Operation::pause:
    case Operation::update: return Error("container not running", err);
    case Operation::resume: return Error("container not paused", err);
    case Operation::remove:
        return Error("cannot delete container " + id + " that is not stopped: " + to_string(status), err);
    case Operation::exec:
        if (status == Status::stopped || status == Status::paused)
            return Error(std::string("cannot exec in a ") + to_string(status) + " container" +
                             (status == Status::paused ? " (use --ignore-paused to override)" : ""),
                         err);
        return cannot("exec in");
    case Operation::watch: return Error("container with id " + id + " is not running", err);
    }
    return cannot("act on");
}

ContainerDir::ContainerDir(std::string path, UniqueFd lock) : path_(std::move(path)), lock_(std::move(lock)) {}

ContainerState ContainerDir::load() const
{
    std::string file = path_ + "/state.json";
    try {
        json j = json::parse(files::read_file(file));
        ContainerState s;
        s.id = j.at("id");
        s.bundle = j.at("bundle");
        s.rootfs = j.at("rootfs");
        s.oci_version = j.at("ociVersion");
        s.pid = j.at("pid");
        s.pid_start_time = j.at("pidStartTime");
        s.created = j.at("created");
        s.annotations = j.at("annotations").get<std::map<std::string, std::string>>();
        s.cgroup_path = j.at("cgroupPath");
        s.systemd_unit = j.value("systemdUnit", "");
        s.creating = j.at("creating");
        s.has_policy = j.at("hasPolicy");
        s.cgroup_id = j.at("cgroupId");
        s.hooks = spec::parse_hooks(j.at("hooks"));
        s.forced = constraints_from_json(j.at("forced"));
        s.enforcement = j.value("enforcement", "");
        s.pin_dir = j.value("pinDir", "");
        return s;
    } catch (const json::exception& e) {
        throw Error(file + ": " + e.what(), EINVAL);
    } catch (const Error& e) {
        throw e.wrap(file);
    }
}

void ContainerDir::save(const ContainerState& s) const
{
    json j = {
        {"id", s.id},
        {"bundle", s.bundle},
        {"rootfs", s.rootfs},
        {"ociVersion", s.oci_version},
        {"pid", s.pid},
        {"pidStartTime", s.pid_start_time},
        {"created", s.created},
        {"annotations", s.annotations},
        {"cgroupPath", s.cgroup_path},
        {"systemdUnit", s.systemd_unit},
        {"creating", s.creating},
        {"hasPolicy", s.has_policy},
        {"cgroupId", s.cgroup_id},
        {"hooks", spec::hooks_json(s.hooks)},
        {"forced", constraints_json(s.forced)},
        {"enforcement", s.enforcement},
        {"pinDir", s.pin_dir},
    };
    files::write_file_atomic(path_ + "/state.json", j.dump());
}

void ContainerDir::remove()
{
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    if (ec)
        throw Error("removing state directory " + path_ + ": " + ec.message(), ec.value());
}

UniqueFd ContainerDir::make_exec_fifo() const
{
    std::string fifo = fifo_path();
    // Writable by all: the init opens it after switching to the process's user.
    if (::mkfifo(fifo.c_str(), 0622) != 0 || ::chmod(fifo.c_str(), 0622) != 0)
        throw_errno("mkfifo " + fifo);
    UniqueFd fd(::open(fifo.c_str(), O_PATH | O_CLOEXEC));
    if (!fd)
        throw_errno("open " + fifo);
    return fd;
}

bool ContainerDir::has_exec_fifo() const
{
    return files::exists(fifo_path());
}

// Opening exec.fifo for reading lets the init's blocked open complete; its
// byte says it is going, then end of file says it has exec'd (the write end
// closes on exec) or died.
void ContainerDir::release_init(const ContainerState& s) const
{
    std::string fifo_file = fifo_path();
    UniqueFd fifo(::open(fifo_file.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC));
    if (!fifo)
        throw_errno("open " + fifo_file);
    for (bool released = false;;) {
        struct pollfd p = {fifo.get(), POLLIN, 0};
        int rc = ::poll(&p, 1, 100);
        if (rc < 0 && errno != EINTR)
            throw_errno("poll " + fifo_file);
        char byte;
        ssize_t n = rc > 0 ? ::read(fifo.get(), &byte, 1) : -1;
        if (n == 1)
            released = true;
        else if (n == 0 && released)
            break;
        else if (!released && !process_matches(s))
            throw Error("container init exited before start", ESRCH);
    }
    if (::unlink(fifo_file.c_str()) != 0)
        throw_errno("remove " + fifo_file);
}

Store::Store(std::string root) : root_(std::move(root)) {}

ContainerDir Store::create(const std::string& id) const
{
    validate_id(id);
    files::make_dirs(root_, 0711);
    std::string path = root_ + "/" + id;
    if (::mkdir(path.c_str(), 0711) != 0) {
        if (errno == EEXIST)
            throw Error("container \"" + id + "\" already exists", EEXIST);
        throw_errno("mkdir " + path);
    }
    UniqueFd lock = lock_dir(path);
    if (!lock)
        throw_errno("open " + path);
    return ContainerDir(path, std::move(lock));
}

ContainerDir Store::open(const std::string& id, Access access) const
{
    validate_id(id);
    std::string path = root_ + "/" + id;
    UniqueFd lock = access == Access::modify ? lock_dir(path) : UniqueFd(::open(path.c_str(), O_PATH | O_CLOEXEC));
    // runc's words after the id: Docker and containerd take "container does
    // not exist" in a runtime error for "not found".
    if (!lock || !files::exists(path + "/state.json"))
        throw Error("\"" + id + "\": container does not exist", ENOENT);
    return ContainerDir(path, std::move(lock));
}

std::vector<std::string> Store::list() const
{
    std::vector<std::string> ids;
    for (const auto& entry : files::list_dir(root_))
        if (files::exists(root_ + "/" + entry.name + "/state.json"))
            ids.push_back(entry.name);
    std::sort(ids.begin(), ids.end());
    return ids;
}

void validate_id(const std::string& id)
{
    bool ok = !id.empty() && id != "." && id != ".." && id.size() <= 1024;
    for (char c : id)
        ok = ok && (isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '+' || c == '-' || c == '.');
    if (!ok)
        throw Error("invalid container id \"" + id + "\"", EINVAL);
}

unsigned long long process_start_time(pid_t pid)
{
    if (pid <= 0)
        return 0;
    std::string stat;
    try {
        stat = files::read_file("/proc/" + std::to_string(pid) + "/stat");
    } catch (const Error&) {
        return 0;
    }
    // Fields after the command name, which is in parentheses and may hold spaces.
    size_t close = stat.rfind(')');
    if (close == std::string::npos || close + 2 >= stat.size())
        return 0;
    char state = stat[close + 2];
    if (state == 'Z' || state == 'X')
        return 0;
    const char* p = stat.c_str() + close + 2;
    for (int field = 3; field < 22; ++field) {
        p = strchr(p, ' ');
        if (!p)
            return 0;
        ++p;
    }
    return strtoull(p, nullptr, 10);
}

bool process_matches(const ContainerState& s)
{
    return s.pid > 0 && process_start_time(s.pid) == s.pid_start_time;
}

Status current_status(const ContainerState& s, const ContainerDir& dir)
{
    if (s.creating)
        return Status::creating;
    if (!process_matches(s))
        return Status::stopped;
    // Frozen first: a created container can be paused too.
    if (!s.cgroup_path.empty() && cgroups::Cgroup::open(s.cgroup_path).frozen())
        return Status::paused;
    return dir.has_exec_fifo() ? Status::created : Status::running;
}

std::string oci_state_json(const ContainerState& s, Status status)
{
    json j = {
        {"ociVersion", s.oci_version},
        {"id", s.id},
        {"status", to_string(status)},
        {"bundle", s.bundle},
    };
    if (status != Status::stopped)
        j["pid"] = s.pid;
    else
        j["pid"] = 0;
    if (!s.annotations.empty())
        j["annotations"] = s.annotations;
    return j.dump();
}

std::string rfc3339_now()
{
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    ::gmtime_r(&ts.tv_sec, &tm);
    char buf[64];
    size_t n = ::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
    ::snprintf(buf + n, sizeof buf - n, ".%09ldZ", ts.tv_nsec);
    return buf;
}

} // namespace cerberus::state
