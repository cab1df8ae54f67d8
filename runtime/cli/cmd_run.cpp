// SPDX-License-Identifier: Apache-2.0
// run: create + start; in the foreground, wait for the container's init,
// forwarding signals to it, then delete the container and exit with its status.
#include "base/error.hpp"
#include "commands.hpp"
#include "create_flags.hpp"
#include "terminal_proxy.hpp"
#include "wait_process.hpp"

#include <spdlog/spdlog.h>

namespace cerberus::cli {

int cmd_run(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, create_options);
    expect_positional(opts, 1, 1, "cerberus run [--bundle DIR] [--detach] ID");
    container::CreateOptions create = create_options_from(opts);
    // In the foreground without --console-socket, a terminal comes back to us.
    ConsoleChannel console;
    if (create.console_socket.empty() && !opts.flag("detach")) {
        console = make_console_channel();
        create.console_fd = console.container_end.get();
    }
    pid_t init = container::create(rt, create);
    UniqueFd master = console.runtime_end ? receive_master(console.runtime_end.get()) : UniqueFd();
    try {
        container::start(rt, create.id);
    } catch (const Error&) {
        container::remove(rt, create.id, true);
        throw;
    }
    if (opts.flag("detach"))
        return 0;
    int status = master ? proxy_terminal_and_wait(init, master.get()) : wait_forwarding_signals(init);
    if (!opts.flag("keep")) {
        try {
            container::remove(rt, create.id, true);
        } catch (const Error& e) {
            spdlog::warn("{}", e.what());
        }
    }
    return status;
}

} // namespace cerberus::cli
