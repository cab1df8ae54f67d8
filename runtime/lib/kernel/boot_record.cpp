// SPDX-License-Identifier: Apache-2.0
#include "kernel/boot_record.hpp"

#include "base/error.hpp"
#include "base/files.hpp"

namespace cerberus::kernel {
namespace {

// This boot's id, read once per process: the first line of every record.
const std::string& boot_id()
{
    static const std::string id = [] {
        std::string text = files::read_file_if_exists("/proc/sys/kernel/random/boot_id").value_or("");
        return text.substr(0, text.find('\n'));
    }();
    return id;
}

} // namespace

std::optional<std::string> read_boot_record(const std::string& path)
{
    auto record = files::read_file_if_exists(path);
    if (!record || boot_id().empty())
        return std::nullopt;
    auto newline = record->find('\n');
    if (newline == std::string::npos || record->compare(0, newline, boot_id()) != 0)
        return std::nullopt;
    return record->substr(newline + 1);
}

void write_boot_record(const std::string& path, const std::string& body)
{
    try {
        files::make_dirs(path.substr(0, path.rfind('/')), 0700);
        files::write_file_atomic(path, boot_id() + "\n" + body, 0600);
    } catch (const Error&) {
    }
}

} // namespace cerberus::kernel
