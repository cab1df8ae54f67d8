// SPDX-License-Identifier: Apache-2.0
#include "kernel/pin_dir.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

namespace cerberus::kernel {

namespace {

void ensure_mounted(const std::string& dir, const char* type, long magic, const char* data)
{
    struct statfs fs {};
    if (statfs(dir.c_str(), &fs) == 0 && static_cast<long>(fs.f_type) == magic)
        return;
    check(mount(type, dir.c_str(), type, MS_NOSUID | MS_NODEV | MS_NOEXEC, data),
          std::string("mounting ") + type + " at " + dir);
}

std::string parent_dir(const std::string& path)
{
    auto slash = path.find_last_of('/');
    return slash == 0 ? "/" : path.substr(0, slash);
}

// Unpins every pin of a group (what a failed load left).
void remove_group_pins(const std::string& pin_dir, const std::string& prefix)
{
    if (access(pin_dir.c_str(), F_OK) != 0)
        return;
    for (const auto& entry : files::list_dir(pin_dir))
        if (entry.name.rfind(prefix, 0) == 0 && unlink((pin_dir + "/" + entry.name).c_str()) < 0 && errno != ENOENT)
            throw_errno("removing pin " + pin_dir + "/" + entry.name);
}

} // namespace

PinDirLock::PinDirLock(const std::string& pin_dir)
{
    ensure_mounted(parent_dir(CERB_PIN_ROOT), "bpf", BPF_FS_MAGIC, "mode=0700");
    for (const std::string& dir : {std::string(CERB_PIN_ROOT), pin_dir}) {
        if (mkdir(dir.c_str(), 0700) < 0 && errno != EEXIST)
            throw_errno("creating " + dir);
    }
    dir_.reset(open(pin_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!dir_)
        throw_errno("opening " + pin_dir);
    check(flock(dir_.get(), LOCK_EX), "locking " + pin_dir);
}

bool group_pinned(const std::string& group, const std::string& pin_dir)
{
    return access((pin_dir + "/" + group).c_str(), F_OK) == 0;
}

void pin_group(const std::string& group, const std::function<int(const std::string& prefix)>& pin,
               const std::string& pin_dir)
{
    std::string prefix = group + "_";
    remove_group_pins(pin_dir, prefix);
    try {
        int marker = pin(pin_dir + "/" + prefix);
        check(bpf_obj_pin(marker, (pin_dir + "/" + group).c_str()), "pinning " + pin_dir + "/" + group);
    } catch (const Error&) {
        remove_group_pins(pin_dir, prefix);
        throw;
    }
}

} // namespace cerberus::kernel
