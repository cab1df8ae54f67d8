// SPDX-License-Identifier: Apache-2.0
// cerberus: global options, then a table dispatch to the subcommand.
#include "base/error.hpp"
#include "base/files.hpp"
#include "base/log.hpp"
#include "commands.hpp"
#include "options.hpp"
#include "process/sealed_exe.hpp"
#include "usage_error.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <cstring>
#include <filesystem>

using namespace cerberus;

namespace {

struct Command {
    const char* name;
    int (*run)(const RuntimeOptions&, const cli::Args&);
    const char* summary;
    bool hidden = false;            // run by the runtime itself, left out of the usage
    bool enters_container = false;  // puts a process of ours into a container (see sealed_exe.hpp)
    // runc's exec fails with 255, apart from every status its process may exit with.
    int failure_status = 1;
};

constexpr Command commands[] = {
    {"create", cli::cmd_create, "create a container", false, true},
    {"start", cli::cmd_start, "start a created container"},
    {"run", cli::cmd_run, "create and start a container", false, true},
    {"state", cli::cmd_state, "print the state of a container"},
    {"kill", cli::cmd_kill, "send a signal to a container"},
    {"delete", cli::cmd_delete, "delete a container"},
    {"list", cli::cmd_list, "list containers"},
    {"spec", cli::cmd_spec, "write a new config.json"},
    {"features", cli::cmd_features, "print the features the runtime supports"},
    {"exec", cli::cmd_exec, "run a new process inside a container", false, true, 255},
    {"ps", cli::cmd_ps, "list the processes of a container"},
    {"pause", cli::cmd_pause, "freeze every process of a container"},
    {"resume", cli::cmd_resume, "thaw a paused container"},
    {"update", cli::cmd_update, "change the resource limits of a container"},
    {"events", cli::cmd_events, "print a container's stats and OOM events, or its policy denials"},
    {"check", cli::cmd_check, "print what this host can enforce, backend by backend and rule by rule"},
    {"policy", cli::cmd_policy, "learn a policy from an audit-mode trail, or check a policy against one"},
    {"dashboard", cli::cmd_dashboard, "serve the live web view of every policed container's denials"},
    {"ask", cli::cmd_ask, "list, allow or deny the brokered calls policies ask about; list and revoke grants"},
    {"audit-collector", cli::cmd_audit_collector, "collect policy denials into the audit trails", true},
    {"dns-gate", cli::cmd_dns_gate, "answer the DNS queries of policed containers whose policies name hosts", true},
    {"command-broker", cli::cmd_command_broker, "run the host tools policed containers' commands ask for", true},
};

const std::vector<cli::OptionSpec> global_options = {
    {"root", 0, true},          {"log", 0, true},           {"log-format", 0, true},
    {"debug", 0, false},        {"systemd-cgroup", 0, false}, {"default-policy", 0, true},
    {"lock-policy", 0, false},  {"policy-dir", 0, true},    {"rootless", 0, true},
    {"audit-dir", 0, true},     {"enforcement", 0, true},
    {"criu", 0, true},          {"version", 'v', false},    {"help", 'h', false},
};

const Command* find_command(const std::string& name)
{
    for (const auto& c : commands)
        if (name == c.name)
            return &c;
    return nullptr;
}

void print_usage()
{
    std::printf("usage: cerberus [global options] COMMAND [options] ARGS\n\ncommands:\n");
    for (const auto& c : commands)
        if (!c.hidden)
            std::printf("  %-10s %s\n", c.name, c.summary);
    std::printf("\nglobal options: --root DIR (default /run/cerberus), --log FILE, --log-format text|json, --debug,\n"
                "  --systemd-cgroup, --default-policy FILE, --lock-policy, --policy-dir DIR,\n"
                "  --audit-dir DIR (default /var/log/cerberus),\n"
                "  --enforcement auto|bpf-lsm|fmod-ret|landlock (default auto: the BPF LSM, else landlock)\n");
}

// Errors go to stderr, and also to the --log file, whose last error line
// containerd and podman show their users.
bool logging_to_file = false;

void report_error(const std::string& message)
{
    if (logging_to_file)
        spdlog::error("{}", message);
    std::fprintf(stderr, "cerberus: %s\n", message.c_str());
}

} // namespace

int main(int argc, char** argv)
{
    cli::Args args(argv + 1, argv + argc);
    int failure_status = 1;
    try {
        cli::ParsedOptions global = cli::parse_options(args, global_options, true);
        std::string format = global.get("log-format", "text");
        if (format != "text" && format != "json")
            throw cli::UsageError("--log-format: expected text or json, got \"" + format + "\"");
        RuntimeOptions rt;
        // Absolute, as runc makes it: create changes directory before it is done with the state.
        rt.root = std::filesystem::absolute(global.get("root", rt.root)).lexically_normal().string();
        const Command* command = global.positional.empty() ? nullptr : find_command(global.positional[0]);
        if (command && command->enters_container) {
            // Before anything else is opened: the re-executed process starts over.
            files::make_dirs(rt.root, 0711);
            sealed_exe::reexec_sealed(argv, rt.root);
            sealed_exe::stop_being_dumpable();
        }
        logging_to_file = global.has("log");
        log::init(global.get("log"), format == "json" ? log::Format::json : log::Format::text, global.flag("debug"));
        if (global.flag("version")) {
            std::printf("cerberus version %s\nspec: 1.1.0\n", CERBERUS_VERSION);
            return 0;
        }
        if (global.positional.empty() || global.flag("help")) {
            print_usage();
            return global.positional.empty() && !global.flag("help") ? 1 : 0;
        }
        rt.systemd_cgroup = global.flag("systemd-cgroup");
        rt.default_policy = global.get("default-policy");
        rt.lock_policy = global.flag("lock-policy");
        rt.policy_dir = global.get("policy-dir", rt.policy_dir);
        rt.audit_dir = std::filesystem::absolute(global.get("audit-dir", rt.audit_dir)).lexically_normal().string();
        rt.enforcement = global.get("enforcement", rt.enforcement);
        if (rt.enforcement != "auto" && rt.enforcement != "bpf-lsm" && rt.enforcement != "landlock" &&
            rt.enforcement != "fmod-ret")
            throw cli::UsageError("--enforcement: expected auto, bpf-lsm, fmod-ret or landlock, got \"" +
                                  rt.enforcement + "\"");
        if (!command)
            throw cli::UsageError("no such command: " + global.positional[0]);
        failure_status = command->failure_status;
        return command->run(rt, cli::Args(global.positional.begin() + 1, global.positional.end()));
    } catch (const cli::HelpRequested& e) {
        std::printf("%s\n", e.what());
        return 0;
    } catch (const cli::UsageError& e) {
        report_error(e.what());
        return 1;
    } catch (const Error& e) {
        report_error(e.what());
    } catch (const std::exception& e) {
        report_error(std::string("internal error: ") + e.what());
    }
    return failure_status;
}
