// SPDX-License-Identifier: Apache-2.0
// pause, resume and ps: the commands that act on a container's cgroup.
#include "base/error.hpp"
#include "base/fd.hpp"
#include "commands.hpp"
#include "container/container.hpp"
#include "options.hpp"
#include "usage_error.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

namespace cerberus::cli {
namespace {

// Runs `ps ARGS...` and returns what it printed on stdout and stderr.
std::string run_ps(const std::vector<std::string>& args)
{
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0)
        throw_errno("pipe");
    UniqueFd read_end(pipe_fds[0]), write_end(pipe_fds[1]);
    std::vector<char*> argv = {const_cast<char*>("ps")};
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = ::fork();
    if (pid < 0)
        throw_errno("fork ps");
    if (pid == 0) {
        ::dup2(write_end.get(), STDOUT_FILENO);
        ::dup2(write_end.get(), STDERR_FILENO);
        ::execvp("ps", argv.data());
        ::_exit(127);
    }
    write_end.reset();
    std::string output;
    char buffer[4096];
    for (ssize_t n; (n = ::read(read_end.get(), buffer, sizeof buffer)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            throw_errno("reading the output of ps");
        output.append(buffer, n);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        throw Error("ps failed: " + output, ECHILD);
    return output;
}

std::vector<std::string> fields(const std::string& line)
{
    std::istringstream in(line);
    return {std::istream_iterator<std::string>(in), std::istream_iterator<std::string>()};
}

// As runc: ps's header, then the lines whose PID column is one of pids.
void print_table(const std::vector<pid_t>& pids, const std::vector<std::string>& ps_args)
{
    std::istringstream lines(run_ps(ps_args.empty() ? std::vector<std::string>{"-ef"} : ps_args));
    std::string header;
    std::getline(lines, header);
    auto names = fields(header);
    auto pid_column = std::find(names.begin(), names.end(), "PID");
    if (pid_column == names.end())
        throw Error("couldn't find PID field in ps output", EINVAL);
    size_t index = pid_column - names.begin();
    std::printf("%s\n", header.c_str());
    for (std::string line; std::getline(lines, line);) {
        auto values = fields(line);
        if (values.size() <= index)
            continue;
        pid_t pid = static_cast<pid_t>(std::atoi(values[index].c_str()));
        if (std::find(pids.begin(), pids.end(), pid) != pids.end())
            std::printf("%s\n", line.c_str());
    }
}

} // namespace

int cmd_pause(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 1, 1, "cerberus pause ID");
    container::pause(rt, opts.positional[0]);
    return 0;
}

int cmd_resume(const RuntimeOptions& rt, const Args& args)
{
    ParsedOptions opts = parse_options(args, {});
    expect_positional(opts, 1, 1, "cerberus resume ID");
    container::resume(rt, opts.positional[0]);
    return 0;
}

int cmd_ps(const RuntimeOptions& rt, const Args& args)
{
    // Options end at the container id: what follows goes to ps.
    ParsedOptions opts = parse_options(args, {{"format", 'f', true}}, true);
    expect_positional(opts, 1, SIZE_MAX, "cerberus ps [--format table|json] ID [PS OPTIONS...]");
    std::string format = opts.get("format", "table");
    if (format != "table" && format != "json")
        throw UsageError("invalid format option");
    std::vector<pid_t> pids = container::processes(rt, opts.positional[0]);
    if (format == "json") {
        std::printf("%s\n", nlohmann::json(pids).dump().c_str());
        return 0;
    }
    print_table(pids, {opts.positional.begin() + 1, opts.positional.end()});
    return 0;
}

} // namespace cerberus::cli
