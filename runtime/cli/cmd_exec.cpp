// SPDX-License-Identifier: Apache-2.0
// exec: `cerberus exec [options] ID COMMAND [ARGS...]` or `--process FILE`;
// in the foreground, waits and exits with the process's status.
#include "commands.hpp"
#include "container/exec.hpp"
#include "options.hpp"
#include "terminal_proxy.hpp"
#include "usage_error.hpp"
#include "wait_process.hpp"

#include <algorithm>

namespace cerberus::cli {
namespace {

const std::vector<OptionSpec> exec_options = {
    {"process", 'p', true},        {"tty", 't', false},          {"console-socket", 0, true},
    {"detach", 'd', false},        {"pid-file", 0, true},        {"env", 'e', true},
    {"cwd", 0, true},              {"user", 'u', true},          {"additional-gids", 'g', true},
    {"cap", 'c', true},            {"no-new-privs", 0, false},   {"preserve-fds", 0, true},
    {"apparmor", 0, true},         {"process-label", 0, true},   {"ignore-paused", 0, false},
    {"cgroup", 0, true},
};

uint32_t parse_id(const std::string& text, const char* what)
{
    try {
        size_t used = 0;
        unsigned long v = std::stoul(text, &used);
        if (used == text.size() && v <= UINT32_MAX && text[0] != '-')
            return static_cast<uint32_t>(v);
    } catch (const std::exception&) {
    }
    throw UsageError(std::string("parsing ") + text + " as int for " + what + " failed");
}

// --env NAME=VALUE replaces the config's NAME, or is added after it.
void set_env(std::vector<std::string>& env, const std::string& entry)
{
    std::string name = entry.substr(0, entry.find('='));
    auto same = std::find_if(env.begin(), env.end(),
                             [&](const std::string& e) { return e.substr(0, e.find('=')) == name; });
    if (same != env.end())
        *same = entry;
    else
        env.push_back(entry);
}

// runc's rule: the config's process, changed by the flags given.
spec::Process process_from_flags(const RuntimeOptions& rt, const ParsedOptions& opts)
{
    spec::Process p = container::config_process(rt, opts.positional[0]);
    p.args.assign(opts.positional.begin() + 1, opts.positional.end());
    p.cwd = opts.get("cwd", p.cwd);
    p.apparmor_profile = opts.get("apparmor", p.apparmor_profile);
    p.selinux_label = opts.get("process-label", p.selinux_label);
    for (const auto& entry : opts.get_all("env"))
        set_env(p.env, entry);
    p.terminal = opts.flag("tty");
    if (opts.has("no-new-privs"))
        p.no_new_privileges = opts.flag("no-new-privs");
    if (std::string user = opts.get("user"); !user.empty()) {
        size_t colon = user.find(':');
        p.user.uid = parse_id(user.substr(0, colon), "uid");
        if (colon != std::string::npos)
            p.user.gid = parse_id(user.substr(colon + 1), "gid");
    }
    for (const auto& gid : opts.get_all("additional-gids"))
        p.user.additional_gids.push_back(parse_id(gid, "additional-gids"));
    if (auto caps = opts.get_all("cap"); !caps.empty()) {
        // Not inheritable, nor ambient: a file's capabilities must not grow from them.
        spec::Capabilities& sets = p.capabilities.emplace(p.capabilities.value_or(spec::Capabilities{}));
        for (const auto& cap : caps)
            for (auto* set : {&sets.bounding, &sets.effective, &sets.permitted})
                set->push_back(cap);
    }
    return p;
}

} // namespace

int cmd_exec(const RuntimeOptions& rt, const Args& args)
{
    // Options end at the container id: the command's own flags follow it.
    ParsedOptions opts = parse_options(args, exec_options, true);
    const char* usage = "cerberus exec [options] ID COMMAND [ARGS...] | cerberus exec [options] --process FILE ID";
    expect_positional(opts, 1, SIZE_MAX, usage);
    container::ExecOptions exec;
    exec.id = opts.positional[0];
    if (opts.has("process"))
        expect_positional(opts, 1, 1, usage);
    exec.process = opts.has("process") ? container::load_process_file(opts.get("process"))
                                       : process_from_flags(rt, opts);
    exec.console_socket = opts.get("console-socket");
    exec.pid_file = opts.get("pid-file");
    exec.preserve_fds = opts.get_int("preserve-fds", 0);
    exec.ignore_paused = opts.flag("ignore-paused");
    exec.sub_cgroups = cgroups::parse_sub_cgroups(opts.get_all("cgroup"));
    // In the foreground without --console-socket, the terminal comes back to us, as for run.
    ConsoleChannel console;
    if (exec.process.terminal && exec.console_socket.empty() && !opts.flag("detach")) {
        console = make_console_channel();
        exec.console_fd = console.container_end.get();
    }
    pid_t pid = container::exec(rt, exec);
    if (opts.flag("detach"))
        return 0;
    UniqueFd master = console.runtime_end ? receive_master(console.runtime_end.get()) : UniqueFd();
    return master ? proxy_terminal_and_wait(pid, master.get()) : wait_forwarding_signals(pid);
}

} // namespace cerberus::cli
