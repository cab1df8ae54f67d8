#include "container/state.hpp"

#include "base/error.hpp"
#include "cgroup/cgroup.hpp"
#include "base/files.hpp"

#include <dirent.h>
#include <fcntl.h>
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

ContainerDir::ContainerDir(std::string path, UniqueFd lock) : path_(std::move(path)), lock_(std::move(lock)) {}

ContainerState ContainerDir::load() const
{
    std::string file = path_ + "/state.json";
    json j;
    try {
        j = json::parse(files::read_file(file));
    } catch (const json::exception& e) {
        throw Error(file + ": " + e.what(), EINVAL);
    }
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
    s.hooks_json = j.at("hooks");
    return s;
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
        {"hooks", s.hooks_json},
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
    DIR* dir = ::opendir(root_.c_str());
    if (!dir)
        return ids;
    while (struct dirent* e = ::readdir(dir)) {
        std::string name = e->d_name;
        if (name != "." && name != ".." && files::exists(root_ + "/" + name + "/state.json"))
            ids.push_back(name);
    }
    ::closedir(dir);
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

Status current_status(const ContainerState& s, const std::string& fifo_path)
{
    if (s.creating)
        return Status::creating;
    if (!process_matches(s))
        return Status::stopped;
    // Frozen first: a created container can be paused too.
    if (!s.cgroup_path.empty() && cgroups::Cgroup::open(s.cgroup_path).frozen())
        return Status::paused;
    return files::exists(fifo_path) ? Status::created : Status::running;
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
