// SPDX-License-Identifier: Apache-2.0
// cerberus-hook: the agent policy for containers that runc or crun run, as
// an OCI hook (docs/engines/oci-hook.md). Podman and CRI-O install it from
// hooks.d (oci-hooks/hooks.d/) for containers with a policy annotation.
//
//   cerberus-hook [--root DIR] [--policy-dir DIR] [--audit-dir DIR] create-runtime|poststop
//
// with the container's OCI state on stdin. An error is one line on stderr and
// exit status 1, which makes the runtime refuse the container.
#include "audit/audit_collector.hpp"
#include "base/error.hpp"
#include "hook_stages.hpp"
#include "policy/observed_calls.hpp"

#include <cstdio>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

using namespace cerberus;

namespace {

constexpr const char* usage =
    "usage: cerberus-hook [--root DIR] [--policy-dir DIR] [--audit-dir DIR] create-runtime|poststop\n"
    "       (the OCI state on stdin; --root defaults to /run/cerberus-hook)\n";

struct Invocation {
    RuntimeOptions rt;
    std::string stage;
};

Invocation parse_args(const std::vector<std::string>& args)
{
    Invocation call;
    call.rt.root = "/run/cerberus-hook";
    for (size_t i = 0; i < args.size(); ++i) {
        std::string* value = args[i] == "--root"         ? &call.rt.root
                             : args[i] == "--policy-dir" ? &call.rt.policy_dir
                             : args[i] == "--audit-dir"  ? &call.rt.audit_dir
                                                         : nullptr;
        if (value && i + 1 < args.size())
            *value = args[++i];
        else if (call.stage.empty() && (args[i] == "create-runtime" || args[i] == "poststop"))
            call.stage = args[i];
        else
            throw Error("unexpected argument \"" + args[i] + "\"\n" + usage, EINVAL);
    }
    if (call.stage.empty())
        throw Error(std::string("no stage given\n") + usage, EINVAL);
    return call;
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<std::string> args(argv + 1, argv + argc);
    // The audit collector is started as /proc/self/exe audit-collector (audit.hpp).
    if (args.size() == 1 && args[0] == "audit-collector") {
        policy::CallJudge judge;
        return audit::run_collector(std::ref(judge));
    }
    try {
        Invocation call = parse_args(args);
        std::string input(std::istreambuf_iterator<char>(std::cin), {});
        hook::ContainerState state = hook::parse_state(input);
        if (call.stage == "create-runtime")
            hook::police(call.rt, state);
        else
            hook::release(call.rt, state);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "cerberus-hook: %s\n", e.what());
        return 1;
    }
}
