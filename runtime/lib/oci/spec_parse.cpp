// SPDX-License-Identifier: Apache-2.0
#include "oci/spec_parse.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <nlohmann/json.hpp>

#include <limits>

using nlohmann::json;

namespace cerberus::spec {
namespace {

// A JSON object together with the path that leads to it, for error messages.
class Node {
public:
    Node(const json& value, std::string path) : value_(value), path_(std::move(path)) {}

    const json& value() const { return value_; }
    const std::string& path() const { return path_; }

    [[noreturn]] void fail(const std::string& message) const { throw Error(path_ + ": " + message, EINVAL); }

    bool has(const char* key) const { return value_.is_object() && value_.contains(key) && !value_.at(key).is_null(); }

    Node child(const char* key) const { return Node(value_.at(key), join(key)); }

    Node at(size_t index) const { return Node(value_.at(index), path_ + "[" + std::to_string(index) + "]"); }

    void expect_object() const
    {
        if (!value_.is_object())
            fail("expected an object");
    }

    void expect_array() const
    {
        if (!value_.is_array())
            fail("expected an array");
    }

    std::string as_string() const
    {
        if (!value_.is_string())
            fail("expected a string");
        return value_.get<std::string>();
    }

    bool as_bool() const
    {
        if (!value_.is_boolean())
            fail("expected a boolean");
        return value_.get<bool>();
    }

    template <typename T>
    T as_int() const
    {
        if (!value_.is_number_integer())
            fail("expected an integer");
        if constexpr (std::is_unsigned_v<T>) {
            if (value_.is_number_unsigned()) {
                auto v = value_.get<uint64_t>();
                if (v > std::numeric_limits<T>::max())
                    fail("value " + std::to_string(v) + " is out of range");
                return static_cast<T>(v);
            }
            auto v = value_.get<int64_t>();
            if (v < 0 || static_cast<uint64_t>(v) > std::numeric_limits<T>::max())
                fail("value " + std::to_string(v) + " is out of range");
            return static_cast<T>(v);
        } else {
            if (value_.is_number_unsigned() && value_.get<uint64_t>() > uint64_t(std::numeric_limits<T>::max()))
                fail("value is out of range");
            auto v = value_.get<int64_t>();
            if (v < std::numeric_limits<T>::min() || v > std::numeric_limits<T>::max())
                fail("value " + std::to_string(v) + " is out of range");
            return static_cast<T>(v);
        }
    }

    // Optional typed members: absent or null leaves the target untouched.
    void get(const char* key, std::string& out) const
    {
        if (has(key))
            out = child(key).as_string();
    }
    void get(const char* key, bool& out) const
    {
        if (has(key))
            out = child(key).as_bool();
    }
    template <typename T>
    void get(const char* key, std::optional<T>& out) const
    {
        if (!has(key))
            return;
        if constexpr (std::is_same_v<T, bool>)
            out = child(key).as_bool();
        else if constexpr (std::is_same_v<T, std::string>)
            out = child(key).as_string();
        else
            out = child(key).template as_int<T>();
    }
    template <typename T>
    void get_int(const char* key, T& out) const
    {
        if (has(key))
            out = child(key).template as_int<T>();
    }

    void get(const char* key, std::vector<std::string>& out) const
    {
        if (!has(key))
            return;
        Node list = child(key);
        list.expect_array();
        out.clear();
        for (size_t i = 0; i < list.value().size(); ++i)
            out.push_back(list.at(i).as_string());
    }

    void get(const char* key, std::map<std::string, std::string>& out) const
    {
        if (!has(key))
            return;
        Node map = child(key);
        map.expect_object();
        for (auto& [k, v] : map.value().items()) {
            if (!v.is_string())
                Node(v, map.join(k.c_str())).fail("expected a string");
            out[k] = v.get<std::string>();
        }
    }

    // Calls fn(Node) for each element of an optional array member.
    template <typename Fn>
    void each(const char* key, Fn&& fn) const
    {
        if (!has(key))
            return;
        Node list = child(key);
        list.expect_array();
        for (size_t i = 0; i < list.value().size(); ++i) {
            Node item = list.at(i);
            fn(item);
        }
    }

    std::string join(const char* key) const { return path_.empty() ? key : path_ + "." + key; }

private:
    const json& value_;
    std::string path_;
};

User parse_user(const Node& n)
{
    n.expect_object();
    User u;
    n.get_int("uid", u.uid);
    n.get_int("gid", u.gid);
    n.get("umask", u.umask);
    n.each("additionalGids", [&](const Node& g) { u.additional_gids.push_back(g.as_int<uint32_t>()); });
    return u;
}

Process parse_process(const Node& n)
{
    n.expect_object();
    Process p;
    n.get("terminal", p.terminal);
    if (n.has("consoleSize")) {
        Node c = n.child("consoleSize");
        c.expect_object();
        ConsoleSize size;
        c.get_int("height", size.height);
        c.get_int("width", size.width);
        p.console_size = size;
    }
    if (n.has("user"))
        p.user = parse_user(n.child("user"));
    n.get("args", p.args);
    n.get("env", p.env);
    n.get("cwd", p.cwd);
    if (n.has("capabilities")) {
        Node c = n.child("capabilities");
        c.expect_object();
        Capabilities caps;
        c.get("bounding", caps.bounding);
        c.get("effective", caps.effective);
        c.get("inheritable", caps.inheritable);
        c.get("permitted", caps.permitted);
        c.get("ambient", caps.ambient);
        p.capabilities = caps;
    }
    n.each("rlimits", [&](const Node& r) {
        r.expect_object();
        Rlimit limit;
        r.get("type", limit.type);
        r.get_int("hard", limit.hard);
        r.get_int("soft", limit.soft);
        p.rlimits.push_back(limit);
    });
    n.get("noNewPrivileges", p.no_new_privileges);
    n.get("apparmorProfile", p.apparmor_profile);
    n.get("oomScoreAdj", p.oom_score_adj);
    n.get("selinuxLabel", p.selinux_label);
    return p;
}

Hook parse_hook(const Node& n)
{
    n.expect_object();
    Hook h;
    n.get("path", h.path);
    n.get("args", h.args);
    n.get("env", h.env);
    n.get("timeout", h.timeout);
    return h;
}

Hooks hooks_from(const Node& n)
{
    n.expect_object();
    Hooks hooks;
    for (const auto& kind : hook_kinds)
        n.each(kind.name, [&](const Node& h) { (hooks.*kind.list).push_back(parse_hook(h)); });
    return hooks;
}

std::vector<IdMapping> parse_id_mappings(const Node& n, const char* key)
{
    std::vector<IdMapping> out;
    n.each(key, [&](const Node& m) {
        m.expect_object();
        IdMapping map;
        m.get_int("containerID", map.container_id);
        m.get_int("hostID", map.host_id);
        m.get_int("size", map.size);
        out.push_back(map);
    });
    return out;
}

std::optional<uint32_t> parse_file_mode(const Node& n)
{
    std::optional<uint32_t> mode;
    n.get("fileMode", mode);
    return mode;
}

BlockIoDevice parse_blkio_device(const Node& n)
{
    n.expect_object();
    BlockIoDevice d;
    n.get_int("major", d.major);
    n.get_int("minor", d.minor);
    n.get("weight", d.weight);
    n.get("leafWeight", d.leaf_weight);
    n.get_int("rate", d.rate);
    return d;
}

Resources parse_resources(const Node& n)
{
    n.expect_object();
    Resources r;
    n.each("devices", [&](const Node& d) {
        d.expect_object();
        DeviceRule rule;
        d.get("allow", rule.allow);
        d.get("type", rule.type);
        d.get("major", rule.major);
        d.get("minor", rule.minor);
        d.get("access", rule.access);
        r.devices.push_back(rule);
    });
    if (n.has("memory")) {
        Node m = n.child("memory");
        m.expect_object();
        MemoryResources mem;
        m.get("limit", mem.limit);
        m.get("reservation", mem.reservation);
        m.get("swap", mem.swap);
        m.get("kernel", mem.kernel);
        m.get("kernelTCP", mem.kernel_tcp);
        m.get("swappiness", mem.swappiness);
        m.get("disableOOMKiller", mem.disable_oom_killer);
        m.get("useHierarchy", mem.use_hierarchy);
        m.get("checkBeforeUpdate", mem.check_before_update);
        r.memory = mem;
    }
    if (n.has("cpu")) {
        Node c = n.child("cpu");
        c.expect_object();
        CpuResources cpu;
        c.get("shares", cpu.shares);
        c.get("quota", cpu.quota);
        c.get("burst", cpu.burst);
        c.get("period", cpu.period);
        c.get("realtimeRuntime", cpu.realtime_runtime);
        c.get("realtimePeriod", cpu.realtime_period);
        c.get("cpus", cpu.cpus);
        c.get("mems", cpu.mems);
        c.get("idle", cpu.idle);
        r.cpu = cpu;
    }
    if (n.has("pids")) {
        Node p = n.child("pids");
        p.expect_object();
        p.get("limit", r.pids_limit);
    }
    if (n.has("blockIO")) {
        Node b = n.child("blockIO");
        b.expect_object();
        BlockIoResources io;
        b.get("weight", io.weight);
        b.get("leafWeight", io.leaf_weight);
        auto devices = [&](const char* key, std::vector<BlockIoDevice>& out) {
            b.each(key, [&](const Node& d) { out.push_back(parse_blkio_device(d)); });
        };
        devices("weightDevice", io.weight_device);
        devices("throttleReadBpsDevice", io.throttle_read_bps);
        devices("throttleWriteBpsDevice", io.throttle_write_bps);
        devices("throttleReadIOPSDevice", io.throttle_read_iops);
        devices("throttleWriteIOPSDevice", io.throttle_write_iops);
        r.block_io = io;
    }
    n.each("hugepageLimits", [&](const Node& h) {
        h.expect_object();
        HugepageLimit limit;
        h.get("pageSize", limit.page_size);
        h.get_int("limit", limit.limit);
        r.hugepage_limits.push_back(limit);
    });
    n.get("unified", r.unified);
    return r;
}

Seccomp parse_seccomp(const Node& n)
{
    n.expect_object();
    Seccomp s;
    n.get("defaultAction", s.default_action);
    n.get("defaultErrnoRet", s.default_errno_ret);
    n.get("architectures", s.architectures);
    n.get("flags", s.flags);
    n.get("listenerPath", s.listener_path);
    n.get("listenerMetadata", s.listener_metadata);
    n.each("syscalls", [&](const Node& sc) {
        sc.expect_object();
        SeccompSyscall rule;
        sc.get("names", rule.names);
        sc.get("action", rule.action);
        sc.get("errnoRet", rule.errno_ret);
        sc.each("args", [&](const Node& a) {
            a.expect_object();
            SeccompArg arg;
            a.get_int("index", arg.index);
            a.get_int("value", arg.value);
            a.get_int("valueTwo", arg.value_two);
            a.get("op", arg.op);
            rule.args.push_back(arg);
        });
        s.syscalls.push_back(rule);
    });
    return s;
}

Linux parse_linux(const Node& n)
{
    n.expect_object();
    Linux l;
    n.each("namespaces", [&](const Node& ns) {
        ns.expect_object();
        Namespace entry;
        ns.get("type", entry.type);
        ns.get("path", entry.path);
        l.namespaces.push_back(entry);
    });
    l.uid_mappings = parse_id_mappings(n, "uidMappings");
    l.gid_mappings = parse_id_mappings(n, "gidMappings");
    n.each("devices", [&](const Node& d) {
        d.expect_object();
        Device dev;
        d.get("type", dev.type);
        d.get("path", dev.path);
        d.get_int("major", dev.major);
        d.get_int("minor", dev.minor);
        dev.file_mode = parse_file_mode(d);
        d.get("uid", dev.uid);
        d.get("gid", dev.gid);
        l.devices.push_back(dev);
    });
    n.get("cgroupsPath", l.cgroups_path);
    if (n.has("resources"))
        l.resources = parse_resources(n.child("resources"));
    n.get("rootfsPropagation", l.rootfs_propagation);
    n.get("maskedPaths", l.masked_paths);
    n.get("readonlyPaths", l.readonly_paths);
    n.get("sysctl", l.sysctl);
    if (n.has("seccomp"))
        l.seccomp = parse_seccomp(n.child("seccomp"));
    n.get("mountLabel", l.mount_label);
    return l;
}

} // namespace

Spec parse(const json& config)
{
    Node n(config, "");
    if (!config.is_object())
        throw Error("config.json: expected a JSON object", EINVAL);
    Spec s;
    n.get("ociVersion", s.oci_version);
    if (n.has("root")) {
        Node r = n.child("root");
        r.expect_object();
        r.get("path", s.root.path);
        r.get("readonly", s.root.readonly);
    }
    if (n.has("process"))
        s.process = parse_process(n.child("process"));
    n.get("hostname", s.hostname);
    n.get("domainname", s.domainname);
    n.each("mounts", [&](const Node& m) {
        m.expect_object();
        Mount mount;
        m.get("destination", mount.destination);
        m.get("type", mount.type);
        m.get("source", mount.source);
        m.get("options", mount.options);
        s.mounts.push_back(mount);
    });
    if (n.has("hooks"))
        s.hooks = hooks_from(n.child("hooks"));
    n.get("annotations", s.annotations);
    if (n.has("linux"))
        s.linux = parse_linux(n.child("linux"));
    return s;
}

Spec load_bundle(const std::string& bundle_dir)
{
    std::string file = bundle_dir + "/config.json";
    json config;
    try {
        config = json::parse(files::read_file(file));
    } catch (const json::exception& e) { // parse errors, and numbers too large to hold
        throw Error(file + ": invalid JSON: " + e.what(), EINVAL);
    }
    return with_context(file, [&] { return parse(config); });
}

Hooks parse_hooks(const json& hooks)
{
    return hooks_from(Node(hooks, "hooks"));
}

json hooks_json(const Hooks& hooks)
{
    json out = json::object();
    for (const auto& kind : hook_kinds) {
        for (const Hook& hook : hooks.*kind.list) {
            json entry = {{"path", hook.path}};
            if (!hook.args.empty())
                entry["args"] = hook.args;
            if (!hook.env.empty())
                entry["env"] = hook.env;
            if (hook.timeout)
                entry["timeout"] = *hook.timeout;
            out[kind.name].push_back(entry);
        }
    }
    return out;
}

const Namespace* Spec::find_namespace(const std::string& type) const
{
    if (!linux)
        return nullptr;
    for (const auto& ns : linux->namespaces)
        if (ns.type == type)
            return &ns;
    return nullptr;
}

} // namespace cerberus::spec
