// SPDX-License-Identifier: Apache-2.0
// create, start, kill, delete.
#include "commands.hpp"
#include "create_flags.hpp"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <string>

namespace cerberus::cli {

const std::vector<OptionSpec> create_options = {
    {"bundle", 'b', true},      {"console-socket", 0, true}, {"pid-file", 0, true},
    {"no-pivot", 0, false},     {"no-new-keyring", 0, false}, {"preserve-fds", 0, true},
    {"detach", 'd', false},     {"keep", 0, false},
};

namespace {

// The fds systemd's socket activation passed to this very process (they
// are not ours when LISTEN_PID names another).
int activation_fds()
{
    const char* fds = std::getenv("LISTEN_FDS");
    const char* pid = std::getenv("LISTEN_PID");
    if (!fds || !pid || std::to_string(::getpid()) != pid)
        return 0;
    return std::max(0, std::atoi(fds));
}

} // namespace

container::CreateOptions create_options_from(const ParsedOptions& opts)
{
    container::CreateOptions c;
    c.id = opts.positional.at(0);
    c.bundle = opts.get("bundle", ".");
    c.console_socket = opts.get("console-socket");
    c.pid_file = opts.get("pid-file");
    c.no_pivot = opts.flag("no-pivot");
    c.no_new_keyring = opts.flag("no-new-keyring");
    c.preserve_fds = opts.get_int("preserve-fds", 0);
    c.listen_fds = activation_fds();
    return c;
}

int cmd_create(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, create_options);
    expect_positional(opts, 1, 1, "cerberus create [--bundle DIR] [--console-socket PATH] [--pid-file FILE] ID");
    container::create(rt, create_options_from(opts));
    return 0;
}

int cmd_start(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 1, 1, "cerberus start ID");
    container::start(rt, opts.positional[0]);
    return 0;
}

int cmd_kill(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"all", 'a', false}});
    expect_positional(opts, 1, 2, "cerberus kill [--all] ID [SIGNAL]");
    int signal = opts.positional.size() > 1 ? container::parse_signal(opts.positional[1]) : SIGTERM;
    container::kill(rt, opts.positional[0], signal, opts.flag("all"));
    return 0;
}

int cmd_delete(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {{"force", 'f', false}});
    expect_positional(opts, 1, 1, "cerberus delete [--force] ID");
    container::remove(rt, opts.positional[0], opts.flag("force"));
    return 0;
}

} // namespace cerberus::cli
