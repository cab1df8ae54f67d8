// SPDX-License-Identifier: Apache-2.0
// The runtime's own binary must never be reachable, let alone writable, from
// inside a container (CVE-2019-5736): a process that enters a container is
// visible there, and a `#!/proc/self/exe` script makes the kernel run the
// binary of whoever executes it. So the commands that put a process into a
// container first re-execute themselves from a read-only handle on their
// binary, and stay non-dumpable until the container's program replaces them.
#pragma once

#include <string>

namespace cerberus::sealed_exe {

// True when /proc/self/exe is a read-only handle made by reexec_sealed (a
// file on a read-only overlayfs, or a sealed memfd), not the host's file.
bool running_sealed();

// Unless running_sealed(), re-executes the running binary with the same argv
// and environment from a read-only handle: a detached read-only overlayfs over
// the binary's directory (no copy; scratch_dir, which must not contain nor lie
// in that directory, is its second, empty layer), else a sealed memfd copy.
// Does not return on success; throws when no handle can be made.
void reexec_sealed(char** argv, const std::string& scratch_dir);

// Makes this process (and what it forks before execve) non-dumpable: its
// /proc/PID entries, memory and fds are out of reach of the container's
// processes while it still runs the runtime's code with the runtime's rights.
// execve of the container's program sets the flag anew.
void stop_being_dumpable();

} // namespace cerberus::sealed_exe
