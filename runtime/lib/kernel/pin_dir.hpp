// SPDX-License-Identifier: Apache-2.0
// The pin directory on bpffs, where programs are kept verified across
// runtimes: locked while a group of programs loads, and each group pinned
// all at once, so that finding a group's marker means all of it is there.
#pragma once

#include "base/fd.hpp"
#include "kernel/pinned_maps.hpp"

#include <functional>
#include <string>

namespace cerberus::kernel {

// The pin directory (bpffs mounted, CERB_PIN_ROOT and the directory made when
// missing), flocked until destroyed: concurrent loaders load each group once.
class PinDirLock {
public:
    explicit PinDirLock(const std::string& pin_dir = CERB_PIN_DIR);

private:
    UniqueFd dir_;
};

// True when the program group <pin_dir>/<group> is pinned: loaded and, for
// programs that attach once per host, attached.
bool group_pinned(const std::string& group, const std::string& pin_dir = CERB_PIN_DIR);

// Pins a group all at once (bpffs may refuse directories): pin(prefix) pins
// each object as <pin_dir>/<group>_<name> and returns one of them, pinned
// again as <pin_dir>/<group> only when every pin succeeded; on failure every
// pin of the group goes. Under PinDirLock.
void pin_group(const std::string& group, const std::function<int(const std::string& prefix)>& pin,
               const std::string& pin_dir = CERB_PIN_DIR);

} // namespace cerberus::kernel
